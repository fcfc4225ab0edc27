"""A loopback HTTP server that answers model requests with scripted Anthropic / OpenAI streaming responses.

Endpoints (POST, JSON body, ``"stream": true`` required):

- ``/v1/chat/completions``: OpenAI Chat Completions SSE (``chat.completion.chunk`` objects, ``data: [DONE]``).
- ``/v1/messages``: Anthropic Messages SSE (``message_start`` ... ``message_stop``).
- ``/v1/responses``: OpenAI Responses SSE, served by ``fake_responses.py`` (see "Other APIs").
- ``/v1beta/models/<model>:streamGenerateContent?alt=sse``: Gemini SSE, served by ``fake_gemini.py``.

Any other path answers 404, a body that is not a JSON object 400, a non-streaming request 400; all are recorded.

Other APIs
----------
``EXTRA_API_MODULES`` maps a record ``api`` name to a module beside this file, imported on first use. Each
module has ``matches(route) -> bool``, ``request_problem(body) -> str | None`` (checks the API's own request
rules, including streaming; a problem answers 400), ``stream(spec, seq, body) -> Plan``, ``error_body(status,
message)`` and ``error_frame(spec)``. The script format below applies to them unchanged; their docstrings say how
each spec key maps onto their stream.

Script
------
A JSON list of response specs. Each request takes the first unconsumed spec whose ``match`` (if any) occurs in
one of the request body's string values; specs that do not match stay for later requests. When nothing is
left the server answers 500 with an error whose message contains ``script exhausted``. Every key is optional;
keys starting with ``_`` are comments and ignored; unknown keys are rejected by :func:`validate_script`.

Content (emitted in this order: thinking, text, tool calls)
  ``text`` (str), ``thinking`` (str), ``signature`` (str, Anthropic thinking signature, default
  ``sig_fake_<req>``), ``tool_calls``: ``[{"name": str, "arguments": dict | str, "id"?: str}]`` (a str is sent
  verbatim, e.g. malformed JSON; ids default to ``toolu_fake_<req>_<i>`` / ``call_fake_<req>_<i>``),
  ``usage``: ``{"input", "output", "cache_read", "cache_write"}`` token counts (defaults 100, 20, 0, 0),
  ``stop_reason``: either API's vocabulary (``end_turn``/``stop``, ``max_tokens``/``length``,
  ``tool_use``/``tool_calls``) is translated to the answering API's; other values are sent verbatim.
  Default: tool_use / tool_calls when there are tool calls, else end_turn / stop.
  ``model``: echoed model name (default: the request's ``model``).
  ``reasoning_field``: OpenAI delta key for thinking (default ``reasoning_content``; e.g. ``reasoning``).
Chunking
  Text and thinking are split into words (trailing whitespace kept with each word), ``text_chunk_words`` words
  per delta (default 1). ``text_deltas: N`` / ``thinking_deltas: N`` split into exactly N deltas of near-equal
  character length instead (``text_deltas`` without ``text`` generates a filler text of N words).
  ``args_chunk_chars``: tool argument JSON in chunks of this many characters (default: one chunk).
Failures
  ``status`` (int) + optional ``body`` (dict/list sent as JSON, str verbatim; default: the API's error shape)
  answer a plain HTTP response instead of a stream (``status: 200`` with a ``body`` is a non-streaming answer);
  ``content_type`` (str, default ``application/json``) is its Content-Type, e.g. ``text/html``. ``headers``
  (dict) are added to any response (e.g. ``{"retry-after": "1"}``; a ``Content-Type`` there relabels a stream).
  ``frames`` (list of str): the stream body written verbatim, one write per item, instead of the API's stream
  (``["data: [DONE]\n\n"]``, ``[]`` for an empty stream, a huge line); timing and failure keys still apply.
  ``error_event``: true, a message str, or the inner error object (dict); sends an
  in-stream error (Anthropic ``event: error``; OpenAI ``{"error": {...}}`` chunk) after ``error_after`` events
  (default: where the terminal events would start), then ends the stream without terminal events;
  ``error_after`` alone implies a default ``error_event``. ``drop_after: N``: after N events, close the
  connection without a terminal event or the chunked-encoding terminator.
Timing
  ``hang_after: N`` (or ``hang: true``, N defaulting to 0): after N events, block until the client disconnects,
  :meth:`FakeLLMServer.release_hangs` (called any time after the stream started), ``hang_ms`` (default 30000)
  elapses, or the server stops; after a release or timeout the rest of the stream is sent.
  ``delay_ms``: pause before every event but the first.
  ``framing``: ``"chunked"`` (default, ``Transfer-Encoding: chunked``) or ``"close"`` (``Connection: close``).
  ``burst``: true writes the whole stream in one write, each event still in a chunk of its own, as a client
  that lags behind a server reads it; for benchmarks, where one write per event made the server what bounds a
  client's rate (~30,000 events/s on an idle core). Not with the failure and timing keys above.

``<req>`` is the request's ``seq`` (1-based, counted over the server's life); it also names the message
(``msg_fake_<req>``, ``chatcmpl-fake-<req>``). Event counts (for ``*_after``) include every SSE event written:
Anthropic sends ``message_start``, one ``ping``, the content blocks, ``message_delta``, ``message_stop``; OpenAI
sends a role chunk, content chunks, the ``finish_reason`` chunk, a usage chunk (only if
``stream_options.include_usage``), ``[DONE]``.
JSON is written compactly with ``ensure_ascii=False`` (U+2028 travels raw: SSE lines split on CR/LF only).

Recorded requests (``FakeLLMServer.requests``, appended before the response starts, updated while it runs):
``{"seq": 1-based int, "method", "path", "api": "openai"|"anthropic"|"responses"|"gemini"|None, "headers": {...},
"body": parsed JSON or None, "spec_index": int|None, "events_sent": int, "hanging": bool,
"hang_result": None|"released"|"timeout", "client_disconnected": bool, "outcome": None while running, then
"ok"|"error_status"|"sse_error"|"dropped"|"client_disconnected"|"server_stopped"|"exhausted"|
"bad_request"|"not_found"}``.

Standalone: ``python tests/support/fake_llm.py --script script.json [--port 0] [--port-file PATH]
[--requests-log PATH]`` prints ``listening on <url>`` and writes the port once ready, then serves until killed.
Standard library only, so benchmarks can run it with any interpreter.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import select
import signal
import socket
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, NamedTuple

DEFAULT_USAGE = {"input": 100, "output": 20, "cache_read": 0, "cache_write": 0, "reasoning": 0}
DEFAULT_HANG_MS = 30000
_HANG_POLL_S = 0.05  # how often a hanging handler looks for a release, a stop or a client hang-up


# --------------------------------------------------------------------------------------------- script


class ScriptError(ValueError):
    """A script (or one spec in it) does not follow the format in the module docstring."""


_INT_KEYS = {
    "text_chunk_words": 1, "text_deltas": 1, "thinking_deltas": 1, "args_chunk_chars": 1, "status": 100,
    "error_after": 0, "drop_after": 0, "hang_after": 0, "hang_ms": 0, "delay_ms": 0,
}  # key -> minimum value
_TYPED_KEYS: dict[str, tuple[type, ...]] = {
    "text": (str,), "thinking": (str,), "signature": (str,), "stop_reason": (str,), "model": (str,),
    "reasoning_field": (str,), "match": (str,), "tool_calls": (list,), "usage": (dict,), "headers": (dict,),
    "body": (dict, list, str), "error_event": (bool, str, dict), "hang": (bool,), "framing": (str,),
    "content_type": (str,), "frames": (list,), "burst": (bool,),
}
_PER_EVENT_KEYS = ("hang", "hang_after", "drop_after", "error_event", "error_after", "delay_ms")


def validate_script(script: Any) -> list[dict[str, Any]]:
    """Check a script (list of specs); returns it unchanged. Raises ScriptError naming the spec and key."""
    if not isinstance(script, list):
        raise ScriptError(f"script must be a JSON list of response specs, got {type(script).__name__}")
    for index, spec in enumerate(script):
        try:
            _validate_spec(spec)
        except ScriptError as exc:
            raise ScriptError(f"script[{index}]: {exc}") from None
    return script


def _validate_spec(spec: Any) -> None:
    if not isinstance(spec, dict):
        raise ScriptError(f"a spec must be an object, got {type(spec).__name__}")
    for key, value in spec.items():
        if key.startswith("_"):
            continue
        if key in _INT_KEYS:
            _check_int(key, value, _INT_KEYS[key])
        elif key in _TYPED_KEYS:
            if not isinstance(value, _TYPED_KEYS[key]):
                raise ScriptError(f"{key!r} has the wrong type {type(value).__name__}")
        else:
            raise ScriptError(f"unknown key {key!r}")
    _validate_details(spec)


def _check_int(key: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ScriptError(f"{key!r} must be an integer >= {minimum}, got {value!r}")


def _validate_details(spec: dict[str, Any]) -> None:
    for call in spec.get("tool_calls", []):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ScriptError(f"tool call needs a string 'name': {call!r}")
        if not isinstance(call.get("arguments", {}), (dict, str)) or not isinstance(call.get("id", ""), str):
            raise ScriptError(f"tool call 'arguments' must be an object or a string, 'id' a string: {call!r}")
    for key, value in spec.get("usage", {}).items():
        if key not in DEFAULT_USAGE:
            raise ScriptError(f"unknown usage key {key!r}")
        _check_int(f"usage.{key}", value, 0)
    if not all(isinstance(frame, str) for frame in spec.get("frames", [])):
        raise ScriptError("'frames' must be a list of strings")
    if "content_type" in spec and "status" not in spec:
        raise ScriptError("'content_type' applies to a plain 'status' response only")
    if spec.get("burst") and any(key in spec for key in _PER_EVENT_KEYS):
        raise ScriptError(f"'burst' writes the stream at once: not with {', '.join(_PER_EVENT_KEYS)}")
    if spec.get("framing", "chunked") not in ("chunked", "close"):
        raise ScriptError("'framing' must be 'chunked' or 'close'")
    for key, text_key in (("text_deltas", "text"), ("thinking_deltas", "thinking")):
        if key in spec and text_key in spec and len(spec[text_key]) < spec[key]:
            raise ScriptError(f"{key!r}={spec[key]} exceeds the {len(spec[text_key])} characters of {text_key!r}")


def load_script(path: str) -> list[dict[str, Any]]:
    """Read and validate a script file. Raises ScriptError (also for unreadable files or invalid JSON)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return validate_script(json.load(handle))
    except (OSError, ValueError) as exc:
        if isinstance(exc, ScriptError):
            raise
        raise ScriptError(f"cannot load script {path}: {exc}") from None


