"""Response order by protocol (docs/rpc.md, "Response order"): quick commands keep arrival order, long ones
answer when done while later commands are answered; no timing window. Run in-process (`agent_forge.testing`)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from agent_forge.modes.rpc.handlers import HANDLERS
from agent_forge.modes.rpc.types import COMMANDS
from agent_forge.testing.rpc import start_in_process

DOC = (Path(__file__).resolve().parents[2] / "docs" / "rpc.md").read_text()
FIXED_LONG = {"bash", "abort_bash", "abort", "abort_retry", "compact", "export_html", "new_session",
              "switch_session", "fork", "clone"}


def documented_long_commands() -> set[str]:
    rule = DOC.split("Response order is set by the protocol", 1)[1].split("\n- ", 1)[0]
    listed = rule.split("The long commands are", 1)[1].split(". A long command", 1)[0]
    return set(re.findall(r"`([a-z_]+)`", listed))


def test_every_command_has_a_handler():
    assert set(HANDLERS) == set(COMMANDS)  # the server has no "not supported" branch


def test_the_documented_long_commands_are_the_background_handlers():
    background = {name for name, fn in HANDLERS.items() if fn.background}
    assert documented_long_commands() == background
    assert {name for name in background if fn_is_fixed(name)} == FIXED_LONG  # prompt: only with input handlers


def fn_is_fixed(name: str) -> bool:
    return HANDLERS[name].background is True


def lines(*commands: dict) -> bytes:
    return b"".join(json.dumps(c).encode() + b"\n" for c in commands)


async def test_quick_commands_written_in_one_chunk_are_answered_in_arrival_order(agent_env, tmp_path):
    quick = [{"type": "get_state", "id": "s1"}, {"type": "set_session_name", "name": "n", "id": "n"},
             {"type": "nope", "id": "bad"}, {"type": "get_messages", "id": "m"},
             {"type": "follow_up", "message": "later", "id": "f"}, {"type": "clear_queue", "id": "q"},
             {"type": "get_state", "id": "s2"}]
    client = await start_in_process([], cwd=str(tmp_path), env=agent_env)
    async with client:
        futures = [client.send_nowait(c) for c in quick[:-1]]
        futures.append(client.send_nowait(quick[-1]))
        for future in futures:
            await future
    answered = [r["id"] for r in client.records if r.get("type") == "response"]
    assert answered == [c["id"] for c in quick]


async def test_a_long_command_does_not_hold_up_the_next_ones(agent_env, tmp_path):
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    gate = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        client = await start_in_process(["--no-session"], cwd=str(tmp_path), env=agent_env)
        async with client:
            bash = client.send_nowait({"type": "bash", "command": f"read _ < '{fifo}'; echo done", "id": "b"})
            state = await client.send({"type": "get_state", "id": "s"})
            assert state["success"] and not bash.done()
            os.write(gate, b"go\n")
            assert (await bash)["data"]["output"].strip() == "done"
    finally:
        os.close(gate)
    answered = [r["id"] for r in client.records if r.get("type") == "response"]
    assert answered == ["s", "b"]


async def test_prompt_without_input_handlers_is_answered_before_the_next_command(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "hi"}])
    client = await start_in_process(["--no-session"], cwd=str(tmp_path), env=agent_env)
    async with client:
        client.write_raw(lines({"type": "prompt", "message": "go", "id": "p"}, {"type": "get_state", "id": "s"}))
        await client.wait_for("agent_settled")
    kinds = [(r.get("type"), r.get("id")) for r in client.records if r.get("type") in ("response", "agent_start")]
    assert kinds[:2] == [("response", "p"), ("response", "s")]
    state = next(r for r in client.records if r.get("id") == "s")
    assert state["data"]["isStreaming"] is True  # the prompt was handled (its run began) before get_state
