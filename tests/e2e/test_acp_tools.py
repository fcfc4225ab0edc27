"""End to end: tool calls over ACP (`tool_call` / `tool_call_update`): kinds, titles, locations, diffs for
write/edit, bash output, statuses pending -> in_progress -> completed/failed, and cancel mid-tool."""

from __future__ import annotations

import asyncio
import json

from support.acp_client import AcpClient
from support.doubles import group_alive


async def ready(agent_env, project) -> tuple[AcpClient, str]:
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    return client, await client.new_session(str(project))


def calls(client: AcpClient, session_id: str) -> dict[str, list[dict]]:
    """toolCallId -> its `tool_call` and `tool_call_update`s, in order."""
    found: dict[str, list[dict]] = {}
    for update in client.updates(session_id):
        if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
            found.setdefault(update["toolCallId"], []).append(update)
    return found


async def test_write_edit_and_bash_show_diffs_output_and_statuses(agent_env, project, fake_llm):
    (project / "b.txt").write_text("alpha\nbeta\ngamma\n")
    fake_llm.set_script([
        {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "a.txt", "content": "hello\n"}}]},
        {"tool_calls": [{"id": "e1", "name": "edit", "arguments": {
            "path": "b.txt", "edits": [{"oldText": "gamma", "newText": "GAMMA"}]}}]},
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo out; exit 3"}}]},
        {"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "b.txt", "offset": 2}}]},
        {"text": "Done."},
    ])
    client, session_id = await ready(agent_env, project)
    assert await client.prompt(session_id, "work") == {"stopReason": "end_turn"}
    found = calls(client, session_id)
    assert list(found) == ["w1", "e1", "b1", "r1"]
    for updates in found.values():  # announced once, then in_progress, then the outcome
        assert updates[0]["sessionUpdate"] == "tool_call" and updates[0]["status"] == "pending"
        statuses = [u["status"] for u in updates[1:] if u.get("status")]
        assert statuses[0] == "in_progress" and len(statuses) == 2
    write, edit, bash, read = (found[i] for i in ("w1", "e1", "b1", "r1"))
    a_path, b_path = str(project / "a.txt"), str(project / "b.txt")
    assert (write[0]["kind"], write[0]["title"], write[0]["locations"]) == ("edit", "Write a.txt", [{"path": a_path}])
    assert write[0]["content"] == [{"type": "diff", "path": a_path, "oldText": None, "newText": "hello\n"}]
    assert write[-1]["status"] == "completed"
    assert write[-1]["content"] == [{"type": "diff", "path": a_path, "oldText": None, "newText": "hello\n"}]
    assert edit[0]["content"] == [{"type": "diff", "path": b_path, "oldText": "gamma", "newText": "GAMMA"}]
    assert edit[-1]["content"] == [{"type": "diff", "path": b_path, "oldText": "alpha\nbeta\ngamma\n",
                                     "newText": "alpha\nbeta\nGAMMA\n"}]
    assert edit[-1]["locations"] == [{"path": b_path, "line": 3}]
    assert (bash[0]["kind"], bash[0]["title"]) == ("execute", "echo out; exit 3")
    assert bash[-1]["status"] == "failed"
    [output] = bash[-1]["content"]
    assert output["type"] == "content" and output["content"]["text"].startswith("```\nout\n")
    assert "exited with code 3" in output["content"]["text"]
    assert (read[0]["kind"], read[0]["locations"]) == ("read", [{"path": b_path, "line": 2}])
    assert read[-1]["status"] == "completed" and "beta" in read[-1]["content"][0]["content"]["text"]
    assert await client.close() == 0



async def test_calls_changing_one_file_in_one_turn_each_show_their_own_step(agent_env, project, fake_llm):
    """Their diffs are read when each call's turn comes (`witness.py`): they were all taken when the turn began,
    so the second edit showed the file before the first, and an edit of a file the turn's write made showed
    the file as new."""
    (project / "e.txt").write_text("b\n")
    fake_llm.set_script([
        {"tool_calls": [
            {"id": "e1", "name": "edit", "arguments": {"path": "e.txt", "edits": [{"oldText": "b", "newText": "c"}]}},
            {"id": "e2", "name": "edit", "arguments": {"path": "e.txt", "edits": [{"oldText": "c", "newText": "d"}]}},
            {"id": "w1", "name": "write", "arguments": {"path": "n.txt", "content": "x\n"}},
            {"id": "e3", "name": "edit", "arguments": {"path": "n.txt", "edits": [{"oldText": "x", "newText": "y"}]}},
        ]},
        {"text": "Done."},
    ])
    client, session_id = await ready(agent_env, project)
    assert await client.prompt(session_id, "work") == {"stopReason": "end_turn"}
    found = calls(client, session_id)
    e_path, n_path = str(project / "e.txt"), str(project / "n.txt")
    shown = {call: (updates[-1]["status"], updates[-1]["content"]) for call, updates in found.items()}
    assert shown == {
        "e1": ("completed", [{"type": "diff", "path": e_path, "oldText": "b\n", "newText": "c\n"}]),
        "e2": ("completed", [{"type": "diff", "path": e_path, "oldText": "c\n", "newText": "d\n"}]),
        "w1": ("completed", [{"type": "diff", "path": n_path, "oldText": None, "newText": "x\n"}]),
        "e3": ("completed", [{"type": "diff", "path": n_path, "oldText": "x\n", "newText": "y\n"}]),
    }
    assert (project / "e.txt").read_text() == "d\n" and (project / "n.txt").read_text() == "y\n"
    assert await client.close() == 0