def body_matches(body: Any, needle: str) -> bool:
    """True when `needle` occurs in any string value nested in `body`."""
    if isinstance(body, str):
        return needle in body
    if isinstance(body, dict):
        return any(body_matches(value, needle) for value in body.values())
    if isinstance(body, list):
        return any(body_matches(value, needle) for value in body)
    return False


# ------------------------------------------------------------------------------------------ chunking


def split_words(text: str, words_per_chunk: int = 1) -> list[str]:
    """Split into chunks of N words, each word keeping its trailing whitespace; "".join() gives `text` back."""
    words = re.findall(r"\s*\S+\s*", text, flags=re.DOTALL)
    if not words:
        return [text] if text else []
    return ["".join(words[i : i + words_per_chunk]) for i in range(0, len(words), words_per_chunk)]


def split_even(text: str, count: int) -> list[str]:
    """Split into exactly `count` non-empty pieces whose lengths differ by at most one (needs len >= count)."""
    size, extra = divmod(len(text), count)
    pieces, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


def split_chars(text: str, size: int | None) -> list[str]:
    """Split into chunks of `size` characters (one chunk when size is None)."""
    if not size or not text:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def _pieces(spec: dict[str, Any], key: str) -> list[str]:
    text = spec.get(key, "")
    count = spec.get(f"{key}_deltas")
    if count is not None:
        if key == "text" and "text" not in spec:
            text = " ".join(f"w{i}" for i in range(count))
        return split_even(text, count)
    return split_words(text, spec.get("text_chunk_words", 1))


