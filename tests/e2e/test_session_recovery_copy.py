"""End to end: the recovery copy written when a resumed session's file cannot be written is a session of its own
(new id, `recoveredFrom`), so listing and resolving by id stay unambiguous; a plain copy with the same id
(an older recovery file, `cp`) does not make the id ambiguous either (round 5)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", "--session-dir", str(cwd / "sessions"), *args],
                          cwd=cwd, env=env, input=b"", capture_output=True, timeout=60)


def header(path: Path) -> dict:
    return json.loads(path.read_text().splitlines()[0])


@pytest.fixture
def project(tmp_path):
    directory = tmp_path / "proj"
    directory.mkdir()
    return directory


@pytest.fixture
def disk_project():
    """A project directory in the system temp dir, not under `tmp_path`: the tests' temporary directories may be
    on tmpfs (tests/conftest.py), where `chattr +i` does not stop writes through a descriptor opened before it."""
    directory = Path(tempfile.mkdtemp(prefix="agent-forge-test-")) / "proj"
    directory.mkdir()
    yield directory
    shutil.rmtree(directory.parent, ignore_errors=True)


def first_session(env, project, fake_llm) -> Path:
    fake_llm.set_script([{"text": "first answer"}, {"text": "second answer"}, {"text": "third answer"},
                         {"text": "fourth answer"}])
    assert run(env, project, "-p", "first").returncode == 0
    [path] = (project / "sessions").rglob("*.jsonl")
    return path


def test_a_recovery_copy_gets_its_own_id_and_is_listed_and_resolved_apart(agent_env, fake_llm, project):
    original = first_session(agent_env, project, fake_llm)
    original_id = header(original)["id"]
    if subprocess.run(["chattr", "+i", str(original)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        resumed = run(agent_env, project, "--session", str(original), "-p", "second")
    finally:
        subprocess.run(["chattr", "-i", str(original)], capture_output=True)
    assert resumed.returncode == 1 and resumed.stdout == b"second answer\n"
    [copy] = original.parent.glob("*.recovered-*.jsonl")
    copied = header(copy)
    assert copied["id"] != original_id and copied["recoveredFrom"] == original_id
    assert copied["parentSession"] == str(original)
    assert f"the whole session is saved to {copy} as session {copied['id']}".encode() in resumed.stderr

    listing = json.loads(run(agent_env, project, "--list-sessions", "--json").stdout)
    assert sorted(item["id"] for item in listing) == sorted([original_id, copied["id"]])
    assert {item["id"]: item["recoveredFrom"] for item in listing} == {original_id: None,
                                                                      copied["id"]: original_id}
    text = run(agent_env, project, "--list-sessions").stdout.decode()
    assert f"(recovered copy of {original_id[:8]})" in text

    by_id = run(agent_env, project, "--session", original_id, "-p", "third")
    assert by_id.returncode == 0 and b"ambiguous" not in by_id.stderr, by_id.stderr
    assert b'"third"' in original.read_bytes()  # the original, not its copy, took the prompt
    continued = run(agent_env, project, "-c", "--mode", "json", "-p", "fourth")
    # the copy was written last of the two before "third"; now the original is newer: -c takes it, quietly
    assert continued.returncode == 0 and b"recovery copy" not in continued.stderr, continued.stderr
    assert b'"fourth"' in original.read_bytes()


def test_continue_says_when_it_picks_a_recovery_copy(agent_env, fake_llm, project):
    original = first_session(agent_env, project, fake_llm)
    if subprocess.run(["chattr", "+i", str(original)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        run(agent_env, project, "--session", str(original), "-p", "second")
    finally:
        subprocess.run(["chattr", "-i", str(original)], capture_output=True)
    [copy] = original.parent.glob("*.recovered-*.jsonl")
    continued = run(agent_env, project, "-c", "-p", "third")
    assert continued.returncode == 0, continued.stderr
    assert (f"continuing session {header(copy)['id']} ({copy}), the recovery copy of session "
            f"{header(original)['id']}").encode() in continued.stderr
    assert b'"third"' in copy.read_bytes()


def test_a_copy_with_the_same_id_leaves_the_id_naming_the_file_named_after_it(agent_env, fake_llm, project):
    original = first_session(agent_env, project, fake_llm)
    session_id = header(original)["id"]
    copy = original.with_name(original.name + ".recovered-20261202T055203Z.jsonl")  # as older versions named it
    shutil.copy(original, copy)
    for reference in (session_id, session_id[:8]):
        result = run(agent_env, project, "--session", reference, "-p", "second")
        assert result.returncode == 0, result.stderr
        assert (f"session {session_id} is also the header of {copy}; opening {original}").encode() in result.stderr
    assert original.read_bytes().count(b'"second"') == 2 and b'"second"' not in copy.read_bytes()
    listed = run(agent_env, project, "--list-sessions").stdout.decode().splitlines()
    assert sorted(line.rsplit("  ", 1)[1] for line in listed) == sorted([f"({original.name})", f"({copy.name})"])


async def test_a_recovery_copy_in_the_temp_dir_resumes_with_the_command_the_message_gives(agent_env, fake_llm,
                                                                                          disk_project):
    """The session directory cannot take the copy either (made immutable once the session runs): it goes to the
    temp dir, among no directory's sessions, so the message names the path to resume it by, and that works."""
    from agent_forge.modes.rpc.client import RpcClient

    project = disk_project
    original = first_session(agent_env, project, fake_llm)
    locked = [str(original), str(original.parent)]
    client = await RpcClient.start(["--session-dir", str(project / "sessions"), "--session", str(original)],
                                   cwd=str(project), env=agent_env)
    try:
        await client.send({"type": "set_session_name", "name": "named"})  # written: the file is locked and open
        if subprocess.run(["chattr", "+i", *locked], capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not available here")
        await client.prompt_and_wait("second")
    finally:
        await client.close()
        subprocess.run(["chattr", "-i", *locked], capture_output=True)
    [copy] = Path(agent_env["TMPDIR"]).glob("*.recovered-*.jsonl")
    line = next(line for line in client.stderr.decode().splitlines() if "the whole session is saved" in line)
    assert line.endswith(f"the whole session is saved to {copy} as session {header(copy)['id']}; resume it with "
                         f"--session {copy}"), line
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    again = run(agent_env, elsewhere, "--session", line.rsplit("--session ", 1)[1], "-p", "third")
    assert again.returncode == 0 and again.stdout == b"third answer\n", again.stderr
    assert b'"second"' in copy.read_bytes() and b'"third"' in copy.read_bytes()
