"""End to end: a message that is whole before its first event (a user message, a plugin's context) and too big for
a session line (64 MiB) is shrunk before its `message_start`, so both its events carry what the file holds and a
resume returns: no line of a run's events is much longer than a session line (issue 10, h-events); what a
line holding several messages may reach is in docs/rpc.md ("Framing"). Tool results: test_session_big_entries.py."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from support.line_scan import scan

from agent_forge.coding.session.file_lines import MAX_LINE_BYTES
from agent_forge.modes.rpc.client import RpcClient

MiB = 1 << 20
LINE_CAP = MAX_LINE_BYTES + 4096  # a session line's message and the few fields of its event around it
NOTE = "more characters left out: a session entry holds at most 64 MiB]"
NO_COMPACTION = {"compaction": {"enabled": False}}  # 64 MiB is far over the fake model's window

BIG = '''
from agent_forge.plugins import AddContext


def setup(plugin):
    @plugin.command("bigask")
    def ask(args, ctx):
        ctx.session.send_user_message("u" * (65 << 20))

    @plugin.on("before_run")
    def before_run(event, ctx):
        if any("context" in str(prompt["content"]) for prompt in event.prompts):
            return AddContext("c" * (65 << 20))
'''


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
                                                                                     fake_llm, tmp_path):
    env = agent_env_factory(settings=NO_COMPACTION, context_window=100_000_000)  # the huge prompt fits it
    plugin = tmp_path / "big.py"
    plugin.write_text(BIG)
    fake_llm.set_script([{"text": "read it all"}, {"text": "and the context"}])
    async with await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=env) as client:
        lengths = measure_lines(client)
        events = await client.prompt_and_wait("/bigask", timeout=180)
        events += await client.prompt_and_wait("add context", timeout=180)
        run_lines = list(lengths)  # get_messages, after, holds both: 128 MiB
        live = await messages_of(client)
        forks = (await client.send({"type": "get_fork_messages"}, timeout=120))["data"]["messages"]
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert [m["role"] for m in live] == ["user", "assistant", "user", "custom", "assistant"]
    user, custom = live[0], live[3]
    assert text_of(user).startswith("u" * MiB) and text_of(user).endswith(NOTE)
    assert text_of(custom).startswith("c" * MiB) and text_of(custom).endswith(NOTE)
    assert started_and_ended(events, "user") == [user, user, live[2], live[2]]  # not the 65 MiB that was sent
    assert started_and_ended(events, "custom") == [custom, custom]
    assert max(run_lines) <= LINE_CAP
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
    plugin.write_text(BIG)
    fake_llm.set_script([{"text": "read it all"}])
    out = tmp_path / "events.jsonl"
    with open(out, "wb") as stdout:  # a file, not a pipe held in memory: the stream is a few hundred MB
        done = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "agent_forge", "--mode", "json", "-e",
                                                        str(plugin), "add context"],
                                       cwd=tmp_path, env=env, stdout=stdout, stderr=subprocess.PIPE, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    longest, picked = scan(out, lambda head: b'"role":"custom"' in head and b'"type":"message_' in head)
    told = [json.loads(line) for line in picked]
    assert longest <= LINE_CAP
    [path] = (Path(env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl")
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=env) as again:
        saved = (await messages_of(again))[1]
    assert text_of(saved).endswith(NOTE)
    assert [(e["type"], e["message"]) for e in told] == [("message_start", saved), ("message_end", saved)]


STREAMING_TOOL = '''
def setup(plugin):
    @plugin.tool("stream", description="Streams 65 MiB of progress", read_only=True)
    def stream(args, ctx):
        ctx.update("p" * (65 << 20))
        return "streamed"
'''


async def test_a_tools_huge_progress_is_shrunk_to_a_line_as_a_message_is(agent_env, fake_llm, tmp_path):
    plugin = tmp_path / "stream.py"
    plugin.write_text(STREAMING_TOOL)
    fake_llm.set_script([{"tool_calls": [{"id": "call_s", "name": "stream", "arguments": {}}]}, {"text": "seen"}])
    async with await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=agent_env) as client:
        lengths = measure_lines(client)
        events = await client.prompt_and_wait("stream", timeout=180)
    [update] = [e for e in events if e["type"] == "tool_execution_update"]
    assert update["toolCallId"] == "call_s" and update["args"] == {}
    [block] = update["partialResult"]["content"]
    assert block["text"].startswith("p" * MiB)
    assert block["text"].endswith("more characters left out: an event line holds at most 64 MiB]")
    assert max(lengths) <= LINE_CAP
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["result"]["content"] == [{"type": "text", "text": "streamed"}] and not end["isError"]
