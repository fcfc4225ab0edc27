"""Tests of the fake LLM server over real loopback HTTP with httpx2, and of the agent-env fixtures."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from support.fake_llm import FakeLLMServer, ScriptError, split_even, split_words, validate_script

FAKE_LLM_SCRIPT = Path(__file__).with_name("fake_llm.py")
OPENAI_PATH = "/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


# ------------------------------------------------------------------------------------------ helpers


class SSEParser:
    """Minimal SSE decoder: lines end at LF (one CR stripped), events end at a blank line."""

    def __init__(self) -> None:
        self._buffer = b""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[tuple[str | None, str]]:
        self._buffer += chunk
        events = []
        while b"\n" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\n", 1)
            event = self._line(raw.removesuffix(b"\r").decode("utf-8"))
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> tuple[str | None, str] | None:
        if not line:
            event, self._event, data, self._data = self._event, None, self._data, []
            return (event, "\n".join(data)) if data else None
        field, _, value = line.partition(":")
        if field == "event":
            self._event = value.removeprefix(" ")
        elif field == "data":
            self._data.append(value.removeprefix(" "))
        return None


def iter_events(response: httpx2.Response) -> Iterator[tuple[str | None, str]]:
    parser = SSEParser()
    for chunk in response.iter_bytes():
        yield from parser.feed(chunk)


def openai_body(include_usage: bool = True, text: str = "hi") -> dict[str, Any]:
    body: dict[str, Any] = {"model": "fake-model", "stream": True, "messages": [{"role": "user", "content": text}]}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    return body


def anthropic_body(text: str = "hi") -> dict[str, Any]:
    return {"model": "fake-claude", "stream": True, "max_tokens": 1000, "messages": [{"role": "user", "content": text}]}


def openai_chunks(client: httpx2.Client, server: FakeLLMServer, body: dict | None = None) -> list[Any]:
    """POST to the OpenAI route; returns parsed data payloads ("[DONE]" stays a str)."""
    with client.stream("POST", server.base_url_openai + OPENAI_PATH, json=body or openai_body()) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return [data if data == "[DONE]" else json.loads(data) for event, data in iter_events(response)]


def anthropic_events(client: httpx2.Client, server: FakeLLMServer) -> list[tuple[str | None, dict]]:
    with client.stream("POST", server.base_url_anthropic + ANTHROPIC_PATH, json=anthropic_body()) as response:
        assert response.status_code == 200
        return [(event, json.loads(data)) for event, data in iter_events(response)]


def deltas(chunks: list[Any], key: str) -> list[Any]:
    return [c["choices"][0]["delta"][key] for c in chunks
            if isinstance(c, dict) and c.get("choices") and key in c["choices"][0]["delta"]]


@pytest.fixture
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(trust_env=False, timeout=10) as http:
        yield http


# ---------------------------------------------------------------------------------- OpenAI streams


def test_openai_text_streams_exactly_the_requested_number_of_deltas(fake_llm, client):
    text = "lorem ipsum " * 250
    fake_llm.set_script([{"text": text, "text_deltas": 2000, "usage": {"input": 7, "output": 9, "cache_read": 3}}])
    chunks = openai_chunks(client, fake_llm)
    content = deltas(chunks, "content")
    assert content[0] == "" and chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert len(content[1:]) == 2000 and all(content[1:]) and "".join(content) == text
    assert chunks[-3]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-2]["choices"] == []
    assert chunks[-2]["usage"]["prompt_tokens"] == 10 and chunks[-2]["usage"]["completion_tokens"] == 9
    assert chunks[-2]["usage"]["prompt_tokens_details"]["cached_tokens"] == 3
    assert chunks[-1] == "[DONE]"
    assert {c["id"] for c in chunks[:-1]} == {"chatcmpl-fake-1"}
    assert {c["object"] for c in chunks[:-1]} == {"chat.completion.chunk"}


def test_openai_usage_chunk_only_when_requested(fake_llm, client):
    fake_llm.set_script([{"text": "a b"}])
    chunks = openai_chunks(client, fake_llm, openai_body(include_usage=False))
    assert not any("usage" in c for c in chunks if isinstance(c, dict))
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop" and chunks[-1] == "[DONE]"


def test_openai_thinking_and_tool_call_chunks(fake_llm, client):
    args = {"command": "printf 'a\\nb' | wc -l", "timeout": 5}
    fake_llm.set_script([{
        "thinking": "Need a shell.", "tool_calls": [{"name": "bash", "arguments": args},
                                                    {"name": "read", "arguments": {"path": "x"}, "id": "mine"}],
        "args_chunk_chars": 7,
    }])
    chunks = openai_chunks(client, fake_llm)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": None}
    assert "".join(deltas(chunks, "reasoning_content")) == "Need a shell."
    calls = [call for group in deltas(chunks, "tool_calls") for call in group]
    heads = [c for c in calls if "id" in c]
    assert [(h["index"], h["id"], h["function"]["name"]) for h in heads] == [(0, "call_fake_1_0", "bash"),
                                                                            (1, "mine", "read")]
    pieces = [c["function"]["arguments"] for c in calls if c["index"] == 0 and "id" not in c]
    assert max(map(len, pieces)) <= 7 and json.loads("".join(pieces)) == args
    assert chunks[-3]["choices"][0]["finish_reason"] == "tool_calls"


def test_openai_reasoning_field_and_malformed_arguments(fake_llm, client):
    fake_llm.set_script([{"thinking": "hm", "reasoning_field": "reasoning",
                          "tool_calls": [{"name": "bash", "arguments": '{"command": "echo'}]}])
    chunks = openai_chunks(client, fake_llm)
    assert deltas(chunks, "reasoning") == ["hm"] and not deltas(chunks, "reasoning_content")
    calls = [call for group in deltas(chunks, "tool_calls") for call in group]
    assert "".join(c["function"]["arguments"] for c in calls) == '{"command": "echo'


# ------------------------------------------------------------------------------- Anthropic streams


def test_anthropic_stream_follows_the_messages_event_sequence(fake_llm, client):
    args = {"path": "notes/a.txt", "content": "x" * 40}
    fake_llm.set_script([{
        "thinking": "plan it", "text": "Let me write.", "tool_calls": [{"name": "write", "arguments": args}],
        "args_chunk_chars": 10, "usage": {"input": 2000, "output": 40, "cache_read": 500, "cache_write": 100},
    }])
    events = anthropic_events(client, fake_llm)
    assert all(name == data["type"] for name, data in events)
    delta_kinds = [d["delta"]["type"] for _, d in events if d["type"] == "content_block_delta"]
    assert [name for name, _ in events] == (
        ["message_start", "ping"]
        + ["content_block_start"] + ["content_block_delta"] * 3 + ["content_block_stop"]
        + ["content_block_start"] + ["content_block_delta"] * 3 + ["content_block_stop"]
        + ["content_block_start"] + ["content_block_delta"] * delta_kinds.count("input_json_delta")
        + ["content_block_stop", "message_delta", "message_stop"])
    assert delta_kinds[:3] == ["thinking_delta", "thinking_delta", "signature_delta"]
    start = events[0][1]["message"]
    assert start["id"] == "msg_fake_1" and start["model"] == "fake-claude"
    assert start["usage"]["input_tokens"] == 2000 and start["usage"]["cache_read_input_tokens"] == 500
    assert start["usage"]["cache_creation_input_tokens"] == 100
    tool_start = [d["content_block"] for _, d in events if d["type"] == "content_block_start"][2]
    assert tool_start == {"type": "tool_use", "id": "toolu_fake_1_0", "name": "write", "input": {}}
    partial = [d["delta"]["partial_json"] for _, d in events if d["type"] == "content_block_delta"
               and d["delta"]["type"] == "input_json_delta"]
    assert max(map(len, partial)) <= 10 and json.loads("".join(partial)) == args
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use" and events[-2][1]["usage"]["output_tokens"] == 40


def test_anthropic_text_deltas_keep_trailing_whitespace(fake_llm, client):
    fake_llm.set_script([{"text": "This answer will be cut"}])
    texts = [d["delta"]["text"] for _, d in anthropic_events(client, fake_llm) if d["type"] == "content_block_delta"]
    assert texts == ["This ", "answer ", "will ", "be ", "cut"]


@pytest.mark.parametrize(("given_reason", "anthropic", "openai"),
                         [("length", "max_tokens", "length"), ("max_tokens", "max_tokens", "length"),
                          ("refusal", "refusal", "refusal")])
def test_stop_reason_is_translated_per_api(fake_llm, client, given_reason, anthropic, openai):
    fake_llm.set_script([{"text": "x", "stop_reason": given_reason}] * 2)
    assert anthropic_events(client, fake_llm)[-2][1]["delta"]["stop_reason"] == anthropic
    assert openai_chunks(client, fake_llm)[-3]["choices"][0]["finish_reason"] == openai


# --------------------------------------------------------------------------------------- failures


def test_status_response_carries_body_and_headers_and_keeps_the_connection(fake_llm, client):
    fake_llm.set_script([{"status": 429, "body": {"error": {"message": "slow down"}}, "headers": {"retry-after": "2"}},
                         {"text": "ok now"}])
    response = client.post(fake_llm.base_url_openai + OPENAI_PATH, json=openai_body())
    assert response.status_code == 429 and response.headers["retry-after"] == "2"
    assert response.json() == {"error": {"message": "slow down"}}
    assert "".join(deltas(openai_chunks(client, fake_llm), "content")) == "ok now"
    assert [r["outcome"] for r in fake_llm.wait_for_requests(2, done=True)] == ["error_status", "ok"]


def test_default_error_bodies_follow_each_api(fake_llm, client):
    fake_llm.set_script([{"status": 529}, {"status": 500}])
    anthropic = client.post(fake_llm.base_url_anthropic + ANTHROPIC_PATH, json=anthropic_body())
    openai = client.post(fake_llm.base_url_openai + OPENAI_PATH, json=openai_body())
    assert anthropic.status_code == 529 and anthropic.json()["error"]["type"] == "overloaded_error"
    assert openai.status_code == 500 and openai.json()["error"]["type"] == "server_error"


def test_anthropic_in_stream_error_replaces_the_terminal_events(fake_llm, client):
    fake_llm.set_script([{"text": "partial text before the error", "error_after": 4}])
    events = anthropic_events(client, fake_llm)
    assert [name for name, _ in events] == ["message_start", "ping", "content_block_start", "content_block_delta",
                                            "error"]
    assert events[-1][1] == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert fake_llm.wait_for_requests(1, done=True)[0]["outcome"] == "sse_error"


def test_openai_in_stream_error_chunk_ends_without_done(fake_llm, client):
    fake_llm.set_script([{"text": "a b c", "error_event": {"message": "boom", "type": "server_error"}}])
    chunks = openai_chunks(client, fake_llm)
    assert chunks[-1] == {"error": {"message": "boom", "type": "server_error"}}
    assert "".join(deltas(chunks, "content")) == "a b c" and "[DONE]" not in chunks


def test_drop_after_closes_the_connection_abruptly(fake_llm, client):
    fake_llm.set_script([{"text": "this stream will be cut off", "drop_after": 3}])
    received = []
    with pytest.raises(httpx2.TransportError):
        with client.stream("POST", fake_llm.base_url_openai + OPENAI_PATH, json=openai_body()) as response:
            received.extend(iter_events(response))
    assert len(received) == 3 and received[-1][1] != "[DONE]"
    record = fake_llm.wait_for_requests(1, done=True)[0]
    assert record["outcome"] == "dropped" and record["events_sent"] == 3


@pytest.mark.exhausts_script
def test_script_exhausted_answers_500_on_both_apis(fake_llm, client):
    openai = client.post(fake_llm.base_url_openai + OPENAI_PATH, json=openai_body())
    anthropic = client.post(fake_llm.base_url_anthropic + ANTHROPIC_PATH, json=anthropic_body())
    assert openai.status_code == anthropic.status_code == 500
    assert "script exhausted" in openai.json()["error"]["message"]
    assert "script exhausted" in anthropic.json()["error"]["message"] and anthropic.json()["type"] == "error"
    assert [r["outcome"] for r in fake_llm.wait_for_requests(2, done=True)] == ["exhausted", "exhausted"]


def test_bad_requests_are_recorded_and_consume_no_spec(fake_llm, client):
    fake_llm.set_script([{"text": "kept"}])
    assert client.post(fake_llm.base_url_anthropic + "/v1/nowhere", json={}).status_code == 404
    assert client.post(fake_llm.base_url_openai + OPENAI_PATH, content=b"{not json").status_code == 400
    assert client.post(fake_llm.base_url_openai + OPENAI_PATH, json={"model": "m"}).status_code == 400
    assert client.get(fake_llm.base_url_openai + "/models").status_code == 404
    records = fake_llm.wait_for_requests(4, done=True)
    assert [r["outcome"] for r in records] == ["not_found", "bad_request", "bad_request", "not_found"]
    assert fake_llm.remaining == 1


# ------------------------------------------------------------------------------ hangs and timing


def test_hang_then_client_disconnect_is_recorded(fake_llm, client):
    fake_llm.set_script([{"text": "This answer will be cut off mid way", "hang_after": 4, "hang_ms": 60000}])
    with client.stream("POST", fake_llm.base_url_openai + OPENAI_PATH, json=openai_body()) as response:
        events = iter_events(response)
        first = [next(events) for _ in range(4)]  # arrive while the server hangs: the stream is incremental
    assert "".join(deltas([json.loads(d) for _, d in first], "content")) == "This answer will "
    fake_llm.wait_for(lambda: fake_llm.requests[0]["outcome"] is not None)
    record = fake_llm.requests[0]
    assert record["client_disconnected"] is True and record["outcome"] == "client_disconnected"
    assert record["events_sent"] == 4


def test_release_hangs_lets_the_stream_finish(fake_llm, client):
    fake_llm.set_script([{"text": "one two three", "hang_after": 1, "hang_ms": 60000}])
    with client.stream("POST", fake_llm.base_url_openai + OPENAI_PATH, json=openai_body()) as response:
        events = iter_events(response)
        next(events)
        fake_llm.wait_for(lambda: fake_llm.requests[0]["hanging"])
        fake_llm.release_hangs()
        rest = [json.loads(d) if d != "[DONE]" else d for _, d in events]
    assert "".join(deltas(rest, "content")) == "one two three" and rest[-1] == "[DONE]"
    assert fake_llm.requests[0]["hang_result"] == "released"


def test_release_before_the_hang_begins_still_releases_it(fake_llm, client):
    fake_llm.set_script([{"text": "a b c d", "hang_after": 4, "hang_ms": 60000}])
    with client.stream("POST", fake_llm.base_url_openai + OPENAI_PATH, json=openai_body()) as response:
        fake_llm.release_hangs()  # the response headers are in: the stream has started, its hang has not
        chunks = [d for _, d in iter_events(response)]
    assert chunks[-1] == "[DONE]" and fake_llm.requests[0]["hang_result"] == "released"


def test_hang_ms_bounds_the_hang(fake_llm, client):
    fake_llm.set_script([{"text": "late answer", "hang": True, "hang_ms": 20}])
    chunks = openai_chunks(client, fake_llm)
    assert "".join(deltas(chunks, "content")) == "late answer"
    assert fake_llm.requests[0]["hang_result"] == "timeout"


def test_stop_releases_a_hang_and_closes_the_stream(client):
    server = FakeLLMServer([{"text": "never finished", "hang_after": 1, "hang_ms": 600000}]).start()
    with pytest.raises(httpx2.TransportError):
        with client.stream("POST", server.base_url_openai + OPENAI_PATH, json=openai_body()) as response:
            events = iter_events(response)
            next(events)
            server.stop()
            list(events)
    assert server.requests[0]["outcome"] == "server_stopped"


def test_request_is_recorded_before_the_response(fake_llm, client):
    fake_llm.set_script([{"text": "x", "hang_after": 0}])
    body = anthropic_body("record me")
    headers = {"x-api-key": "FAKE_KEY_VALUE", "anthropic-version": "2023-06-01"}
    with client.stream("POST", fake_llm.base_url_anthropic + ANTHROPIC_PATH, json=body, headers=headers):
        record = fake_llm.wait_for_requests(1)[0]
        assert record["outcome"] is None and record["events_sent"] == 0
        assert record["body"] == body and record["path"] == ANTHROPIC_PATH and record["api"] == "anthropic"
        assert record["headers"]["x-api-key"] == "FAKE_KEY_VALUE"


def test_delay_and_close_framing_still_deliver_every_event(fake_llm, client):
    fake_llm.set_script([{"text": "slow and steady", "delay_ms": 5, "framing": "close"}])
    with client.stream("POST", fake_llm.base_url_openai + OPENAI_PATH, json=openai_body()) as response:
        assert "transfer-encoding" not in response.headers and response.headers["connection"] == "close"
        chunks = [d for _, d in iter_events(response)]
    assert chunks[-1] == "[DONE]"
    assert "".join(deltas([json.loads(c) for c in chunks[:-1]], "content")) == "slow and steady"


@pytest.mark.parametrize("framing", ["chunked", "close"])
def test_burst_sends_the_same_events_in_one_write(fake_llm, client, framing):
    fake_llm.set_script([{"text_deltas": 50, "framing": framing}, {"text_deltas": 50, "framing": framing,
                                                                   "burst": True}])
    one_by_one, burst = openai_chunks(client, fake_llm), openai_chunks(client, fake_llm)
    def shapes(chunks: list[Any]) -> list[Any]:  # what differs between two requests: the message ids
        return [chunk if chunk == "[DONE]" else chunk["choices"] for chunk in chunks]

    assert shapes(burst) == shapes(one_by_one)
    assert len(deltas(burst, "content")) == 51
    assert [(r["outcome"], r["events_sent"]) for r in fake_llm.requests] == [("ok", 54), ("ok", 54)]


async def test_async_client_reads_events_as_they_are_sent(fake_llm):
    fake_llm.set_script([{"text": "alpha beta gamma", "hang_after": 2, "hang_ms": 60000}])
    parser, seen = SSEParser(), []
    async with httpx2.AsyncClient(trust_env=False, timeout=10) as http:
        async with http.stream("POST", fake_llm.base_url_openai + OPENAI_PATH, json=openai_body()) as response:
            async for chunk in response.aiter_bytes():
                seen.extend(parser.feed(chunk))
                if len(seen) == 2:
                    assert fake_llm.requests[0]["outcome"] is None
                    fake_llm.release_hangs()
    assert seen[-1][1] == "[DONE]" and len(seen) == 7


def test_wait_for_times_out_and_tolerates_missing_requests(fake_llm):
    with pytest.raises(TimeoutError):
        fake_llm.wait_for_requests(1, timeout=0.05)
    with pytest.raises(TimeoutError):
        fake_llm.wait_for(lambda: fake_llm.requests[0]["outcome"] == "ok", timeout=0.05)


# ------------------------------------------------------------------------------------------ script


def test_match_picks_the_first_matching_spec(fake_llm, client):
    fake_llm.set_script([{"match": "<summarize>", "text": "summary"}, {"text": "normal"}])
    first = openai_chunks(client, fake_llm, openai_body(text="hello"))
    second = openai_chunks(client, fake_llm, openai_body(text="please <summarize>\nthis"))
    assert "".join(deltas(first, "content")) == "normal" and "".join(deltas(second, "content")) == "summary"
    assert [r["spec_index"] for r in fake_llm.requests] == [1, 0]


def test_text_deltas_without_text_generate_filler(fake_llm, client):
    fake_llm.set_script([{"text_deltas": 5}])
    assert len(deltas(openai_chunks(client, fake_llm), "content")) == 1 + 5


@pytest.mark.parametrize(("script", "fragment"), [
    ({"text": "x"}, "JSON list"),
    (["text"], "script[0]: a spec must be an object"),
    ([{"text": "ok"}, {"txt": "typo"}], "script[1]: unknown key 'txt'"),
    ([{"text": 5}], "'text' has the wrong type"),
    ([{"text": "ab", "text_deltas": 3}], "exceeds the 2 characters"),
    ([{"text_deltas": 0}], "'text_deltas' must be an integer >= 1"),
    ([{"drop_after": True}], "'drop_after' must be an integer"),
    ([{"tool_calls": [{"arguments": {}}]}], "needs a string 'name'"),
    ([{"tool_calls": [{"name": "x", "arguments": 3}]}], "'arguments' must be an object or a string"),
    ([{"usage": {"inputs": 3}}], "unknown usage key 'inputs'"),
    ([{"framing": "lines"}], "'framing' must be"),
])
def test_invalid_scripts_are_rejected_with_a_clear_message(fake_llm, script, fragment):
    fake_llm.set_script([{"text": "previous"}])
    with pytest.raises(ScriptError) as info:
        fake_llm.set_script(script)
    assert fragment in str(info.value)
    assert fake_llm.remaining == 1


def test_comment_keys_are_ignored():
    assert validate_script([{"_note": "why", "text": "x"}]) == [{"_note": "why", "text": "x"}]


@given(st.text(), st.integers(min_value=1, max_value=5))
def test_split_words_reassembles(text, per_chunk):
    pieces = split_words(text, per_chunk)
    assert "".join(pieces) == text and all(pieces)


@given(st.text(min_size=1), st.data())
def test_split_even_gives_exactly_n_non_empty_pieces(text, data):
    count = data.draw(st.integers(min_value=1, max_value=len(text)))
    pieces = split_even(text, count)
    assert len(pieces) == count and "".join(pieces) == text and all(pieces)
    assert max(map(len, pieces)) - min(map(len, pieces)) <= 1


# -------------------------------------------------------------------------------------- standalone


def test_standalone_server_writes_its_port_and_serves(tmp_path, client):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from the subprocess"}]))
    port_file, log = tmp_path / "port", tmp_path / "requests.jsonl"
    command = [sys.executable, str(FAKE_LLM_SCRIPT), "--script", str(script), "--port", "0",
               "--port-file", str(port_file), "--requests-log", str(log)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            banner = process.stdout.readline()  # printed after the port file is written
            port = int(port_file.read_text())
            assert banner.strip() == f"listening on http://127.0.0.1:{port}"
            url = f"http://127.0.0.1:{port}/v1{OPENAI_PATH}"
            with client.stream("POST", url, json=openai_body()) as response:
                chunks = [json.loads(d) for _, d in iter_events(response) if d != "[DONE]"]
            assert "".join(deltas(chunks, "content")) == "from the subprocess"
        finally:
            process.terminate()
            assert process.wait(timeout=10) == 0
    assert [json.loads(line)["outcome"] for line in log.read_text().splitlines()] == ["ok"]


def test_standalone_server_rejects_a_bad_script(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"txet": "typo"}]))
    result = subprocess.run([sys.executable, str(FAKE_LLM_SCRIPT), "--script", str(script)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and "unknown key 'txet'" in result.stderr


# ----------------------------------------------------------------------------------- env fixtures


def test_agent_env_points_at_the_fake_server_only(monkeypatch, fake_llm, agent_env_factory):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "https_proxy", "AGENT_FORGE_SESSION_DIR"):
        monkeypatch.setenv(name, "real-value")
    env = agent_env_factory(api="anthropic-messages", settings={"defaultThinkingLevel": "high"})
    assert not {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "https_proxy",
                "AGENT_FORGE_SESSION_DIR"} & set(env)
    agent_dir = Path(env["AGENT_FORGE_DIR"])
    assert agent_dir.is_relative_to(env["HOME"]) and env["PATH"]
    provider = json.loads((agent_dir / "models.json").read_text())["providers"]["fake"]
    assert provider["baseUrl"] == fake_llm.base_url_anthropic and provider["api"] == "anthropic-messages"
    assert provider["apiKey"] == "FAKE_KEY_VALUE" and provider["models"][0]["id"] == "fake-model"
    assert json.loads((agent_dir / "settings.json").read_text()) == {
        "defaultProvider": "fake", "defaultModel": "fake-model", "defaultThinkingLevel": "high"}


def test_agent_env_default_is_openai_completions(agent_env, fake_llm):
    models = json.loads((Path(agent_env["AGENT_FORGE_DIR"]) / "models.json").read_text())
    model = models["providers"]["fake"]["models"][0]
    assert models["providers"]["fake"]["baseUrl"] == fake_llm.base_url_openai
    assert model["contextWindow"] == 128000 and model["maxTokens"] == 16384 and model["reasoning"] is True


def test_malformed_request_framing_gets_400(fake_llm):
    with socket.create_connection(("127.0.0.1", fake_llm.port), timeout=10) as raw:
        raw.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\nConnection: close\r\n\r\n")
        reply = raw.makefile("rb").read()
    assert reply.startswith(b"HTTP/1.1 400") and b"malformed request body framing" in reply
    assert fake_llm.wait_for_requests(1, done=True)[0]["outcome"] == "bad_request"


def test_frames_replace_the_stream_and_content_type_labels_a_plain_answer(fake_llm, client):
    fake_llm.set_script([{"frames": ["data: [DONE]\n\n"], "headers": {"Content-Type": "text/plain"}},
                         {"status": 200, "content_type": "text/html", "body": "<html></html>"}])
    with client.stream("POST", fake_llm.base_url_openai + OPENAI_PATH, json=openai_body()) as response:
        assert response.headers.get_list("content-type") == ["text/plain"]
        assert response.read() == b"data: [DONE]\n\n"
    page = client.post(fake_llm.base_url_openai + OPENAI_PATH, json=openai_body())
    assert (page.status_code, page.headers["content-type"], page.text) == (200, "text/html", "<html></html>")


@pytest.mark.parametrize("spec, problem", [
    ({"frames": "data: x"}, "wrong type"),
    ({"frames": [b"x".decode(), 3]}, "'frames' must be a list of strings"),
    ({"content_type": "text/html"}, "'content_type' applies to a plain 'status' response only"),
    ({"burst": True, "delay_ms": 1}, "'burst' writes the stream at once: not with"),
    ({"burst": True, "error_after": 2}, "'burst' writes the stream at once: not with"),
    ({"burst": 1}, "wrong type"),
])
def test_frames_and_content_type_are_validated(spec, problem):
    with pytest.raises(ScriptError, match=problem):
        validate_script([spec])
