"""Cross-provider replay: rewrites a stored conversation so the target model's API accepts it.

A session may switch models at any turn (`set_model`), so the history a provider module sends can hold
assistant messages from other APIs. `transform_messages` is the one place that makes such history valid:

- thinking from another model becomes plain text (its signature means nothing elsewhere; redacted thinking,
  which has no readable text, is dropped); text and tool-call signatures of other models are dropped;
- tool-call ids are rewritten into what the target API accepts (`normalize_tool_call_id`), consistently for
  the call and its result, and made unique over the request as the API will send them (`_CallIds`);
- a tool call the model sent without a name (its result is an error) is replayed as `UNNAMED_TOOL`, in the
  call and its result: every API rejects an empty function name;
- images become a short note for models without image input;
- failed or aborted assistant turns are left out, results without their call are dropped, and a call left
  without a result gets an error result, because every API rejects an unanswered tool call;
- an assistant message left with no content is dropped (APIs reject empty turns), and a conversation that
  would start with the assistant (a damaged or hand-edited session whose branch lost its first user message)
  gets a short user message before it (`MISSING_START`): Anthropic and Google require the user to speak first.

Inputs are never mutated; unchanged messages are passed through as the same objects.
"""

from __future__ import annotations

import hashlib
import re
from typing import Union

from .hosts import effective_compat
from .types import (AssistantContent, AssistantMessage, Message, Model, ToolCall, ToolResultMessage, UserContent,
                    UserMessage, is_assistant, is_text, is_thinking, is_tool_call, is_tool_result, is_user)

IMAGE_OMITTED = "(image omitted: this model does not accept images)"
NO_RESULT = "No result was recorded for this tool call."
MISSING_START = "(The start of this conversation is missing.)"
UNNAMED_TOOL = "unnamed_tool"
"""The name replayed for a tool call that had none (valid for every API's `^[a-zA-Z0-9_-]{1,64}$`)."""

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")
_ID_LIMITS = {"anthropic-messages": 64, "openai-responses": 64, "openai-completions": 40,
              "google-generative-ai": 64}
"""Longest tool-call id each API accepts (Anthropic: `^[a-zA-Z0-9_-]{1,64}$`; OpenAI Chat Completions: 40)."""


def same_origin(model: Model, message: AssistantMessage) -> bool:
    """Whether `message` came from this very model (same api, provider and id), so its signatures are valid."""
    ours = {"api": model["api"], "provider": model["provider"], "model": model["id"]}
    return all(message.get(key, value) == value for key, value in ours.items())


def normalize_tool_call_id(model: Model, call_id: str) -> str:
    """A tool-call id `model`'s API accepts, derived deterministically from `call_id`.

    Our `openai-responses` ids are `<call_id>|<item_id>`: other APIs get the call id part. Characters outside
    `[A-Za-z0-9_-]` become `_`; an id over the API's limit keeps a prefix plus a hash of the whole id, so two
    long ids stay distinct. `compat.toolCallIdFormat: "mistral"` gives nine letters or digits.
    """
    if effective_compat(model).get("toolCallIdFormat") == "mistral":
        return hashlib.sha256(call_id.encode("utf-8", "replace")).hexdigest()[:9]
    limit = _ID_LIMITS.get(model["api"], 64)
    base = call_id.split("|", 1)[0] if model["api"] != "openai-responses" else call_id
    clean = _UNSAFE_ID.sub("_", base) or "call"
    if len(clean) <= limit:
        return clean
    digest = hashlib.sha256(call_id.encode("utf-8", "replace")).hexdigest()[:12]
    return f"{clean[: limit - 13]}_{digest}"


def has_tool_name(call: ToolCall) -> bool:
    """Whether a tool call carries a usable name (a non-blank string)."""
    name = call.get("name")
    return isinstance(name, str) and bool(name.strip())


def transform_messages(model: Model, messages: list[Message]) -> list[Message]:
    """`messages` made valid for `model` (rules in the module docstring). Roles other than user, assistant
    and toolResult pass through untouched."""
    images = "image" in (model.get("input") or ["text", "image"])
    ids = _CallIds(model)
    out: list[Message] = []
    pending: list[ToolCall] = []  # tool calls of the last assistant message still waiting for results
    for message in messages:
        if is_tool_result(message):
            result = _tool_result(message, ids, pending, images)
            if result is not None:
                out.append(result)
            continue
        out.extend(_missing_results(pending))
        pending = []
        if is_assistant(message):
            if message.get("stopReason") in ("error", "aborted"):
                continue
            converted = _assistant(model, message, ids)
            if not converted["content"]:
                continue
            pending = [b for b in converted["content"] if is_tool_call(b)]
            out.append(converted)
        elif is_user(message):
            out.append(_user(message, images))
        else:
            out.append(message)
    out.extend(_missing_results(pending))
    return _user_first(out)


def _user_first(out: list[Message]) -> list[Message]:
    """`out` with a `MISSING_START` user message before its first turn when the assistant has it."""
    first = next((i for i, m in enumerate(out) if is_user(m) or is_assistant(m)), None)
    if first is None or not is_assistant(out[first]):
        return out
    gap: UserMessage = {"role": "user", "content": [{"type": "text", "text": MISSING_START}],
                        "timestamp": out[first].get("timestamp", 0)}
    return [*out[:first], gap, *out[first:]]


