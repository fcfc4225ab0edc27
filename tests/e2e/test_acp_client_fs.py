"""End to end: with the client's `fs.readTextFile` / `fs.writeTextFile`, read, write and edit go through the
editor (`fs/read_text_file`, `fs/write_text_file`): unsaved buffers are seen, edits land in the editor, the
disk is left to it. Images stay local. Without the capabilities the disk is used (test_acp_tools.py)."""

from __future__ import annotations

import json

import pytest

from support.acp_client import AcpClient


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c63f8cf00000301010018dd8db00000000049454e44ae426082")


def tool_texts(request: dict) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
            for m in request["body"]["messages"] if m["role"] == "tool"]


async def test_read_write_and_edit_use_the_editors_buffers(agent_env, project, fake_llm):
    (project / "a.txt").write_text("saved text\n")
    (project / "pic.png").write_bytes(PNG)
    buffers = {str(project / "a.txt"): "unsaved text\n"}
    fake_llm.set_script([
        {"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "a.txt"}}]},
        {"tool_calls": [{"id": "e1", "name": "edit", "arguments": {
            "path": "a.txt", "edits": [{"oldText": "unsaved", "newText": "edited"}]}}]},
        {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "new.txt", "content": "fresh\n"}}]},
        {"tool_calls": [{"id": "p1", "name": "read", "arguments": {"path": "pic.png"}}]},
        {"text": "done"},
    ])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    asked: list[tuple[str, str]] = []

    def read(params):
        asked.append(("read", params["path"]))
        return {"content": buffers[params["path"]]}

    def write(params):
        asked.append(("write", params["path"]))
        buffers[params["path"]] = params["content"]
        return {}

    client.on_request.update({"fs/read_text_file": read, "fs/write_text_file": write})
    await client.initialize(fs={"readTextFile": True, "writeTextFile": True})
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    a, new = str(project / "a.txt"), str(project / "new.txt")
    # read, then edit: its read and its check just before writing; the PNG was read from the disk
    assert asked == [("read", a), ("read", a), ("read", a), ("write", a), ("write", new)]
    assert buffers == {a: "edited text\n", new: "fresh\n"}
    assert (project / "a.txt").read_text() == "saved text\n" and not (project / "new.txt").exists()
    assert "unsaved text" in tool_texts(fake_llm.requests[1])[0]
    picture = [u for u in client.updates(session_id, "tool_call_update") if u["toolCallId"] == "p1"][-1]
    assert picture["status"] == "completed" and picture["content"][-1]["content"]["type"] == "image"
    edit_done = [u for u in client.updates(session_id, "tool_call_update") if u["toolCallId"] == "e1"][-1]
    assert edit_done["status"] == "completed"
    assert edit_done["content"] == [{"type": "diff", "path": a, "oldText": "unsaved", "newText": "edited"}]
    assert await client.close() == 0


async def test_a_write_the_editor_refuses_fails_the_call_with_its_reason(agent_env, project, fake_llm):
    fake_llm.set_script([
        {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "x.txt", "content": "y"}}]},
        {"text": "ok"},
    ])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize(fs={"readTextFile": False, "writeTextFile": True})  # fs/write_text_file: -32601
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    done = [u for u in client.updates(session_id, "tool_call_update") if u["toolCallId"] == "w1"][-1]
    assert done["status"] == "failed" and "The editor could not write" in json.dumps(done["content"])
    assert "not offered by the test" in tool_texts(fake_llm.requests[1])[0]
    assert not (project / "x.txt").exists()
    assert await client.close() == 0