class _ToolCall(NamedTuple):
    id: str
    name: str
    arguments: str


def _tool_calls(spec: dict[str, Any], seq: int, prefix: str) -> list[_ToolCall]:
    calls = []
    for i, call in enumerate(spec.get("tool_calls", [])):
        args = call.get("arguments", {})
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        calls.append(_ToolCall(call.get("id") or f"{prefix}_fake_{seq}_{i}", call["name"], text))
    return calls


def _usage(spec: dict[str, Any]) -> dict[str, int]:
    return {**DEFAULT_USAGE, **spec.get("usage", {})}


_TO_ANTHROPIC = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "toolUse": "tool_use"}
_TO_OPENAI = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool_calls", "toolUse": "tool_calls"}


def _stop_reason(spec: dict[str, Any], api: str) -> str:
    table = _TO_ANTHROPIC if api == "anthropic" else _TO_OPENAI
    if "stop_reason" in spec:
        return table.get(spec["stop_reason"], spec["stop_reason"])
    if spec.get("tool_calls"):
        return "tool_use" if api == "anthropic" else "tool_calls"
    return "end_turn" if api == "anthropic" else "stop"


# ---------------------------------------------------------------------------------------- SSE streams


_SURROGATE = re.compile("[\ud800-\udfff]")


def sse_frame(data: Any, event: str | None = None) -> bytes:
    """One SSE event: optional `event:` line, one `data:` line (compact JSON unless `data` is a str). A surrogate
    code point in a script string (half an emoji, `"A\\ud83d"`) is sent as its `\\uXXXX` escape, as a server
    that splits UTF-16 text between two chunks does."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    payload = _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", payload)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


class Plan(NamedTuple):
    """A whole stream: `frames` to write in order; `terminal_at` = index of the first terminal frame."""

    frames: list[bytes]
    terminal_at: int


def anthropic_stream(spec: dict[str, Any], seq: int, body: dict[str, Any]) -> Plan:
    """Frames of an Anthropic Messages stream for `spec` (format: docs.anthropic.com, "Streaming Messages")."""
    frames = [_anthropic("message_start", message=_anthropic_message(spec, seq, body)), _anthropic("ping")]
    blocks = _anthropic_blocks(spec, seq)
    for index, (start, deltas) in enumerate(blocks):
        frames.append(_anthropic("content_block_start", index=index, content_block=start))
        frames.extend(_anthropic("content_block_delta", index=index, delta=delta) for delta in deltas)
        frames.append(_anthropic("content_block_stop", index=index))
    terminal_at = len(frames)
    delta = {"stop_reason": _stop_reason(spec, "anthropic"), "stop_sequence": None}
    frames.append(_anthropic("message_delta", delta=delta, usage={"output_tokens": _usage(spec)["output"]}))
    frames.append(_anthropic("message_stop"))
    return Plan(frames, terminal_at)


def _anthropic(kind: str, **fields: Any) -> bytes:
    return sse_frame({"type": kind, **fields}, event=kind)


def _anthropic_message(spec: dict[str, Any], seq: int, body: dict[str, Any]) -> dict[str, Any]:
    usage = _usage(spec)
    return {
        "id": f"msg_fake_{seq}", "type": "message", "role": "assistant",
        "model": spec.get("model") or body.get("model") or "fake-model",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {
            "input_tokens": usage["input"], "cache_creation_input_tokens": usage["cache_write"],
            "cache_read_input_tokens": usage["cache_read"], "output_tokens": min(usage["output"], 1),
        },
    }


def _anthropic_blocks(spec: dict[str, Any], seq: int) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    blocks = []
    if spec.get("thinking"):
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in _pieces(spec, "thinking")]
        deltas.append({"type": "signature_delta", "signature": spec.get("signature") or f"sig_fake_{seq}"})
        blocks.append(({"type": "thinking", "thinking": "", "signature": ""}, deltas))
    if spec.get("text") or "text_deltas" in spec:
        deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(spec, "text")]
        blocks.append(({"type": "text", "text": ""}, deltas))
    for call in _tool_calls(spec, seq, "toolu"):
        chunks = split_chars(call.arguments, spec.get("args_chunk_chars"))
        deltas = [{"type": "input_json_delta", "partial_json": chunk} for chunk in chunks]
        blocks.append(({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}, deltas))
    return blocks


def openai_stream(spec: dict[str, Any], seq: int, body: dict[str, Any]) -> Plan:
    """Frames of an OpenAI Chat Completions stream (format: platform.openai.com, "chat.completion.chunk")."""
    chunk = _openai_chunker(spec, seq, body)
    has_text = bool(spec.get("text")) or "text_deltas" in spec
    frames = [chunk({"role": "assistant", "content": "" if has_text else None})]
    reasoning_key = spec.get("reasoning_field", "reasoning_content")
    if spec.get("thinking"):
        frames.extend(chunk({reasoning_key: piece}) for piece in _pieces(spec, "thinking"))
    if has_text:
        frames.extend(chunk({"content": piece}) for piece in _pieces(spec, "text"))
    for index, call in enumerate(_tool_calls(spec, seq, "call")):
        head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        frames.append(chunk({"tool_calls": [head]}))
        for piece in split_chars(call.arguments, spec.get("args_chunk_chars")):
            frames.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    terminal_at = len(frames)
    frames.append(chunk({}, _stop_reason(spec, "openai")))
    if (body.get("stream_options") or {}).get("include_usage"):
        frames.append(chunk(None, usage=_openai_usage(spec)))
    frames.append(sse_frame("[DONE]"))
    return Plan(frames, terminal_at)


def _openai_chunker(spec: dict[str, Any], seq: int, body: dict[str, Any]) -> Callable[..., bytes]:
    base = {
        "id": f"chatcmpl-fake-{seq}", "object": "chat.completion.chunk", "created": int(time.time()),
        "model": spec.get("model") or body.get("model") or "fake-model",
    }

    def chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: dict | None = None) -> bytes:
        if usage is not None:
            return sse_frame({**base, "choices": [], "usage": usage})
        return sse_frame({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    return chunk


def _openai_usage(spec: dict[str, Any]) -> dict[str, Any]:
    # OpenAI counts cached prompt tokens inside prompt_tokens; cache writes have no standard field, so they
    # follow the `cache_write_tokens` detail some OpenAI-compatible hosts send.
    usage = _usage(spec)
    prompt = usage["input"] + usage["cache_read"] + usage["cache_write"]
    details: dict[str, int] = {"cached_tokens": usage["cache_read"]}
    if usage["cache_write"]:
        details["cache_write_tokens"] = usage["cache_write"]
    return {
        "prompt_tokens": prompt, "completion_tokens": usage["output"],
        "total_tokens": prompt + usage["output"], "prompt_tokens_details": details,
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


# ----------------------------------------------------------------------------------------- errors

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
    413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error",
}
_OPENAI_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
                       429: "rate_limit_exceeded"}


def error_body(api: str | None, status: int, message: str) -> dict[str, Any]:
    """The JSON error body the real API sends for `status`: Anthropic `{"type":"error","error":{type,message}}`,
    OpenAI (and unknown paths) `{"error":{message,type,param,code}}`, other APIs their module's shape."""
    if api in EXTRA_API_MODULES:
        return _extra_api(api).error_body(status, message)
    if api == "anthropic":
        return {"type": "error", "error": {"type": _ANTHROPIC_ERROR_TYPES.get(status, "api_error"), "message": message}}
    kind = _OPENAI_ERROR_TYPES.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind if status == 429 else None}}


