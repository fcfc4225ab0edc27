"""The Gemini route of the fake LLM server: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`.

Loaded by `fake_llm` on first use (see "Other APIs" there). Gemini requests carry no `"stream"` flag: the
method name and `alt=sse` make them streaming. A request is checked against the rules the real API enforces
(`request_problem`; a violation answers 400 `INVALID_ARGUMENT`), so a test that gets a stream knows the request
was valid; among them, a function call's `id` must come back in the `functionResponse` that answers it, and
`functionResponse.parts` hold only `inlineData`. Format: ai.google.dev/api/generate-content and ai.google.dev/gemini-api/docs/thinking.

Chunks for a spec: thought parts for `thinking` (the last one carries `thoughtSignature`: the spec's
`signature`, default `sig_fake_<req>`), text parts for `text`, one chunk per tool call (`functionCall` with the
call's `id` when the spec gives one; the first call carries `thoughtSignature` `sig_call_fake_<req>`), then a
final chunk with `finishReason` (`STOP`; `MAX_TOKENS` for `length`/`max_tokens`; other values verbatim, e.g.
`SAFETY`) and `usageMetadata`. Every chunk's `modelVersion` is the spec's `model`, default the requested model
(the id in the path). Tool-call `arguments` given as a string that is not a JSON object end the stream
with `MALFORMED_FUNCTION_CALL`, as the real API does. `usage.reasoning` is `thoughtsTokenCount`.
"""

from __future__ import annotations

import json
import re
from typing import Any

try:
    from .fake_llm import Plan, _pieces, _usage, sse_frame
except ImportError:  # run as a script: this file's directory is on sys.path
    from fake_llm import Plan, _pieces, _usage, sse_frame

API = "gemini"
_ROUTE = re.compile(r"/models/[^/:]+:streamGenerateContent$")
_FINISH = {"length": "MAX_TOKENS", "max_tokens": "MAX_TOKENS", "stop": "STOP", "end_turn": "STOP",
           "tool_use": "STOP", "tool_calls": "STOP", "toolUse": "STOP"}
_DATA_KEYS = ("text", "inlineData", "functionCall", "functionResponse")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")
_STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def matches(route: str) -> bool:
    return bool(_ROUTE.search(route))


def model_of(path: str) -> str:
    """The model id in a request path."""
    return path.split("/models/", 1)[-1].split(":", 1)[0]


# ------------------------------------------------------------------------------------ request checks


def request_problem(body: dict[str, Any]) -> str | None:
    """The first rule `body` breaks, as the API would word it, or None for a valid request."""
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return "* GenerateContentRequest.contents: contents is not specified"
    for index, content in enumerate(contents):
        problem = _content_problem(content)
        if problem:
            return f"* GenerateContentRequest.contents[{index}]: {problem}"
    return (_order_problem(contents) or _system_problem(body.get("systemInstruction"))
            or _tools_problem(body.get("tools", [])))


def _content_problem(content: Any) -> str | None:
    if not isinstance(content, dict) or content.get("role") not in ("user", "model"):
        return "role must be 'user' or 'model'"
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        return "contents.parts must not be empty"
    for part in parts:
        present = [key for key in _DATA_KEYS if isinstance(part, dict) and key in part]
        if len(present) != 1:
            return f"a part must hold exactly one of {', '.join(_DATA_KEYS)}; got {present}"
        problem = _part_problem(part, present[0], content["role"])
        if problem:
            return problem
    return None


def _part_problem(part: dict[str, Any], key: str, role: str) -> str | None:
    value = part[key]
    if key == "text":
        return None if isinstance(value, str) else "text must be a string"
    if key == "inlineData":
        ok = isinstance(value, dict) and str(value.get("mimeType", "")).startswith("image/") and value.get("data")
        return None if ok else "inlineData needs mimeType and data"
    if key == "functionCall" and role != "model":
        return "functionCall parts belong to model turns"
    if key == "functionResponse" and role != "user":
        return "functionResponse parts belong to user turns"
    if not isinstance(value, dict) or not _NAME.match(str(value.get("name", ""))):
        return f"{key}.name is invalid"
    payload = value.get("args" if key == "functionCall" else "response", {})
    if not isinstance(payload, dict):
        return f"{key} payload must be an object"
    return _response_parts_problem(value.get("parts", [])) if key == "functionResponse" else None


def _response_parts_problem(parts: Any) -> str | None:
    """`functionResponse.parts`: a list of `{inlineData: {mimeType, data}}` (FunctionResponsePart)."""
    if not isinstance(parts, list):
        return "functionResponse.parts must be a list"
    for part in parts:
        blob = part.get("inlineData") if isinstance(part, dict) and len(part) == 1 else None
        if not (isinstance(blob, dict) and blob.get("mimeType") and blob.get("data")):
            return "functionResponse.parts[] must each hold one inlineData with mimeType and data"
    return None


def _order_problem(contents: list[dict[str, Any]]) -> str | None:
    """Turns alternate, and a model turn's function calls are answered one for one by the next user turn."""
    if contents[0]["role"] != "user":
        return "* GenerateContentRequest.contents: the first content must have role 'user'"
    for before, after in zip(contents, contents[1:]):
        if before["role"] == after["role"]:
            return "Please ensure that multiturn requests alternate between user and model."
    previous: list[dict[str, Any]] = []  # function calls of the turn before
    for content in contents:
        calls, responses = ([p[key] for p in content["parts"] if key in p]
                            for key in ("functionCall", "functionResponse"))
        if responses and not previous:
            return "A functionResponse must follow a model turn with function calls."
        if previous and sorted(c["name"] for c in previous) != sorted(r["name"] for r in responses):
            return ("Please ensure that the number of function response parts is equal to the number of function "
                    "call parts of the function call turn.")
        problem = _id_problem(previous, responses)
        if problem:
            return problem
        previous = calls
    if previous:
        return "The last model turn's function calls have no function responses."
    return None


