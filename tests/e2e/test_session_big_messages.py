"""End to end: a message that is whole before its first event (a user message, a plugin's context) and too big for
a session line (64 MiB) is shrunk before its `message_start`, so both its events carry what the file holds and a
resume returns: no line of a run's events is much longer than a session line (issue 10, h-events); what a
line holding several messages may reach is in docs/rpc.md ("Framing"). Tool results: test_session_big_entries.py.

The tests of an in-process agent lower the limit (`lowered_limit`, 2 MiB) and scale their data from it: the same
paths at a thirty-second of the bytes (issue 11). 2 MiB keeps every other limit on the path where it was: a shrunk line
is still carried past `file_lines._CARRY_HELD` (1 MiB) when read back, and nothing reaches the 8 MiB answer cap or
the RPC command cap. The JSON mode test runs the agent as a process: it keeps the real 64 MiB."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.line_scan import scan

from agent_forge.coding.session import file_lines
from agent_forge.coding.session.file_lines import MAX_LINE_BYTES
from agent_forge.modes.rpc.client import RpcClient

MiB = 1 << 20
LOWERED = 2 * MiB
"""The session-line limit of the in-process tests (`lowered_limit`); the real one is `MAX_LINE_BYTES`, 64 MiB."""
NO_COMPACTION = {"compaction": {"enabled": False}}  # the huge messages are far over the fake model's window


def line_cap(limit: int) -> int:
    return limit + 4096  # a session line's message and the few fields of its event around it


def over(limit: int) -> int:
    return limit + (limit >> 6)  # characters a little over a line of `limit` bytes: 65 MiB for 64 MiB


def kept(limit: int) -> int:
    return limit >> 6  # characters a shrunk message surely starts with: 1 MiB for 64 MiB


def note(limit: int, holder: str = "a session entry") -> str:
    return f"more characters left out: {holder} holds at most {limit >> 20} MiB]"


def big_plugin(chars: int) -> str:
    """A plugin whose `/bigask` sends a user message, and whose `before_run` adds a context, of `chars` each."""
    return f'''
from agent_forge.plugins import AddContext


def setup(plugin):
    @plugin.command("bigask")
    def ask(args, ctx):
        ctx.session.send_user_message("u" * {chars})

    @plugin.on("before_run")
    def before_run(event, ctx):
        if any("context" in str(prompt["content"]) for prompt in event.prompts):
            return AddContext("c" * {chars})
'''


@pytest.fixture
def lowered_limit(monkeypatch) -> int:
    """`file_lines.MAX_LINE_BYTES` lowered to `LOWERED` for an in-process agent (the product reads it through the
    module at every use); its value."""
    monkeypatch.setattr(file_lines, "MAX_LINE_BYTES", LOWERED)
    return LOWERED


def measure_lines(client: RpcClient) -> list[int]:
    """The length of every stdout line `client` reads from now on (LF not counted), in a list that grows."""
    lengths: list[int] = []
    receive = client._receive

    def measured(line: bytes) -> None:
        lengths.append(len(line))
        receive(line)

    client._receive = measured  # type: ignore[method-assign]
    return lengths


def text_of(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(block["text"] for block in content)


def started_and_ended(events: list[dict], role: str) -> list[dict]:
    return [e["message"] for e in events if e["type"] in ("message_start", "message_end")
            and e["message"]["role"] == role]


async def messages_of(client: RpcClient) -> list[dict]:
    return (await client.send({"type": "get_messages"}, timeout=120))["data"]["messages"]


async def test_a_huge_user_and_custom_message_reach_rpc_clients_as_the_file_holds_them(agent_env_factory,
                                                                                     fake_llm, tmp_path,
                                                                                     lowered_limit):
    env = agent_env_factory(settings=NO_COMPACTION, context_window=100_000_000)  # the huge prompt fits it
    plugin = tmp_path / "big.py"
    plugin.write_text(big_plugin(over(lowered_limit)))
    fake_llm.set_script([{"text": "read it all"}, {"text": "and the context"}])
    async with await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=env) as client:
        lengths = measure_lines(client)
        events = await client.prompt_and_wait("/bigask", timeout=180)
        events += await client.prompt_and_wait("add context", timeout=180)
        run_lines = list(lengths)  # get_messages, after, holds both: twice the limit
        live = await messages_of(client)
        forks = (await client.send({"type": "get_fork_messages"}, timeout=120))["data"]["messages"]
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert [m["role"] for m in live] == ["user", "assistant", "user", "custom", "assistant"]
    user, custom = live[0], live[3]
    assert text_of(user).startswith("u" * kept(lowered_limit)) and text_of(user).endswith(note(lowered_limit))
    assert text_of(custom).startswith("c" * kept(lowered_limit)) and text_of(custom).endswith(note(lowered_limit))
    assert started_and_ended(events, "user") == [user, user, live[2], live[2]]  # not the huge text that was sent
    assert started_and_ended(events, "custom") == [custom, custom]
    assert max(run_lines) <= line_cap(lowered_limit)
    assert [m["text"] for m in forks] == [text_of(user), "add context"]  # the fork list shows the saved text
    async with await RpcClient.start(["--session", path], cwd=str(tmp_path), env=env) as again:
        resumed = await messages_of(again)
        resumed_forks = (await again.send({"type": "get_fork_messages"}, timeout=120))["data"]["messages"]
    assert resumed == live and resumed_forks == forks
    assert b"Warning" not in again.stderr


async def test_json_mode_events_carry_the_shrunk_plugin_context_the_file_holds(agent_env_factory, fake_llm,
                                                                              tmp_path):
    env = agent_env_factory(settings=NO_COMPACTION)
    plugin = tmp_path / "big.py"
    plugin.write_text(big_plugin(over(MAX_LINE_BYTES)))  # a process of its own: the real limit, 65 MiB
    fake_llm.set_script([{"text": "read it all"}])
    out = tmp_path / "events.jsonl"
    with open(out, "wb") as stdout:  # a file, not a pipe held in memory: the stream is a few hundred MB
        done = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "agent_forge", "--mode", "json", "-e",
                                                        str(plugin), "add context"],
                                       cwd=tmp_path, env=env, stdout=stdout, stderr=subprocess.PIPE, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    longest, picked = scan(out, lambda head: b'"role":"custom"' in head and b'"type":"message_' in head)
    told = [json.loads(line) for line in picked]
    assert longest <= line_cap(MAX_LINE_BYTES)
    [path] = (Path(env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl")
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=env) as again:
        saved = (await messages_of(again))[1]
    assert text_of(saved).endswith(note(MAX_LINE_BYTES))
    assert [(e["type"], e["message"]) for e in told] == [("message_start", saved), ("message_end", saved)]


def streaming_tool(chars: int) -> str:
    """A plugin tool `stream` that reports progress of `chars` characters."""
    return f'''
def setup(plugin):
    @plugin.tool("stream", description="Streams huge progress", read_only=True)
    def stream(args, ctx):
        ctx.update("p" * {chars})
        return "streamed"
'''


async def test_a_tools_huge_progress_is_shrunk_to_a_line_as_a_message_is(agent_env, fake_llm, tmp_path,
                                                                         lowered_limit):
    plugin = tmp_path / "stream.py"
    plugin.write_text(streaming_tool(over(lowered_limit)))
    fake_llm.set_script([{"tool_calls": [{"id": "call_s", "name": "stream", "arguments": {}}]}, {"text": "seen"}])
    async with await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=agent_env) as client:
        lengths = measure_lines(client)
        events = await client.prompt_and_wait("stream", timeout=180)
    [update] = [e for e in events if e["type"] == "tool_execution_update"]
    assert update["toolCallId"] == "call_s" and update["args"] == {}
    [block] = update["partialResult"]["content"]
    assert block["text"].startswith("p" * kept(lowered_limit))
    assert block["text"].endswith(note(lowered_limit, "an event line"))
    assert max(lengths) <= line_cap(lowered_limit)
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["result"]["content"] == [{"type": "text", "text": "streamed"}] and not end["isError"]
