"""End to end: valid JSON lines that are bad entries (an id used twice, a message of unusable shape) are named in
the same start-up warning as damaged lines, by line (round-3 findings, issue 10; docs/rpc.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient
from e2e.test_cli_sessions import write_session


def seven_lines(tmp_path: Path) -> Path:
    """header, model_change, q1, a1, q2, a2, q3 (ids e0000001.. on lines 3..7)."""
    return write_session(tmp_path / "s", "dddd0000-0000-4000-8000-000000000001", ["q1", "a1", "q2", "a2", "q3"],
                         mtime=1_000_000, cwd=str(tmp_path))


def edit_message(path: Path, number: int, **fields) -> None:
    lines = path.read_text().splitlines()
    entry = json.loads(lines[number - 1])
    entry["message"].update(fields)
    lines[number - 1] = json.dumps(entry)
    path.write_text("\n".join(lines) + "\n")


async def texts_and_stderr(env, cwd, path: Path) -> tuple[list[str], str]:
    async with await RpcClient.start(["--session", str(path)], cwd=str(cwd), env=env) as client:
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    return [m["content"][0]["text"] for m in messages], client.stderr.decode()


async def test_a_repeated_id_keeps_the_first_entry_and_is_named(agent_env, tmp_path):
    path = seven_lines(tmp_path)
    first = json.loads(path.read_text().splitlines()[2])
    with path.open("a") as handle:  # line 8: the id of line 3 again, another text
        handle.write(json.dumps({**first, "message": {**first["message"], "content": "impostor"}}) + "\n")
    texts, stderr = await texts_and_stderr(agent_env, tmp_path, path)
    assert texts == ["q1", "a1", "q2", "a2", "q3"]
    assert (f"Warning: session file {path}: skipped 1 damaged line ({path}:8); {path}:8 repeats an earlier "
            f"entry's id (the first is kept)\n") in stderr


async def test_messages_of_unusable_shape_are_counted_with_their_lines(agent_env, tmp_path):
    path = seven_lines(tmp_path)
    edit_message(path, 5, content=5)
    edit_message(path, 6, role="wizard")
    texts, stderr = await texts_and_stderr(agent_env, tmp_path, path)
    assert texts == ["q1", "a1", "q3"]
    assert (f"Warning: session file {path}: skipped 2 damaged lines ({path}:5, {path}:6); {path}:5, {path}:6 "
            f"hold messages of unusable shape (left out of the model's context)\n") in stderr


async def test_every_kind_in_one_warning(agent_env, tmp_path):
    path = seven_lines(tmp_path)
    edit_message(path, 4, role="wizard")
    lines = path.read_text().splitlines()
    lines[5] = '{"type": "message", "id": "e00'  # line 6: not JSON
    lines.append(lines[2])  # line 8: repeats line 3
    path.write_text("\n".join(lines) + "\n")
    _, stderr = await texts_and_stderr(agent_env, tmp_path, path)
    assert (f"skipped 3 damaged lines ({path}:4, {path}:6, {path}:8); {path}:8 repeats an earlier entry's id (the "
            f"first is kept); {path}:4 holds a message of unusable shape (left out of the model's context); the "
            f"entries after a skipped line continue from the entry before it\n") in stderr


async def test_a_sound_file_opens_without_a_warning(agent_env, tmp_path):
    path = seven_lines(tmp_path)
    texts, stderr = await texts_and_stderr(agent_env, tmp_path, path)
    assert texts == ["q1", "a1", "q2", "a2", "q3"] and "damaged" not in stderr


async def test_settings_of_the_wrong_type_are_named_too(agent_env, tmp_path):
    path = seven_lines(tmp_path)
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"provider": "fake"', '"provider": 5')  # line 2: the model_change
    lines.append('{"type": "thinking_level_change", "id": "f0000001", "parentId": "e0000005", '
                 '"timestamp": "2026-01-01T00:00:03.000Z", "thinkingLevel": ["high"]}')
    path.write_text("\n".join(lines) + "\n")
    texts, stderr = await texts_and_stderr(agent_env, tmp_path, path)
    assert texts == ["q1", "a1", "q2", "a2", "q3"]
    assert (f"skipped 2 damaged lines ({path}:2, {path}:8); {path}:2, {path}:8 record settings of the wrong type "
            f"(ignored)\n") in stderr


async def test_a_branch_starting_with_the_assistant_still_sends_the_user_first(agent_env, fake_llm, tmp_path):
    """The first user message's line is gone (hand-edited or damaged): the branch starts with the assistant's
    answer to it. The model still gets a conversation that starts with the user, with nothing else lost."""
    path = seven_lines(tmp_path)
    lines = path.read_text().splitlines()
    del lines[2]  # q1: a1's parent is now missing, so a1 is linked to the model change before it
    path.write_text("\n".join(lines) + "\n")
    fake_llm.set_script([{"text": "fine"}])
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("q4", timeout=20)
    sent = [m for m in fake_llm.requests[0]["body"]["messages"] if m["role"] != "system"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user", "user"]
    assert "start of this conversation is missing" in json.dumps(sent[0])
    assert "a1" in json.dumps(sent[1]) and "q4" in json.dumps(sent[-1])


@pytest.mark.parametrize("summary", [{"summary": None}, {}, {"summary": " "}, {"summary": 5}])
async def test_a_compaction_without_a_summary_text_cuts_nothing(agent_env, tmp_path, summary):
    """Left out as the warning says: the entries before it stay in the context (cutting there would lose what
    its missing summary stood for). A compaction never writes one."""
    path = seven_lines(tmp_path)
    with path.open("a") as handle:  # line 8: keeps only from q2 on, with no usable summary
        handle.write(json.dumps({"type": "compaction", "id": "f0000001", "parentId": "e0000005",
                                 "timestamp": "2026-01-01T00:00:03.000Z", **summary,
                                 "firstKeptEntryId": "e0000003", "tokensBefore": 10}) + "\n")
    texts, stderr = await texts_and_stderr(agent_env, tmp_path, path)
    assert texts == ["q1", "a1", "q2", "a2", "q3"]
    assert f"{path}:8 has no summary text (left out of the model's context)" in stderr
