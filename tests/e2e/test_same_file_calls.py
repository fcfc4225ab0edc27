"""End to end: tool calls of one assistant message that change one file. They run at once, but `edit` and
`write` of one file apply one after another in call order (`coding/tools/file_queue.py`), whatever name the
file goes by; and `edit` re-reads the file just before writing, so a change another writer made meanwhile (a
`bash` `sed -i` of the same message, the user in the editor) is kept or the edit fails, never lost."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from support.acp_client import AcpClient

START = "AAA\nBBB\nCCC\n"


def edit(path: str, old: str, new: str) -> dict:
    return {"name": "edit", "arguments": {"path": path, "edits": [{"oldText": old, "newText": new}]}}


def run_json(env, cwd) -> list[dict]:
    """The `tool_execution_end` events of a json-mode run of the fake model's script."""
    done = subprocess.run([sys.executable, "-m", "agent_forge", "--mode", "json", "--no-session", "-p", "go"],
                          cwd=cwd, env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    return [e for e in events if e["type"] == "tool_execution_end"]


def texts(ends: list[dict]) -> dict[str, str]:
    return {e["toolCallId"]: e["result"]["content"][0]["text"] for e in ends if not e["isError"]}


def test_two_edits_of_one_file_both_land(agent_env, fake_llm, project):
    (project / "par.txt").write_text(START)
    fake_llm.set_script([{"tool_calls": [{"id": "e1", **edit("par.txt", "AAA", "aaa")},
                                         {"id": "e2", **edit("par.txt", "CCC", "ccc")}]}, {"text": "done"}])
    ends = run_json(agent_env, project)
    assert texts(ends) == {"e1": "Successfully replaced 1 block in par.txt.",
                           "e2": "Successfully replaced 1 block in par.txt."}
    assert (project / "par.txt").read_text() == "aaa\nBBB\nccc\n"


def test_edits_of_one_file_through_two_hard_links_all_land(agent_env, fake_llm, project):
    (project / "a.txt").write_text("one two three four\n")
    (project / "b.txt").hardlink_to(project / "a.txt")
    calls = [edit("a.txt", "one", "ONE"), edit("b.txt", "two", "TWO"), edit("a.txt", "three", "THREE"),
             edit("b.txt", "four", "FOUR")]
    fake_llm.set_script([{"tool_calls": [{"id": f"e{i}", **call} for i, call in enumerate(calls)]}, {"text": "done"}])
    ends = run_json(agent_env, project)
    assert len(texts(ends)) == 4
    assert (project / "a.txt").read_text() == "ONE TWO THREE FOUR\n" and (project / "b.txt").stat().st_nlink == 2


def test_a_write_after_an_edit_of_its_file_wins(agent_env, fake_llm, project):
    (project / "par.txt").write_text(START)
    fake_llm.set_script([{"tool_calls": [{"id": "e1", **edit("par.txt", "AAA", "aaa")},
                                         {"id": "w1", "name": "write",
                                          "arguments": {"path": "par.txt", "content": "new\n"}}]},
                         {"text": "done"}])
    ends = run_json(agent_env, project)
    assert set(texts(ends)) == {"e1", "w1"}
    assert (project / "par.txt").read_text() == "new\n"


def test_an_edit_after_a_write_edits_what_was_written(agent_env, fake_llm, project):
    (project / "par.txt").write_text(START)
    fake_llm.set_script([{"tool_calls": [{"id": "w1", "name": "write",
                                          "arguments": {"path": "par.txt", "content": "one\ntwo\n"}},
                                         {"id": "e1", **edit("par.txt", "two", "TWO")}]},
                         {"text": "done"}])
    ends = run_json(agent_env, project)
    assert set(texts(ends)) == {"w1", "e1"}, ends
    assert (project / "par.txt").read_text() == "one\nTWO\n"


def test_a_symlink_and_its_target_are_one_file(agent_env, fake_llm, project):
    (project / "par.txt").write_text(START)
    (project / "link.txt").symlink_to("par.txt")
    fake_llm.set_script([{"tool_calls": [{"id": "e1", **edit("link.txt", "AAA", "aaa")},
                                         {"id": "e2", **edit("./par.txt", "BBB", "bbb")},
                                         {"id": "e3", **edit(str(project / "par.txt"), "CCC", "ccc")}]},
                         {"text": "done"}])
    ends = run_json(agent_env, project)
    assert set(texts(ends)) == {"e1", "e2", "e3"}
    assert (project / "par.txt").read_text() == "aaa\nbbb\nccc\n"
    assert (project / "link.txt").is_symlink()


# -- an edit racing a bash `sed -i` of the same message -------------------------------------------------------
# The editor (the ACP test client) serves the disk's text and saves what the agent writes. It holds the bash
# call's approval until the edit has read the file, and answers the edit's later requests only once bash has
# finished: so the `sed -i` lands, every time, between the edit's read and its write.


async def race(env, project) -> tuple[AcpClient, dict[str, dict]]:
    """Run the script in ACP mode as above; (the client, each call's last `tool_call_update`)."""
    (project / "par.txt").write_text(START)
    client = await AcpClient.start([], cwd=str(project), env=env)
    first_read = asyncio.Event()

    def finished(call_id: str) -> bool:
        return any(u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")
                   for u in client.updates(kind="tool_call_update"))

    async def read(params):
        if first_read.is_set():
            await client.wait_for(lambda: finished("b1"))
        first_read.set()
        with open(params["path"]) as f:
            return {"content": f.read()}

    async def write(params):
        await client.wait_for(lambda: finished("b1"))
        with open(params["path"], "w") as f:
            f.write(params["content"])
        return {}

    async def approve(params):
        if params["toolCall"]["toolCallId"] == "b1":
            await first_read.wait()
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    client.on_request.update({"fs/read_text_file": read, "fs/write_text_file": write,
                              "session/request_permission": approve})
    await client.initialize(fs={"readTextFile": True, "writeTextFile": True})
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    ends = {u["toolCallId"]: u for u in client.updates(session_id, "tool_call_update")
            if u.get("status") in ("completed", "failed")}
    return client, ends


async def test_a_sed_between_the_edits_read_and_write_is_kept(agent_env, fake_llm, project):
    fake_llm.set_script([{"tool_calls": [{"id": "e1", **edit("par.txt", "AAA", "aaa")},
                                         {"id": "b1", "name": "bash",
                                          "arguments": {"command": "sed -i s/CCC/ccc/ par.txt"}}]},
                         {"text": "done"}])
    client, ends = await race(agent_env, project)
    assert (ends["e1"]["status"], ends["b1"]["status"]) == ("completed", "completed")
    assert (project / "par.txt").read_text() == "aaa\nBBB\nccc\n"
    assert len(client.requests("fs/read_text_file")) == 2  # the read, and the check just before the write
    [result] = [m for m in fake_llm.requests[1]["body"]["messages"] if m.get("tool_call_id") == "e1"]
    assert "changed while it was being edited" in json.dumps(result["content"])
    assert await client.close() == 0


async def test_an_edit_whose_text_a_sed_changed_fails_and_writes_nothing(agent_env, fake_llm, project):
    fake_llm.set_script([{"tool_calls": [{"id": "e1", **edit("par.txt", "AAA", "aaa")},
                                         {"id": "b1", "name": "bash",
                                          "arguments": {"command": "sed -i s/AAA/xyz/ par.txt"}}]},
                         {"text": "done"}])
    client, ends = await race(agent_env, project)
    assert (ends["e1"]["status"], ends["b1"]["status"]) == ("failed", "completed")
    assert (project / "par.txt").read_text() == "xyz\nBBB\nCCC\n"
    assert client.requests("fs/write_text_file") == []
    [result] = [m for m in fake_llm.requests[1]["body"]["messages"] if m.get("tool_call_id") == "e1"]
    message = json.dumps(result["content"])
    assert "par.txt changed while it was being edited" in message and "Nothing was written" in message
    assert await client.close() == 0