def error_frame(api: str, spec: dict[str, Any]) -> bytes:
    """The in-stream error event for `spec["error_event"]` (true, a message, or the inner error object)."""
    if api in EXTRA_API_MODULES:
        return _extra_api(api).error_frame(spec)
    given = spec.get("error_event", True)
    if api == "anthropic":
        error = {"type": "overloaded_error", "message": "Overloaded"}
    else:
        error = {"message": "The server had an error while processing your request.", "type": "server_error"}
    if isinstance(given, str):
        error["message"] = given
    elif isinstance(given, dict):
        error = given
    if api == "anthropic":
        return sse_frame({"type": "error", "error": error}, event="error")
    return sse_frame({"error": error})


# ----------------------------------------------------------------------------------------- server


class _Abort(Exception):
    """The stream ends early with the given outcome."""

    def __init__(self, outcome: str, *, clean: bool = False) -> None:
        super().__init__(outcome)
        self.outcome = outcome
        self.clean = clean  # end the HTTP body properly (the SSE stream may still lack its terminal events)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: FakeLLMServer

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name with getfqdn, which can take a while; loopback needs none.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up is routine here (aborts, drops); anything else is a bug worth seeing.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class FakeLLMServer:
    """Scripted Anthropic / OpenAI SSE server on a loopback port, run in a background thread.

    Example::

        with FakeLLMServer([{"text": "hi"}]) as server:
            ...  # point a client at server.base_url_openai
            server.wait_for_requests(1, done=True)
    """

    def __init__(self, script: list[dict[str, Any]] | None = None, *, host: str = "127.0.0.1", port: int = 0,
                 requests_log: str | None = None) -> None:
        self._cond = threading.Condition()  # guards everything below; an RLock so predicates may read properties
        self._script: list[dict[str, Any]] = []
        self._consumed: list[bool] = []
        self._requests: list[dict[str, Any]] = []
        self._release_generation = 0
        self._stopping = threading.Event()
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._address = (host, port)
        self._requests_log = requests_log
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.set_script(script or [])

    # -- lifecycle

    def start(self) -> FakeLLMServer:
        """Bind and serve in a daemon thread; returns self. Raises OSError if the port cannot be bound."""
        self._stopping.clear()
        self._httpd = _HTTPServer(self._address, _Handler)
        self._httpd.owner = self
        self._wake = socket.socketpair()
        self._thread = threading.Thread(target=self._accept_loop, args=(self._httpd, self._wake[0]),
                                        name="fake-llm", daemon=True)
        self._thread.start()
        return self

    def _accept_loop(self, httpd: _HTTPServer, wake: socket.socket) -> None:
        """`serve_forever` that `stop` ends at once through `wake` (serve_forever looks for a shutdown every
        poll interval: each test's teardown waited for it, 25 ms on average)."""
        while not self._stopping.is_set():
            readable, _, _ = select.select([httpd, wake], [], [])
            if httpd in readable and not self._stopping.is_set():
                httpd.handle_request()  # the connection is ready: accepts it and starts its handler thread

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving, release hangs, close open connections and wait up to `timeout` s for handlers."""
        if self._httpd is None:
            return
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        self._wake[1].send(b"x")
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        for end in self._wake:
            end.close()
        self._httpd.server_close()
        with self._cond:
            connections = dict(self._connections)
        for conn in connections:
            _shutdown_socket(conn)
        deadline = time.monotonic() + timeout
        for thread in [self._thread, *connections.values()]:
            if thread is not None and thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))
        self._httpd = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("fake LLM server is not running")
        return self._httpd.server_address[1]

    @property
    def base_url_anthropic(self) -> str:
        """`http://127.0.0.1:PORT` (Anthropic clients append `/v1/messages`)."""
        return f"http://{self._address[0]}:{self.port}"

    @property
    def base_url_openai(self) -> str:
        """`http://127.0.0.1:PORT/v1` (OpenAI clients append `/chat/completions` or `/responses`)."""
        return f"{self.base_url_anthropic}/v1"

    @property
    def base_url_gemini(self) -> str:
        """`http://127.0.0.1:PORT/v1beta` (Gemini clients append `/models/<id>:streamGenerateContent`)."""
        return f"{self.base_url_anthropic}/v1beta"

    # -- script

    def set_script(self, script: list[dict[str, Any]]) -> None:
        """Replace the whole script (consumed or not). Raises ScriptError for an invalid script."""
        validate_script(script)
        with self._cond:
            self._script = list(script)
            self._consumed = [False] * len(script)

    def extend_script(self, script: list[dict[str, Any]]) -> None:
        """Append specs to the script. Raises ScriptError for an invalid script."""
        validate_script(script)
        with self._cond:
            self._script.extend(script)
            self._consumed.extend([False] * len(script))

    @property
    def remaining(self) -> int:
        """Number of specs not consumed yet."""
        with self._cond:
            return self._consumed.count(False)

    def _take_spec(self, body: Any) -> tuple[int, dict[str, Any]] | None:
        with self._cond:
            for index, spec in enumerate(self._script):
                if not self._consumed[index] and ("match" not in spec or body_matches(body, spec["match"])):
                    self._consumed[index] = True
                    return index, spec
        return None

    # -- recorded requests

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Snapshot list of the recorded request dicts (the dicts are live: updated while responses run)."""
        with self._cond:
            return list(self._requests)

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        """Block until `predicate()` is true (re-checked on every request change). Raises TimeoutError.

        A predicate raising LookupError (e.g. `server.requests[0]` before any request) counts as false.
        """

        def check() -> bool:
            try:
                return bool(predicate())
            except LookupError:
                return False

        with self._cond:
            if not self._cond.wait_for(check, timeout):
                raise TimeoutError(f"fake LLM: condition not met within {timeout}s; requests={self._summary()}")

    def wait_for_requests(self, count: int, timeout: float = 10.0, *, done: bool = False) -> list[dict[str, Any]]:
        """Block until `count` requests were recorded (and, with `done`, all of them have an outcome)."""

        def ready() -> bool:
            head = self._requests[:count]
            return len(head) >= count and (not done or all(r["outcome"] is not None for r in head))

        self.wait_for(ready, timeout)
        return self.requests

    def release_hangs(self) -> None:
        """Let the hang of every stream started so far (hanging now or later) go on with the rest of the stream."""
        with self._cond:
            self._release_generation += 1
            self._cond.notify_all()

    def _summary(self) -> list[tuple[int, str, Any]]:
        return [(r["seq"], r["path"], r["outcome"]) for r in self._requests]

    def _record(self, method: str, path: str, headers: dict[str, str], body: Any) -> dict[str, Any]:
        with self._cond:
            record = {
                "seq": len(self._requests) + 1, "method": method, "path": path, "api": _api_for(path),
                "headers": headers, "body": body, "spec_index": None, "events_sent": 0, "hanging": False,
                "hang_result": None, "client_disconnected": False, "outcome": None,
            }
            self._requests.append(record)
            self._cond.notify_all()
            return record

    def _update(self, record: dict[str, Any], **fields: Any) -> None:
        with self._cond:
            record.update(fields)
            self._cond.notify_all()
            if "outcome" in fields and self._requests_log:
                with open(self._requests_log, "a", encoding="utf-8") as log:
                    log.write(json.dumps(record, ensure_ascii=False) + "\n")

    def _track(self, conn: socket.socket, active: bool) -> None:
        with self._cond:
            if active:
                self._connections[conn] = threading.current_thread()
            else:
                self._connections.pop(conn, None)


