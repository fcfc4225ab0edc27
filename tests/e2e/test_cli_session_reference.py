"""End to end: `--session NAME` / `--fork NAME` where `./NAME` is an unrelated file still finds the session with
that id (round-3 findings, issue 10), and a file that is a session file still wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_forge.coding.session.store import session_cwd_dir
from agent_forge.modes.rpc.client import RpcClient
from e2e.test_cli_sessions import cli, texts, write_session


@pytest.fixture
def notes_session(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(project with an unrelated `notes` file, session dir, the file of the session whose id is `notes`)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes").write_text("buy milk\n")
    root = tmp_path / "sessions"
    path = write_session(session_cwd_dir(project, root), "notes", ["noted question", "noted answer"],
                         mtime=1_000_000, cwd=str(project))
    return project, root, path


async def open_with(env, project: Path, *args: str) -> tuple[dict, list[dict], str]:
    async with await RpcClient.start(list(args), cwd=str(project), env=env) as client:
        state = (await client.send({"type": "get_state"}))["data"]
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    return state, messages, client.stderr.decode()


@pytest.mark.parametrize("flag", ["--session", "--fork"])
async def test_a_bare_name_of_an_unrelated_file_opens_the_session_of_that_id(agent_env, notes_session, flag):
    project, root, path = notes_session
    state, messages, stderr = await open_with(agent_env, project, flag, "notes", "--session-dir", str(root))
    assert texts(messages) == ["noted question", "noted answer"]
    assert (state["sessionId"] == "notes") is (flag == "--session")
    assert (f"agent-forge: notes in the current directory is not a session file; opening session notes "
            f"({path})\n") in stderr
    assert (project / "notes").read_text() == "buy milk\n"


async def test_a_session_file_of_that_name_still_wins(agent_env, notes_session):
    project, root, path = notes_session
    (project / "notes").write_bytes(path.read_bytes().replace(b"noted question", b"local question"))
    state, messages, stderr = await open_with(agent_env, project, "--session", "notes", "--session-dir", str(root))
    assert texts(messages) == ["local question", "noted answer"]
    assert "not a session file" not in stderr


def test_an_unrelated_file_without_such_a_session_is_refused_as_before(agent_env, tmp_path):
    (tmp_path / "notes").write_text("buy milk\n")
    result = cli(agent_env, tmp_path, "--session", "notes", "-p", "x", "--session-dir", str(tmp_path / "none"))
    assert result.returncode == 1
    assert f"session file {tmp_path / 'notes'}: it has no valid session header".encode() in result.stderr
