"""The OpenAI Responses API route of the fake LLM server: `POST /v1/responses` with `"stream": true`.

Loaded by `fake_llm` on first use (see "Other APIs" there). A request is checked against the rules the real
API enforces before a stream is written (`request_problem`; a violation answers 400 with the API's error
shape), so a test that gets a stream knows the request was valid. Stream format:
platform.openai.com/docs/api-reference/responses-streaming.

Frames for a spec: `response.created`, `response.in_progress`; a reasoning item when the spec has `thinking`
(summary deltas; its `encrypted_content` is the spec's `signature`, default `enc_fake_<req>`); a message item
for `text`; a function_call item per tool call (`call_id` from the call's `id`, default `call_fake_<req>_<i>`,
item id `fc_fake_<req>_<i>`; arguments in `args_chunk_chars` deltas); then `response.completed`, or
`response.incomplete` when `stop_reason` is `length`/`max_tokens` (reason `max_output_tokens`) or
`content_filter`. `usage.reasoning` becomes `output_tokens_details.reasoning_tokens`. An `error_event` is a
`response.failed` event whose `response.error` is the given object (default: a `server_error`).
"""

from __future__ import annotations

import json
import time
from typing import Any

try:
    from .fake_llm import Plan, _pieces, _tool_calls, _usage, split_chars, sse_frame
except ImportError:  # run as a script: this file's directory is on sys.path
    from fake_llm import Plan, _pieces, _tool_calls, _usage, split_chars, sse_frame

API = "responses"
_INCOMPLETE = {"length": "max_output_tokens", "max_tokens": "max_output_tokens", "MAX_TOKENS": "max_output_tokens",
               "content_filter": "content_filter"}
_INPUT_PARTS = {"input_text", "input_image", "input_file"}
_ASSISTANT_PARTS = {"output_text", "refusal", "input_text"}


def matches(route: str) -> bool:
    return route.endswith("/responses")


# ------------------------------------------------------------------------------------ request checks


def request_problem(body: dict[str, Any]) -> str | None:
    """The first rule `body` breaks, as the API would word it, or None for a valid streaming request."""
    if body.get("stream") is not True:
        return "fake LLM only answers streaming requests (\"stream\": true)"
    if not isinstance(body.get("model"), str) or not isinstance(body.get("input"), list):
        return "'model' (string) and 'input' (array) are required"
    for index, item in enumerate(body["input"]):
        problem = _item_problem(item)
        if problem:
            return f"Invalid 'input[{index}]': {problem}"
    return _pairing_problem(body["input"]) or _tools_problem(body.get("tools", []))


def _item_problem(item: Any) -> str | None:
    if not isinstance(item, dict):
        return "expected an object"
    kind = item.get("type", "message")
    if kind == "message":
        return _message_problem(item)
    if kind == "function_call":
        if not all(isinstance(item.get(key), str) and item[key] for key in ("call_id", "name", "arguments")):
            return "function_call needs string 'call_id', 'name' and 'arguments'"
        if "id" in item and not str(item["id"]).startswith("fc_"):
            return f"Invalid 'id': '{item['id']}'. Expected an ID that begins with 'fc'."
        return None if _is_json_object(item["arguments"]) else "'arguments' must be a JSON object string"
    if kind == "function_call_output":
        output = item.get("output")
        if not isinstance(item.get("call_id"), str) or not isinstance(output, (str, list)):
            return "function_call_output needs a string 'call_id' and a string or array 'output'"
        return None if isinstance(output, str) else _parts_problem(output, _INPUT_PARTS)
    if kind == "reasoning":
        if not str(item.get("id", "")).startswith("rs_") or not isinstance(item.get("summary"), list):
            return "reasoning items need an 'id' beginning with 'rs' and a 'summary' array"
        return None if isinstance(item.get("encrypted_content"), str) else "reasoning item without encrypted_content"
    return f"unknown item type {kind!r}"


def _message_problem(item: dict[str, Any]) -> str | None:
    role, content = item.get("role"), item.get("content")
    if role not in ("user", "assistant", "system", "developer"):
        return f"unknown role {role!r}"
    if "id" in item and not str(item["id"]).startswith("msg_"):
        return f"Invalid 'id': '{item['id']}'. Expected an ID that begins with 'msg'."
    if isinstance(content, str):
        return None
    if not isinstance(content, list) or not content:
        return "'content' must be a string or a non-empty array"
    return _parts_problem(content, _ASSISTANT_PARTS if role == "assistant" else _INPUT_PARTS)


def _parts_problem(parts: list[Any], allowed: set[str]) -> str | None:
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in allowed:
            return f"content part type {kind!r} is not allowed here"
        if kind == "input_image" and not str(part.get("image_url", "")).startswith("data:image/"):
            return "input_image needs a data URL"
    return None


def _pairing_problem(items: list[dict[str, Any]]) -> str | None:
    """Every output answers an earlier call, every call gets an output, reasoning precedes another item."""
    calls = [item["call_id"] for item in items if item.get("type") == "function_call"]
    outputs = [item["call_id"] for item in items if item.get("type") == "function_call_output"]
    seen: set[str] = set()
    for item in items:
        if item.get("type") == "function_call":
            seen.add(item["call_id"])
        elif item.get("type") == "function_call_output" and item["call_id"] not in seen:
            return f"No tool call found for function call output with call_id {item['call_id']}."
    missing = [call for call in calls if call not in outputs]
    if missing:
        return f"No tool output found for function call {missing[0]}."
    if items and items[-1].get("type") == "reasoning":
        return f"Item '{items[-1]['id']}' of type 'reasoning' was provided without its required following item."
    return None