def _id_problem(calls: list[dict[str, Any]], responses: list[dict[str, Any]]) -> str | None:
    """FunctionCall.id "must be sent back in the associated FunctionResponse": the ids of a turn's calls are
    the ids of the next turn's responses (a response without an id answers a call without one)."""
    if sorted(str(c.get("id", "")) for c in calls) != sorted(str(r.get("id", "")) for r in responses):
        return "* functionResponse.id: each function response must carry the id of the function call it answers"
    return None


def _system_problem(system: Any) -> str | None:
    if system is None:
        return None
    parts = system.get("parts") if isinstance(system, dict) else None
    ok = isinstance(parts, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in parts)
    return None if ok else "* GenerateContentRequest.system_instruction: parts must be text parts"


def _tools_problem(tools: Any) -> str | None:
    if not isinstance(tools, list):
        return "* GenerateContentRequest.tools: must be a list"
    for tool in tools:
        for declaration in (tool.get("functionDeclarations") or []) if isinstance(tool, dict) else [None]:
            if not isinstance(declaration, dict) or not _NAME.match(str(declaration.get("name", ""))):
                return "* GenerateContentRequest.tools[0].function_declarations: invalid name"
            if "parameters" in declaration and "parametersJsonSchema" in declaration:
                return "* function_declarations: set only one of parameters and parametersJsonSchema"
    return None


# ------------------------------------------------------------------------------------------ streams


def stream(spec: dict[str, Any], seq: int, body: dict[str, Any]) -> Plan:
    """Chunks of a streamGenerateContent answer for `spec` (see the module docstring)."""
    def chunk(*args: Any, **kwargs: Any) -> bytes:
        return _chunk(*args, model=spec.get("model", "fake"), **kwargs)

    frames = []
    thoughts = _pieces(spec, "thinking") if spec.get("thinking") else []
    for position, piece in enumerate(thoughts):
        part: dict[str, Any] = {"text": piece, "thought": True}
        if position == len(thoughts) - 1:
            part["thoughtSignature"] = spec.get("signature") or f"sig_fake_{seq}"
        frames.append(chunk(seq, [part]))
    if spec.get("text") or "text_deltas" in spec:
        frames.extend(chunk(seq, [{"text": piece}]) for piece in _pieces(spec, "text"))
    finish = _finish(spec)
    for number, call in enumerate(spec.get("tool_calls", [])):
        part = _call_part(call, seq, number)
        if part is None:
            finish = "MALFORMED_FUNCTION_CALL"
            break
        frames.append(chunk(seq, [part]))
    terminal_at = len(frames)
    frames.append(chunk(seq, [{"text": ""}], finish=finish, usage=_usage_metadata(spec)))
    return Plan(frames, terminal_at)


def _call_part(call: dict[str, Any], seq: int, number: int) -> dict[str, Any] | None:
    args = call.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
        if not isinstance(args, dict):
            return None
    function: dict[str, Any] = {"name": call["name"], "args": args}
    if call.get("id"):
        function["id"] = call["id"]
    part: dict[str, Any] = {"functionCall": function}
    if number == 0:
        part["thoughtSignature"] = f"sig_call_fake_{seq}"
    return part


def _finish(spec: dict[str, Any]) -> str:
    given = spec.get("stop_reason")
    return _FINISH.get(given, given) if given else "STOP"


def _chunk(seq: int, parts: list[dict[str, Any]], finish: str | None = None, usage: dict | None = None, *,
           model: str) -> bytes:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    data: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": f"gem_fake_{seq}"}
    if usage:
        data["usageMetadata"] = usage
    return sse_frame(data)


def _usage_metadata(spec: dict[str, Any]) -> dict[str, Any]:
    usage = _usage(spec)
    prompt = usage["input"] + usage["cache_read"] + usage["cache_write"]
    visible = max(0, usage["output"] - usage["reasoning"])
    meta = {"promptTokenCount": prompt, "candidatesTokenCount": visible,
            "totalTokenCount": prompt + usage["output"]}
    if usage["cache_read"]:
        meta["cachedContentTokenCount"] = usage["cache_read"]
    if usage["reasoning"]:
        meta["thoughtsTokenCount"] = usage["reasoning"]
    return meta


# ------------------------------------------------------------------------------------------- errors


def error_body(status: int, message: str) -> dict[str, Any]:
    """The API's JSON error body: `{"error": {code, message, status}}`."""
    return {"error": {"code": status, "message": message, "status": _STATUS_NAMES.get(status, "UNKNOWN")}}


def error_frame(spec: dict[str, Any]) -> bytes:
    """An in-stream error chunk for `spec["error_event"]` (true, a message, or the inner error object)."""
    given = spec.get("error_event", True)
    error: dict[str, Any] = {"code": 503, "message": "The model is overloaded. Please try again later.",
                             "status": "UNAVAILABLE"}
    if isinstance(given, str):
        error["message"] = given
    elif isinstance(given, dict):
        error = given
    return sse_frame({"error": error})