def _raw_plan(spec: dict[str, Any]) -> Plan:
    """The spec's `frames`, verbatim, as the whole stream (no terminal frame of the API's own)."""
    frames = [frame.encode() for frame in spec["frames"]]
    return Plan(frames, len(frames))


def _api_for(path: str) -> str | None:
    route = path.split("?", 1)[0].rstrip("/")
    if route.endswith("/chat/completions"):
        return "openai"
    if route.endswith("/messages"):
        return "anthropic"
    return next((api for api in EXTRA_API_MODULES if _extra_api(api).matches(route)), None)


EXTRA_API_MODULES = {"responses": "fake_responses", "gemini": "fake_gemini"}
"""Record `api` name -> module beside this file serving that API (see "Other APIs" in the module docstring)."""


def _extra_api(api: str) -> Any:
    name = EXTRA_API_MODULES[api]
    # Imported late: those modules import helpers from this one. Standalone, this file's directory is on sys.path.
    return importlib.import_module(f"{__package__}.{name}" if __package__ else name)


def _request_problem(api: str, body: dict[str, Any]) -> str | None:
    if api in EXTRA_API_MODULES:
        return _extra_api(api).request_problem(body)
    return None if body.get("stream") else "fake LLM only answers streaming requests (\"stream\": true)"