class _CallIds:
    """The id each tool call of one request goes out with, unique as the API sends it.

    A misbehaving server may repeat an id: within one answer (the Responses API's `call_id` under two `fc_`
    items; the agent only renames ids that are equal as a whole), across answers (a host numbering its
    calls afresh each turn), or two ids may clean to the same one (`a.b` and `a:b` to Anthropic). A later
    call whose wire id is taken gets `<id>_2`, `<id>_3`, ... (for Responses on its call id part); decided in
    order, so an earlier call's id never changes as the conversation grows (prompt caches keep their prefix).
    Nothing is renamed for Gemini: its requests carry only the ids its own server gave, sent back exactly as
    given because the server pairs a `functionResponse` with its call by that id (`google_generative_ai`)."""

    def __init__(self, model: Model):
        self.model = model
        self._taken: set[str] = set()
        self._sent: dict[object, list[str]] = {}  # our id -> the ids its calls go out with, in order

    def assign(self, call_id: object, own: bool) -> str:
        """The id for a call stored as `call_id` (`own`: made by this very model, so valid for its API)."""
        valid = own and isinstance(call_id, str)
        new_id = call_id if valid else normalize_tool_call_id(self.model, str(call_id or "call"))
        if self.model["api"] != "google-generative-ai":
            new_id = self._free(new_id)
            self._taken.add(_wire_id(self.model, new_id))
        self._sent.setdefault(call_id, []).append(new_id)
        return new_id

    def sent_as(self, call_id: object) -> list[str]:
        """The ids calls stored as `call_id` went out with (a result pairs with the first still unanswered)."""
        return self._sent.get(call_id, [])

    def _free(self, call_id: str) -> str:
        n, candidate = 2, call_id
        while _wire_id(self.model, candidate) in self._taken:
            candidate, n = _numbered(self.model, call_id, n), n + 1
        return candidate


def _wire_id(model: Model, call_id: str) -> str:
    """The id the API's request carries for `call_id`: a Responses id's call id part, Anthropic's cleaned id
    (as `anthropic_messages.tool_id` makes it), else the id itself."""
    if model["api"] == "openai-responses":
        return call_id.partition("|")[0]
    if model["api"] == "anthropic-messages":
        return _UNSAFE_ID.sub("_", call_id)[:64] or "tool"
    return call_id


def _numbered(model: Model, call_id: str, n: int) -> str:
    """`call_id` with suffix `_<n>` within the API's length limit (Responses: on its call id part; Mistral's
    nine-character ids: a fresh digest)."""
    if effective_compat(model).get("toolCallIdFormat") == "mistral":
        return hashlib.sha256(f"{call_id}#{n}".encode("utf-8", "replace")).hexdigest()[:9]
    base, bar, item = call_id.partition("|") if model["api"] == "openai-responses" else (call_id, "", "")
    suffix = f"_{n}"
    return base[: _ID_LIMITS.get(model["api"], 64) - len(suffix)] + suffix + bar + item


def _assistant(model: Model, message: AssistantMessage, ids: _CallIds) -> AssistantMessage:
    own = same_origin(model, message)
    blocks = [_assistant_block(model, block, own, ids) for block in message.get("content") or []]
    content = [block for block in blocks if block is not None]
    if own and content == message.get("content"):
        return message
    return {**message, "content": content}


def _assistant_block(model: Model, block: AssistantContent, own: bool, ids: _CallIds) -> AssistantContent | None:
    if is_tool_call(block):
        new_id = ids.assign(block.get("id"), own)
        if not has_tool_name(block):
            block = {**block, "name": UNNAMED_TOOL}
        if own:
            return block if new_id == block.get("id") else {**block, "id": new_id}
        return {key: value for key, value in block.items() if key != "thoughtSignature"} | {"id": new_id}
    if own:
        return block
    if is_thinking(block):
        text = block.get("thinking") or ""
        return None if block.get("redacted") or not text.strip() else {"type": "text", "text": text}
    if is_text(block):
        return {"type": "text", "text": block.get("text") or ""}
    return block


def _user(message: UserMessage, images: bool) -> UserMessage:
    content = message.get("content")
    if images or isinstance(content, str) or not _has_image(content):
        return message
    return {**message, "content": _without_images(content)}


def _tool_result(message: ToolResultMessage, ids: _CallIds, pending: list[ToolCall],
                 images: bool) -> ToolResultMessage | None:
    sent = ids.sent_as(message.get("toolCallId"))
    call = next((c for c in pending if c["id"] in sent), None)
    if call is None:
        return None  # its call was left out (failed turn) or already answered
    pending.remove(call)
    new_id = call["id"]
    content = message.get("content") or []
    changed = (new_id != message.get("toolCallId") or (not images and _has_image(content))
               or call.get("name") != message.get("toolName"))
    if not changed:
        return message
    return {**message, "toolCallId": new_id, "toolName": call.get("name", ""),
            "content": content if images else _without_images(content)}


def _missing_results(pending: list[ToolCall]) -> list[ToolResultMessage]:
    return [{"role": "toolResult", "toolCallId": call["id"], "toolName": call.get("name", ""),
             "content": [{"type": "text", "text": NO_RESULT}], "isError": True, "timestamp": 0}
            for call in pending]


def _has_image(content: Union[str, list[UserContent]]) -> bool:
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "image" for b in content)


def _without_images(content: list[UserContent]) -> list[UserContent]:
    """Each run of images becomes one note, so the model knows something was there."""
    out: list[UserContent] = []
    for block in content:
        if block.get("type") != "image":
            out.append(block)
        elif not out or out[-1].get("text") != IMAGE_OMITTED:
            out.append({"type": "text", "text": IMAGE_OMITTED})
    return out
