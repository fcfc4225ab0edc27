"""End to end: the terminal UI resuming a session whose agent was killed with messages queued shows them as
queued and sends them with the next prompt (issue 10, brief h-queue; the RPC side: test_rpc_queue_kill.py)."""

from __future__ import annotations

import pytest

from support.tui import needs_tmux, user_texts

from agent_forge.modes.rpc.client import RpcClient

from .test_rpc_queue_kill import HELD, held_run_with_queue, kill

pytestmark = [pytest.mark.real_process, needs_tmux]  # kill -9; tmux


async def test_resumed_in_the_terminal_the_queue_shows_and_goes_with_the_next_prompt(agent_env, fake_llm,
                                                                                     terminal):
    fake_llm.set_script([HELD])
    client, path = await held_run_with_queue(agent_env, terminal.work)
    await kill(client)
    fake_llm.set_script([{"text": "Took the prompt and the steer."}, {"text": "Took the follow-up."}])
    term = terminal("--session", path)
    term.wait_for("steer: s1")
    term.wait_for("follow-up: f1")
    assert len(fake_llm.requests) == 1  # not run on open
    term.type("next")
    term.press("Enter")
    term.wait_for("Took the follow-up.")
    assert [user_texts(r) for r in fake_llm.requests[1:]] == [["go", "next", "s1"], ["go", "next", "s1", "f1"]]


async def test_resumed_in_the_terminal_a_call_the_kill_cut_off_is_shown_as_interrupted(agent_env, fake_llm,
                                                                                       terminal):
    """In call order: the cut-off call came after the calls that had ended beside it (round 23)."""
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 60"}},
                                         {"name": "write", "arguments": {"path": "a.txt", "content": "x\n"}}]}])
    client = await RpcClient.start([], cwd=str(terminal.work), env=agent_env)
    await client.send({"type": "prompt", "message": "go"})
    while not ((event := await client.next_event())["type"] == "tool_execution_end" and event["toolName"] == "write"):
        pass
    path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    await kill(client)
    term = terminal("--session", path)
    shown = " ".join(term.wait_for_all("write a.txt", "$ sleep 60").split())
    assert "$ sleep 60 No result: the tool call was interrupted before it finished (the agent stopped). stopped" \
        in shown, shown
    assert shown.index("$ sleep 60") < shown.index("write a.txt"), shown
