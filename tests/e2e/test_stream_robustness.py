"""End to end: what the real CLI makes of awkward but legal streams and of failing connections, on the wire APIs
of the loopback fake LLM server: UTF-16 surrogate halves from `\\uXXXX` escapes split across deltas, tool calls
without a name, and transport errors (refused, bad port, reset mid-answer)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

APIS = ("openai-completions", "anthropic-messages", "openai-responses", "google-generative-ai")
NO_RETRY_WAIT = {"retry": {"baseDelayMs": 1}}

# Half an emoji at the end of one delta and its other half at the start of the next, then a lone low half
# and, last, a high half that nothing follows: one emoji and two U+FFFD.
SPLIT_TEXT = "A\ud83d\ude00B\udc00\ud83d"
FIXED_TEXT = "A\U0001F600B\ufffd\ufffd"
ARGS = '{"path": "e.txt", "content": "X\ud83d\ude00Y\udc00"}'


def surrogates(value) -> list[str]:
    """Every string in `value` (keys too) that holds a surrogate code point."""
    if isinstance(value, str):
        return [value] if any("\ud800" <= c <= "\udfff" for c in value) else []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in surrogates(k) + surrogates(v)]
    if isinstance(value, list):
        return [s for v in value for s in surrogates(v)]
    return []


def split_script(api: str) -> list[dict]:
    tool = {"name": "write", "arguments": ARGS}
    return [{"thinking": SPLIT_TEXT, "thinking_deltas": 3, "text": SPLIT_TEXT, "text_deltas": 3,
             "tool_calls": [tool], "args_chunk_chars": ARGS.index("\ude00")},
            {"text": SPLIT_TEXT, "text_deltas": 3}]


@pytest.mark.parametrize("api", APIS)
async def test_split_surrogate_pairs_are_joined_and_lone_halves_replaced(agent_env_factory, fake_llm, tmp_path,
                                                                         api):
    env = agent_env_factory(api=api, settings=NO_RETRY_WAIT)
    fake_llm.set_script(split_script(api))
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        events = await client.prompt_and_wait("write it", timeout=60)
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    ends = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    first, last = ends
    assert [b["text"] for b in first["content"] if b["type"] == "text"] == [FIXED_TEXT]
    if api != "google-generative-ai":  # the fake Gemini sends a tool call's arguments whole
        assert [b["thinking"] for b in first["content"] if b["type"] == "thinking"] == [FIXED_TEXT]
    assert [b["text"] for b in last["content"]] == [FIXED_TEXT]
    last_start = max(i for i, e in enumerate(events) if e["type"] == "message_start")
    deltas = [e["assistantMessageEvent"] for e in events[last_start:] if e["type"] == "message_update"]
    assert "".join(d["delta"] for d in deltas if d["type"] == "text_delta") == FIXED_TEXT  # U+FFFD delta at the end
    assert (tmp_path / "e.txt").read_text(encoding="utf-8") == "X\U0001F600Y\ufffd"
    assert surrogates(events) == [] and surrogates(client.records) == []
    raw = Path(path).read_bytes()
    assert b"\\ud8" not in raw.lower() and b"\\udc" not in raw.lower()
    assert surrogates([json.loads(line) for line in raw.splitlines()]) == []
    assert surrogates(fake_llm.requests[1]["body"]) == []


def run_cli(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


def test_print_and_json_mode_write_split_emoji_as_valid_utf8(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": SPLIT_TEXT, "text_deltas": 3}, {"text": SPLIT_TEXT, "text_deltas": 3}])
    printed = run_cli(agent_env, tmp_path, "-p", "emoji please")
    assert (printed.returncode, printed.stdout.decode("utf-8"), b"Traceback" in printed.stderr) == (
        0, FIXED_TEXT + "\n", False)
    streamed = run_cli(agent_env, tmp_path, "--mode", "json", "-p", "emoji please")
    assert streamed.returncode == 0, streamed.stderr
    records = [json.loads(line) for line in streamed.stdout.splitlines()]
    assert b"\\ud8" not in streamed.stdout.lower() and surrogates(records) == []
    ends = [r for r in records if r.get("type") == "message_end" and r["message"]["role"] == "assistant"]
    assert [b["text"] for b in ends[-1]["message"]["content"]] == [FIXED_TEXT]


async def test_a_client_prompt_with_half_an_emoji_is_stored_and_echoed_as_u_fffd(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "ok"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        client.write_raw(b'{"id":"p","type":"prompt","message":"half \\ud83d emoji"}\n')
        events = await client.wait_for("agent_settled")
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    users = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "user"]
    assert users[0]["content"][0]["text"] == "half \ufffd emoji"
    assert surrogates(client.records) == [] and b"\\ud83d" not in Path(path).read_bytes()


# ---- tool calls without a name ----------------------------------------------------------------------------

NAMELESS_FRAMES = [
    'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n',
    'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":'
    '[{"index":0,"id":"c9","function":{"arguments":"{}"}}]}}]}\n\n',
    'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},'
    '"finish_reason":"tool_calls"}]}\n\n',
    "data: [DONE]\n\n",
]


def names_sent(value, key=None) -> list:
    """Every `name` value in a request body outside its tool definitions."""
    if isinstance(value, dict):
        found = [value["name"]] if "name" in value and key != "tools" else []
        return found + [n for k, v in value.items() if k != "tools" for n in names_sent(v, k)]
    if isinstance(value, list):
        return [n for v in value for n in names_sent(v, key)]
    return []


@pytest.mark.parametrize("api,first", [("openai-completions", {"frames": NAMELESS_FRAMES})] + [
    (api, {"tool_calls": [{"name": "", "arguments": {}}]}) for api in APIS])
async def test_a_tool_call_without_a_name_is_an_error_result_and_never_echoed_empty(agent_env_factory, fake_llm,
                                                                                    tmp_path, api, first):
    env = agent_env_factory(api=api, settings=NO_RETRY_WAIT)
    fake_llm.set_script([first, {"text": "Sorry."}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        events = await client.prompt_and_wait("use a tool")
    results = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "toolResult"]
    assert [(r["isError"], r["content"][0]["text"]) for r in results] == [(True, (
        "The model sent a tool call without a name, so no tool was run. Call one of the available tools by its "
        "name."))]
    second = fake_llm.wait_for_requests(2)[1]["body"]
    assert "" not in names_sent(second) and "unnamed_tool" in names_sent(second)


# ---- transport errors ---------------------------------------------------------------------------------------

ONE_RETRY = {"retry": {"baseDelayMs": 1, "maxRetries": 1}}


def point_at(env, base_url: str) -> None:
    """Rewrite the models.json of `env` so its provider's baseUrl is `base_url`."""
    path = Path(env["AGENT_FORGE_DIR"]) / "models.json"
    config = json.loads(path.read_text())
    config["providers"]["fake"]["baseUrl"] = base_url
    path.write_text(json.dumps(config))


def closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again at once: nothing listens there


def assistant_errors(events):
    return [e["message"].get("errorMessage") for e in events
            if e["type"] == "message_end" and e["message"]["role"] == "assistant"]


async def test_connection_refused_names_the_url_and_is_retried(agent_env_factory, tmp_path):
    env = agent_env_factory(settings=ONE_RETRY)
    port = closed_port()
    point_at(env, f"http://user:secret@127.0.0.1:{port}/v1")  # credentials are never shown
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        events = await client.prompt_and_wait("hello", timeout=60)
    expected = f"cannot connect to http://127.0.0.1:{port}/v1/chat/completions: connection refused"
    assert assistant_errors(events) == [expected, expected]
    assert [e["type"] for e in events].count("auto_retry_start") == 1


@pytest.mark.parametrize("port", ["99999", "0"])  # 0 is reserved: nothing can be reached there either
async def test_a_port_out_of_range_is_reported_when_models_json_loads(agent_env_factory, tmp_path, port):
    """Caught at load (`<path>:<line>`), so no request is ever sent to it; `ai/transport_errors.py` still names an
    invalid URL that reaches the transport (unit tests in tests/ai/test_transport_errors.py)."""
    env = agent_env_factory(settings=ONE_RETRY)
    point_at(env, f"http://127.0.0.1:{port}/v1")
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        reply = await client.send({"type": "prompt", "message": "hello"})
    assert reply["success"] is False
    assert ('providers.fake: "baseUrl" must be a URL whose port is a number from 1 to 65535, got '
            f'"http://127.0.0.1:{port}/v1"; provider skipped.') in reply["error"]


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages"])
async def test_a_connection_closed_mid_answer_says_so_and_the_retry_recovers(agent_env_factory, fake_llm, tmp_path,
                                                                             api):
    env = agent_env_factory(api=api, settings=ONE_RETRY)
    fake_llm.set_script([{"text": "Partial answer then gone", "drop_after": 3}, {"text": "Recovered."}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        events = await client.prompt_and_wait("hello", timeout=60)
    path = "/v1/chat/completions" if api == "openai-completions" else "/v1/messages"
    first, second = assistant_errors(events)
    assert first == f"The server closed the connection mid-answer ({fake_llm.base_url_anthropic}{path})"
    assert second is None


async def test_a_session_file_with_a_lone_surrogate_escape_resumes_with_u_fffd(agent_env, fake_llm, tmp_path):
    """Older versions wrote lone surrogates as `\\ud83d` escapes."""
    fake_llm.set_script([{"text": "first"}, {"text": "second"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("marker-text")
        path = Path((await client.send({"type": "get_state"}))["data"]["sessionFile"])
    path.write_bytes(path.read_bytes().replace(b"marker-text", b"half \\ud83d emoji"))
    async with await RpcClient.start(["--session", str(path)], cwd=str(tmp_path), env=agent_env) as resumed:
        messages = (await resumed.send({"type": "get_messages"}))["data"]["messages"]
        await resumed.prompt_and_wait("again")
    assert messages[0]["content"][0]["text"] == "half \ufffd emoji"
    assert surrogates(resumed.records) == [] and surrogates(fake_llm.requests[1]["body"]) == []


BUILDERS = {"openai-completions": "openai", "anthropic-messages": "anthropic", "openai-responses": "responses",
            "google-generative-ai": "gemini"}


def half_event_frames(api: str) -> list[str]:
    """The fake server's own stream for a two-word answer up to its first text event whole, then the first half
    of the next event: what a server that dies mid-write sends."""
    from support import fake_llm as fake

    plan = fake._stream_builder(BUILDERS[api])({"text": "Hello there", "text_deltas": 2}, 1, {"model": "fake-model"})
    frames = [frame.decode() for frame in plan.frames[:plan.terminal_at]]
    first_text = next(i for i, frame in enumerate(frames) if "Hello" in frame)
    cut = frames[first_text + 1]
    return frames[:first_text + 1] + [cut[:len(cut) // 2]]


@pytest.mark.parametrize("framing", ["chunked", "close"])
@pytest.mark.parametrize("api", APIS)
async def test_a_connection_closed_mid_event_says_so_and_the_retry_recovers(agent_env_factory, fake_llm, tmp_path,
                                                                            api, framing):
    """Half an event, then the connection ends: cut mid-body (chunked, no terminator) or closed cleanly
    (`Connection: close`, an EOF inside the event). Either is a clear, retried error; nothing half-parsed is
    taken for the answer."""
    env = agent_env_factory(api=api, settings=ONE_RETRY)
    frames = half_event_frames(api)
    cut = {"frames": frames, "framing": framing, **({"drop_after": len(frames)} if framing == "chunked" else {})}
    fake_llm.set_script([cut, {"text": "Recovered."}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        events = await client.prompt_and_wait("hello", timeout=60)
    first, second = assistant_errors(events)
    assert first is not None and first.startswith("The server closed the connection mid-answer (http://127.0.0.1:")
    assert first.endswith(")" if framing == "chunked" else "): the stream ended inside an event"), first
    assert second is None
    assert [e["type"] for e in events].count("auto_retry_start") == 1