async def test_bash_output_streams_into_its_call_while_it_runs(agent_env, project, fake_llm, gate):
    fake_llm.set_script([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": f"echo first; {gate.wait}; echo second"}}]},
        {"text": "ok"},
    ])
    client, session_id = await ready(agent_env, project)
    reply = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]})

    def streamed() -> bool:
        return any("first" in str(u.get("content")) for u in calls(client, session_id).get("b1", [])[1:])

    await client.wait_for(streamed)
    gate.open()
    assert await reply == {"stopReason": "end_turn"}
    assert "second" in calls(client, session_id)["b1"][-1]["content"][0]["content"]["text"]
    assert await client.close() == 0


async def test_cancel_mid_tool_kills_the_command_and_answers_cancelled(agent_env, project, fake_llm, pid_fifo):
    command = f"echo $$ > {pid_fifo.path}; (sleep 60; echo late) & sleep 60"
    fake_llm.set_script([{"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": command}}]},
                         {"text": "never"}])
    client, session_id = await ready(agent_env, project)
    reply = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]})
    pgid = await pid_fifo.pid()  # the shell leads the command's process group
    assert group_alive(pgid)
    client.notify("session/cancel", {"sessionId": session_id})
    assert await asyncio.wait_for(reply, 1.0) == {"stopReason": "cancelled"}
    assert not group_alive(pgid)  # gone by the time the turn is over
    assert calls(client, session_id)["b1"][-1]["status"] == "failed"
    assert len(fake_llm.requests) == 1  # nothing more was asked of the model
    assert await client.close() == 0


async def test_a_call_announced_before_a_cancel_ends_failed(agent_env_factory, project, fake_llm):
    # Anthropic events: message_start, ping, then the first call's block start, delta, stop (its toolcall_end)
    fake_llm.set_script([{"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "a", "content": "x"}},
                                         {"id": "w2", "name": "write", "arguments": {"path": "b", "content": "y"}}],
                          "hang_after": 5}])
    client, session_id = await ready(agent_env_factory(api="anthropic-messages"), project)
    reply = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]})
    await client.wait_for(lambda: calls(client, session_id).get("w1"))
    client.notify("session/cancel", {"sessionId": session_id})
    assert await asyncio.wait_for(reply, 1.0) == {"stopReason": "cancelled"}
    assert [u.get("status") for u in calls(client, session_id)["w1"]] == ["pending", "failed"]
    assert not (project / "a").exists()
    assert await client.close() == 0


async def test_a_prompt_sent_after_a_cancel_runs(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "one two three", "hang_after": 3}, {"text": "fresh answer"}])
    client, session_id = await ready(agent_env, project)
    first = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "a"}]})
    await client.wait_for(lambda: client.updates(session_id, "agent_message_chunk"))
    client.notify("session/cancel", {"sessionId": session_id})
    second = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "b"}]})
    assert await asyncio.wait_for(first, 1.0) == {"stopReason": "cancelled"}
    assert await second == {"stopReason": "end_turn"}
    assert "fresh answer" in "".join(u["content"]["text"] for u in client.updates(session_id, "agent_message_chunk"))
    assert await client.close() == 0


def queued_behind_a_tool(fake_llm, pid_fifo, project) -> None:
    """A script whose first turn runs a long `bash`; a request carrying the queued prompt writes a file."""
    fake_llm.set_script([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": f"echo $$ > {pid_fifo.path}; sleep 60"}}]},
        {"match": "queued-text",
         "tool_calls": [{"id": "b2", "name": "bash", "arguments": {"command": f"echo x > {project}/after.txt"}}]},
        {"text": "an answer"}, {"text": "another answer"}])


def sent_after_the_first(fake_llm) -> str:
    return json.dumps([request["body"]["messages"] for request in fake_llm.requests[1:]])


async def test_a_cancel_drops_the_prompts_queued_behind_the_turn(agent_env, project, fake_llm, pid_fifo):
    queued_behind_a_tool(fake_llm, pid_fifo, project)
    client, session_id = await ready(agent_env, project)
    first = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "a"}]})
    await pid_fifo.pid()
    queued = client.request_nowait("session/prompt",
                                   {"sessionId": session_id, "prompt": [{"type": "text", "text": "queued-text"}]})
    await client.request("session/list", {})  # answered in order: the queued prompt has been taken
    client.notify("session/cancel", {"sessionId": session_id})
    assert await first == {"stopReason": "cancelled"} and await queued == {"stopReason": "cancelled"}
    assert await client.prompt(session_id, "later") == {"stopReason": "end_turn"}  # after whatever was left ran
    assert not (project / "after.txt").exists() and "queued-text" not in sent_after_the_first(fake_llm)
    assert await client.close() == 0


async def test_the_editor_closing_stdin_runs_no_queued_prompt_and_a_load_queues_it_again(agent_env, project,
                                                                                         fake_llm, pid_fifo):
    queued_behind_a_tool(fake_llm, pid_fifo, project)
    client, session_id = await ready(agent_env, project)
    client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "a"}]})
    await pid_fifo.pid()
    client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "queued-text"}]})
    await client.request("session/list", {})  # answered in order: the queued prompt has been taken
    assert await client.close() == 0
    assert len(fake_llm.requests) == 1 and not (project / "after.txt").exists()
    fake_llm.set_script([{"text": "the next answer"}, {"text": "the queued answer"}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    await client.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    assert await client.prompt(session_id, "later") == {"stopReason": "end_turn"}
    assert "queued-text" in sent_after_the_first(fake_llm)  # kept in the file, as RPC keeps it at EOF
    assert await client.close() == 0