def _stream_builder(api: str) -> Callable[[dict[str, Any], int, dict[str, Any]], Plan]:
    if api in EXTRA_API_MODULES:
        return _extra_api(api).stream
    return anthropic_stream if api == "anthropic" else openai_stream


def _shutdown_socket(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed by the peer or the handler


class _Handler(BaseHTTPRequestHandler):
    """One connection; answers each request from the owner's script (see the module docstring)."""

    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    _release_base = 0  # owner's release generation when the current stream started

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, True)

    def finish(self) -> None:
        self.server.owner._track(self.connection, False)
        try:
            super().finish()
        except OSError:
            pass  # the client is gone; nothing left to flush

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test and benchmark output clean

    def do_GET(self) -> None:
        record = self.server.owner._record("GET", self.path, self._headers(), None)
        self._finish_plain(record, 404, error_body(None, 404, f"fake LLM: no GET route {self.path}"), {})

    def do_POST(self) -> None:
        owner = self.server.owner
        try:
            body, problem = _parse_body(self._read_body())
        except ValueError:  # a Content-Length or chunk size that is not a number
            body, problem = None, "malformed request body framing"
        record = owner._record("POST", self.path, self._headers(), body)
        api = record["api"]
        if api is None:
            return self._finish_plain(record, 404, error_body(None, 404, f"fake LLM: no route {self.path}"), {})
        if problem is None:
            problem = _request_problem(api, body)
        if problem is not None:
            return self._finish_plain(record, 400, error_body(api, 400, problem), {}, "bad_request")
        self._answer(record, api, body)

    def _answer(self, record: dict[str, Any], api: str, body: dict[str, Any]) -> None:
        owner = self.server.owner
        taken = owner._take_spec(body)
        if taken is None:
            message = f"fake LLM script exhausted: no response left for request #{record['seq']}"
            return self._finish_plain(record, 500, error_body(api, 500, message), {}, "exhausted")
        index, spec = taken
        owner._update(record, spec_index=index)
        if "status" in spec:
            default = error_body(api, spec["status"], f"fake LLM scripted HTTP {spec['status']}")
            return self._finish_plain(record, spec["status"], spec.get("body", default), spec.get("headers", {}),
                                      content_type=spec.get("content_type", "application/json"))
        if api == "gemini" and "model" not in spec:
            spec = {**spec, "model": _extra_api(api).model_of(record["path"])}  # Gemini's body names no model
        plan = _raw_plan(spec) if "frames" in spec else _stream_builder(api)(spec, record["seq"], body)
        outcome = self._stream(record, api, spec, plan)
        owner._update(record, outcome=outcome, client_disconnected=outcome == "client_disconnected")

    # -- request reading

    def _headers(self) -> dict[str, str]:
        return {key.lower(): value for key, value in self.headers.items()}

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return self._read_chunked()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self) -> bytes:
        parts = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()  # the blank line after the last chunk (no trailers expected)
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline()

    # -- plain responses

    def _finish_plain(self, record: dict[str, Any], status: int, body: Any, headers: dict[str, str],
                      outcome: str | None = None, content_type: str = "application/json") -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body, ensure_ascii=False).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", f"req_fake_{record['seq']}")
            for key, value in headers.items():
                self.send_header(key, str(value))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            outcome = "client_disconnected"
        default = "not_found" if status == 404 and record["api"] is None else "error_status"
        self.server.owner._update(record, outcome=outcome or default,
                                  client_disconnected=outcome == "client_disconnected")

    # -- streams

    def _stream(self, record: dict[str, Any], api: str, spec: dict[str, Any], plan: Plan) -> str:
        """Write `plan` with the spec's failures and timing; returns the outcome for the record."""
        chunked = spec.get("framing", "chunked") == "chunked"
        outcome, clean = "ok", True
        # Taken before any byte is sent, so a release triggered by events the client already saw counts.
        self._release_base = self.server.owner._release_generation
        try:
            self._start_stream(spec, chunked, record["seq"])
            if spec.get("burst"):
                self.wfile.write(b"".join(_framed(frame, chunked) for frame in plan.frames))
                self.server.owner._update(record, events_sent=len(plan.frames))
            for position in range(0 if spec.get("burst") else len(plan.frames) + 1):
                self._before_event(record, api, spec, plan, position)
                if position < len(plan.frames):
                    self._send(plan.frames[position], chunked)
                    self.server.owner._update(record, events_sent=position + 1)
        except _Abort as abort:
            outcome, clean = abort.outcome, abort.clean
        except OSError:
            outcome, clean = self._lost_outcome(), False
        if clean:
            try:
                self._end_body(chunked)
            except OSError:
                outcome, clean = self._lost_outcome(), False
        self.close_connection = self.close_connection or not clean
        return outcome

    def _lost_outcome(self) -> str:
        return "server_stopped" if self.server.owner._stopping.is_set() else "client_disconnected"

    def _start_stream(self, spec: dict[str, Any], chunked: bool, seq: int) -> None:
        self.send_response(200)
        extra = {key: value for key, value in spec.get("headers", {}).items() if key.lower() != "content-type"}
        labels = [value for key, value in spec.get("headers", {}).items() if key.lower() == "content-type"]
        self.send_header("Content-Type", labels[0] if labels else "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", f"req_fake_{seq}")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        for key, value in extra.items():
            self.send_header(key, str(value))
        self.end_headers()

    def _end_body(self, chunked: bool) -> None:
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _send(self, frame: bytes, chunked: bool) -> None:
        # One write per event, straight to the socket (wfile is unbuffered), so the client sees it at once.
        self.wfile.write(_framed(frame, chunked))
        self.wfile.flush()

    def _before_event(self, record: dict[str, Any], api: str, spec: dict[str, Any], plan: Plan, pos: int) -> None:
        owner = self.server.owner
        last = len(plan.frames)
        if spec.get("hang", "hang_after" in spec):
            if pos == min(spec.get("hang_after", 0), last):
                self._hang(record, spec.get("hang_ms", DEFAULT_HANG_MS))
        if "drop_after" in spec and pos == min(spec["drop_after"], last):
            raise _Abort("dropped")
        if "error_event" in spec or "error_after" in spec:
            if pos == min(spec.get("error_after", plan.terminal_at), last):
                self._send(error_frame(api, spec), spec.get("framing", "chunked") == "chunked")
                raise _Abort("sse_error", clean=True)
        if pos > 0 and pos < last and spec.get("delay_ms"):
            owner._stopping.wait(spec["delay_ms"] / 1000)
        if owner._stopping.is_set():
            raise _Abort("server_stopped")

    def _hang(self, record: dict[str, Any], hang_ms: int) -> None:
        owner = self.server.owner
        owner._update(record, hanging=True)
        deadline = time.monotonic() + hang_ms / 1000
        result = None
        while result is None:
            if owner._stopping.is_set():
                raise _Abort("server_stopped")
            remaining = deadline - time.monotonic()
            if owner._release_generation != self._release_base:
                result = "released"
            elif remaining <= 0:
                result = "timeout"
            elif self._client_gone(min(remaining, _HANG_POLL_S)):
                owner._update(record, hanging=False)
                raise _Abort(self._lost_outcome())  # stop() also shuts our socket down
        owner._update(record, hanging=False, hang_result=result)

    def _client_gone(self, timeout: float) -> bool:
        """Wait up to `timeout` s; True once the client closed its end of the connection."""
        try:
            readable, _, _ = select.select([self.connection], [], [], timeout)
            if not readable:
                return False
            if self.connection.recv(1, socket.MSG_PEEK) == b"":
                return True
        except OSError:
            return True
        # Bytes are waiting (a pipelined request): the socket stays readable, so wait without select.
        self.server.owner._stopping.wait(timeout)
        return False


