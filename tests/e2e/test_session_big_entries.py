"""End to end: no entry is too big to read back, and a streamed message has a total cap (`ai.sse.MAX_MESSAGE_CHARS`,
8 MiB). A tool result over the 64 MiB session-line limit is saved shrunk (its start and a note), live and resumed
alike, and every later message stays on the chain; an answer past the message cap fails that request, keeps what
came before, and the session goes on.

The tool-result test runs the agent in-process with the limit lowered to 2 MiB (`lowered_limit`) and its data
scaled from it: the same path at a thirty-second of the bytes (issue 11); 2 MiB keeps a shrunk line carried past
`file_lines._CARRY_HELD` (1 MiB) when read back. The JSON mode test runs the agent as a process: the real 64 MiB."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.line_scan import longest_line, scan

from agent_forge.ai import json_wire
from agent_forge.coding.session import file_lines
from agent_forge.coding.session.file_lines import MAX_LINE_BYTES
from agent_forge.modes.rpc.client import RpcClient

MiB = 1 << 20
LOWERED = 2 * MiB
"""The session-line limit of the in-process tool-result test (`lowered_limit`); the real one is `MAX_LINE_BYTES`."""
NO_RETRY_WAIT = {"retry": {"baseDelayMs": 1}}
CAP_ERROR = ("The server sent a message larger than 8 MiB (the limit for one answer's text, thinking and tool "
             "calls together); the response was abandoned")


def huge_tool(limit: int) -> str:
    """A plugin tool `huge` that returns a little more text than a session line of `limit` bytes holds (65 MiB for
    64 MiB)."""
    return f'''
def setup(plugin):
    plugin.register_tool("huge", lambda args, ctx: "x" * {limit + (limit >> 6)}, description="Returns huge text",
                         read_only=True)
'''


def note(limit: int) -> str:
    return f"more characters left out: a session entry holds at most {limit >> 20} MiB]"


@pytest.fixture
def lowered_limit(monkeypatch) -> int:
    """`file_lines.MAX_LINE_BYTES` lowered to `LOWERED` for an in-process agent (the product reads it through the
    module at every use); its value."""
    monkeypatch.setattr(file_lines, "MAX_LINE_BYTES", LOWERED)
    return LOWERED


async def messages_of(client: RpcClient) -> list[dict]:
    return (await client.send({"type": "get_messages"}, timeout=120))["data"]["messages"]


def roles(messages: list[dict]) -> list[str]:
    return [m["role"] for m in messages]


async def test_a_tool_result_over_the_line_limit_is_saved_shrunk_and_the_chain_stays_whole(agent_env_factory,
                                                                                         fake_llm, tmp_path,
                                                                                         lowered_limit):
    agent_env = agent_env_factory(settings={"compaction": {"enabled": False}})  # the result is far over the window
    plugin = tmp_path / "huge.py"
    plugin.write_text(huge_tool(lowered_limit))
    fake_llm.set_script([{"tool_calls": [{"id": "call_h", "name": "huge", "arguments": {}}]},
                         {"text": "the tool answered"}, {"text": "second answer"}])
    async with await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("call huge", timeout=180)
        await client.prompt_and_wait("after", timeout=180)
        live = await messages_of(client)
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert roles(live) == ["user", "assistant", "toolResult", "assistant", "user", "assistant"]
    [ended] = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "toolResult"]
    assert ended == live[2]  # the event tells what the file holds
    [told] = [e["result"] for e in events if e["type"] == "tool_execution_end"]
    assert told["content"] == live[2]["content"]  # the live event too, not the huge text the tool returned
    assert max(len(json_wire.encode(e)) for e in events) <= lowered_limit  # compact, non-ASCII kept: as sent
    [result] = live[2]["content"]
    assert result["text"].startswith("x" * (lowered_limit >> 6)) and result["text"].endswith(note(lowered_limit))
    assert b"a message entry was too large for the session file" in client.stderr
    assert longest_line(path) <= lowered_limit
    async with await RpcClient.start(["--session", path], cwd=str(tmp_path), env=agent_env) as again:
        resumed = await messages_of(again)
    assert b"Warning" not in again.stderr
    assert resumed == live  # the live agent holds what the file holds: the same shrunk result


async def test_json_mode_events_carry_the_shrunk_tool_result_the_file_holds(agent_env_factory, fake_llm, tmp_path):
    agent_env = agent_env_factory(settings={"compaction": {"enabled": False}})
    plugin = tmp_path / "huge.py"
    plugin.write_text(huge_tool(MAX_LINE_BYTES))  # a process of its own: the real limit, 65 MiB
    fake_llm.set_script([{"tool_calls": [{"id": "call_h", "name": "huge", "arguments": {}}]},
                         {"text": "the tool answered"}])
    out = tmp_path / "events.jsonl"
    with open(out, "wb") as stdout:  # a file, not a pipe held in memory: the stream is a few hundred MB
        done = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "agent_forge", "--mode", "json", "-e", str(plugin), "call huge"],
                              cwd=tmp_path, env=agent_env, stdout=stdout, stderr=subprocess.PIPE, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    told, ended = [], []
    longest, picked = scan(out, lambda head: b'"type":"tool_execution_end"' in head[:200]
                           or b'"role":"toolResult"' in head)
    for event in map(json.loads, picked):
        if event["type"] == "tool_execution_end":
            told.append(event["result"]["content"])
        elif event["type"] == "message_end":
            ended.append(event["message"])
    assert longest <= MAX_LINE_BYTES
    [path] = (Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl")
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=agent_env) as again:
        saved = (await messages_of(again))[2]
    assert saved["content"][0]["text"].endswith(note(MAX_LINE_BYTES))
    assert told == [saved["content"]] and ended == [saved]


TEXT = {"text": "a" * (9 * MiB), "text_deltas": 9}
ARGUMENTS = {"tool_calls": [{"id": "call_b", "name": "bash", "arguments": {"command": "echo " + "b" * (9 * MiB)}}],
             "args_chunk_chars": MiB}


@pytest.mark.parametrize("api, spec", [
    ("openai-completions", TEXT), ("anthropic-messages", TEXT), ("openai-responses", TEXT),
    ("google-generative-ai", TEXT), ("openai-completions", ARGUMENTS), ("anthropic-messages", ARGUMENTS),
], ids=["completions-text", "anthropic-text", "responses-text", "gemini-text", "completions-arguments",
        "anthropic-arguments"])
async def test_an_answer_past_the_message_cap_fails_keeping_what_came_and_the_session_goes_on(
        agent_env_factory, fake_llm, tmp_path, api, spec):
    env = agent_env_factory(api=api, settings=NO_RETRY_WAIT)
    fake_llm.set_script([spec, {"text": "fine again"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        events = await client.prompt_and_wait("answer at length", timeout=120)
        await client.prompt_and_wait("next", timeout=60)
        live = await messages_of(client)
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    failed = live[1]
    assert failed["stopReason"] == "error" and failed["errorMessage"] == CAP_ERROR
    assert "auto_retry_start" not in [e["type"] for e in events] and len(fake_llm.requests) == 2
    assert "tool_execution_start" not in [e["type"] for e in events]
    kept = failed["content"][0]
    assert kept.get("text", "a" * (8 * MiB)) == "a" * (8 * MiB)  # every delta before the one that went over
    assert roles(live) == ["user", "assistant", "user", "assistant"] and live[3]["content"][0]["text"] == "fine again"
    assert longest_line(path) <= MAX_LINE_BYTES
    async with await RpcClient.start(["--session", path], cwd=str(tmp_path), env=env) as again:
        assert await messages_of(again) == live