def _tools_problem(tools: Any) -> str | None:
    if not isinstance(tools, list):
        return "'tools' must be an array"
    for tool in tools:
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(tool.get("name"), str):
            return "each tool needs type 'function' and a 'name'"
        if not isinstance(tool.get("parameters"), dict):
            return f"tool {tool['name']!r} needs a 'parameters' object"
    return None


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


# ------------------------------------------------------------------------------------------ streams


class _Frames:
    """Collects events with increasing `sequence_number`s."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def add(self, kind: str, **fields: Any) -> None:
        self.frames.append(sse_frame({"type": kind, "sequence_number": len(self.frames), **fields}, event=kind))


def stream(spec: dict[str, Any], seq: int, body: dict[str, Any]) -> Plan:
    """Frames of a Responses stream for `spec` (see the module docstring)."""
    out, response = _Frames(), _response(spec, seq, body, "in_progress")
    out.add("response.created", response=response)
    out.add("response.in_progress", response=response)
    index = 0
    if spec.get("thinking"):
        _reasoning(out, index, spec, seq)
        index += 1
    if spec.get("text") or "text_deltas" in spec:
        _message(out, index, _pieces(spec, "text"), f"msg_fake_{seq}")
        index += 1
    for number, call in enumerate(_tool_calls(spec, seq, "call")):
        _function_call(out, index + number, call, f"fc_fake_{seq}_{number}", spec.get("args_chunk_chars"))
    terminal_at = len(out.frames)
    reason = _INCOMPLETE.get(spec.get("stop_reason", ""))
    final = _response(spec, seq, body, "incomplete" if reason else "completed")
    final["usage"] = _usage_object(spec)
    if reason:
        final["incomplete_details"] = {"reason": reason}
    out.add("response.incomplete" if reason else "response.completed", response=final)
    return Plan(out.frames, terminal_at)


def _response(spec: dict[str, Any], seq: int, body: dict[str, Any], status: str) -> dict[str, Any]:
    return {"id": f"resp_fake_{seq}", "object": "response", "created_at": int(time.time()), "status": status,
            "model": spec.get("model") or body.get("model") or "fake-model", "output": []}


def _reasoning(out: _Frames, index: int, spec: dict[str, Any], seq: int) -> None:
    item_id = f"rs_fake_{seq}"
    out.add("response.output_item.added", output_index=index, item={"id": item_id, "type": "reasoning", "summary": []})
    part = {"item_id": item_id, "output_index": index, "summary_index": 0}
    out.add("response.reasoning_summary_part.added", **part, part={"type": "summary_text", "text": ""})
    for piece in _pieces(spec, "thinking"):
        out.add("response.reasoning_summary_text.delta", **part, delta=piece)
    out.add("response.reasoning_summary_text.done", **part, text=spec["thinking"])
    out.add("response.reasoning_summary_part.done", **part, part={"type": "summary_text", "text": spec["thinking"]})
    item = {"id": item_id, "type": "reasoning", "summary": [{"type": "summary_text", "text": spec["thinking"]}],
            "encrypted_content": spec.get("signature") or f"enc_fake_{seq}"}
    out.add("response.output_item.done", output_index=index, item=item)


def _message(out: _Frames, index: int, pieces: list[str], item_id: str) -> None:
    head = {"id": item_id, "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    out.add("response.output_item.added", output_index=index, item=head)
    where = {"item_id": item_id, "output_index": index, "content_index": 0}
    out.add("response.content_part.added", **where, part={"type": "output_text", "text": "", "annotations": []})
    for piece in pieces:
        out.add("response.output_text.delta", **where, delta=piece)
    text = "".join(pieces)
    part = {"type": "output_text", "text": text, "annotations": []}
    out.add("response.output_text.done", **where, text=text)
    out.add("response.content_part.done", **where, part=part)
    out.add("response.output_item.done", output_index=index, item={**head, "status": "completed", "content": [part]})


def _function_call(out: _Frames, index: int, call: Any, item_id: str, chunk_chars: int | None) -> None:
    head = {"id": item_id, "type": "function_call", "status": "in_progress", "call_id": call.id,
            "name": call.name, "arguments": ""}
    out.add("response.output_item.added", output_index=index, item=head)
    for piece in split_chars(call.arguments, chunk_chars):
        out.add("response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=piece)
    out.add("response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=call.arguments)
    done = {**head, "status": "completed", "arguments": call.arguments}
    out.add("response.output_item.done", output_index=index, item=done)


def _usage_object(spec: dict[str, Any]) -> dict[str, Any]:
    usage = _usage(spec)
    prompt = usage["input"] + usage["cache_read"] + usage["cache_write"]
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": usage["cache_read"]},
            "output_tokens": usage["output"], "output_tokens_details": {"reasoning_tokens": usage["reasoning"]},
            "total_tokens": prompt + usage["output"]}


# ------------------------------------------------------------------------------------------- errors


def error_body(status: int, message: str) -> dict[str, Any]:
    """The API's JSON error body: `{"error": {message, type, param, code}}`."""
    kind = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
            429: "rate_limit_exceeded"}.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind if status == 429 else None}}


def error_frame(spec: dict[str, Any]) -> bytes:
    """A `response.failed` event carrying `spec["error_event"]` (true, a message, or the error object)."""
    given = spec.get("error_event", True)
    error = {"code": "server_error", "message": "The server had an error while processing your request."}
    if isinstance(given, str):
        error["message"] = given
    elif isinstance(given, dict):
        error = given
    response = {"id": "resp_fake", "object": "response", "status": "failed", "error": error}
    return sse_frame({"type": "response.failed", "response": response}, event="response.failed")