def _framed(frame: bytes, chunked: bool) -> bytes:
    """`frame` as it goes on the wire: an HTTP chunk of its own, or verbatim for `framing: close`."""
    return b"%x\r\n%s\r\n" % (len(frame), frame) if chunked else frame


def _parse_body(raw: bytes) -> tuple[Any, str | None]:
    """(parsed JSON object, None) or (None or the parsed value, a problem description)."""
    try:
        body = json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"request body is not valid JSON: {exc}"
    if not isinstance(body, dict):
        return body, "request body must be a JSON object"
    return body, None


# -------------------------------------------------------------------------------------------- CLI


def _write_port_file(path: str, port: int) -> None:
    # Written then renamed, so a reader polling for the file never sees it half-written.
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(f"{port}\n")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point (see the module docstring). Exit codes: 0 stopped by a signal, 2 bad arguments."""
    parser = argparse.ArgumentParser(description="Scripted Anthropic/OpenAI SSE server on a loopback port.")
    parser.add_argument("--script", required=True, help="JSON file: a list of response specs")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--port-file", help="write the bound port here once ready")
    parser.add_argument("--requests-log", help="append one JSON line per finished request")
    args = parser.parse_args(argv)
    try:
        server = FakeLLMServer(load_script(args.script), host=args.host, port=args.port,
                               requests_log=args.requests_log).start()
    except (ScriptError, OSError) as exc:
        print(f"fake_llm: {exc}", file=sys.stderr)
        return 2
    stopped = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopped.set())
    if args.port_file:
        _write_port_file(args.port_file, server.port)
    print(f"listening on {server.base_url_anthropic}", flush=True)
    while not stopped.wait(1.0):  # a timed wait keeps the main thread responsive to signals
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
