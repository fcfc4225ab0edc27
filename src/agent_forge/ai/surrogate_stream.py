"""`surrogate_safe`: a caller's own `stream_fn` streams text cut between a UTF-16 pair's halves as the built-in
providers do (`MessageBuilder`): the halves are joined across deltas, and the deltas, the `*_end` events and the
message the stream mutates all hold the same text."""

from __future__ import annotations

from contextlib import aclosing, nullcontext
from typing import Any, AsyncIterator, Callable

from . import json_wire

_FIELD = {"text": "text", "thinking": "thinking"}
"""The block field a text or thinking block's deltas add up to (a tool call's arguments are parsed: no field)."""


def surrogate_safe(stream_fn: Callable[..., Any]) -> Callable[..., AsyncIterator[dict[str, Any]]]:
    """`stream_fn(model, context, options)` (an async iterator of stream events) with each block's trailing
    high surrogate held back until its next delta (U+FFFD when the block ends first, as a delta of its own before
    the `*_end`), pairs joined and lone halves replaced; a text or thinking block a delta changed so gets the
    deltas' text, in the message and in its `*_end` event. Other events pass as they are."""
    async def stream(model: Any, context: Any, options: Any) -> AsyncIterator[dict[str, Any]]:
        joiner = _Joiner()
        events = stream_fn(model, context, options)
        async with aclosing(events) if hasattr(events, "aclose") else nullcontext():  # closed when cut short
            async for event in events:
                for out in joiner.events(event):
                    yield out
    return stream


class _Joiner:
    """One stream's state: the message it mutates, each block's text as its deltas said it (`_said`) and the
    blocks a delta changed (`_changed`: theirs is rewritten to what the deltas said)."""

    def __init__(self) -> None:
        self._held = json_wire.HeldSurrogates()
        self._message: dict[str, Any] | None = None
        self._said: dict[int, list[str]] = {}
        self._changed: set[int] = set()

    def events(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type")
        if kind == "start" and isinstance(event.get("message"), dict):
            self._message = event["message"]
            for index in range(len(self._blocks())):
                self._begin(index)
        elif kind in ("text_start", "thinking_start", "toolcall_start"):
            self._begin(event.get("contentIndex"))
        elif kind in ("text_delta", "thinking_delta", "toolcall_delta"):
            self._delta(event)
        elif kind in ("text_end", "thinking_end", "toolcall_end"):
            return [*self._release(event), self._end(event)]
        elif kind in ("done", "error"):
            self._finish(event.get("message"))
        return [event]

    def _blocks(self) -> list[Any]:
        content = self._message.get("content") if self._message is not None else None
        return content if isinstance(content, list) else []

    def _field(self, index: Any) -> tuple[dict[str, Any], str] | None:
        """Block `index` of the stream's message and its text field, when it is a text or thinking block."""
        blocks = self._blocks()
        block = blocks[index] if isinstance(index, int) and 0 <= index < len(blocks) else None
        field = _FIELD.get(block.get("type")) if isinstance(block, dict) else None
        return (block, field) if field is not None else None  # type: ignore[return-value]

    def _begin(self, index: Any) -> None:
        found = self._field(index)
        text = found[0].get(found[1]) if found else None
        self._said[index] = [json_wire.join_surrogates(text)] if isinstance(text, str) and text else []

    def _delta(self, event: dict[str, Any]) -> None:
        index, chunk = event.get("contentIndex"), event.get("delta")
        if not isinstance(index, int) or not isinstance(chunk, str):
            return
        resolved = self._held.resolve(index, chunk) if self._held or not chunk.isascii() else chunk
        self._said.setdefault(index, []).append(resolved)  # ASCII holds no surrogate: most skip the search
        if resolved != chunk:  # the stream put `chunk` in its message before yielding it (as providers do)
            event["delta"] = resolved
            self._changed.add(index)
            self._rewrite(index)

    def _release(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """The U+FFFD delta of a high surrogate block `index` still held back as it ends."""
        index = event.get("contentIndex")
        if not isinstance(index, int) or not self._held.release(index):
            return []
        kind = str(event["type"]).replace("_end", "_delta")
        self._said.setdefault(index, []).append("\ufffd")
        self._changed.add(index)
        return [{"type": kind, "contentIndex": index, "delta": "\ufffd"}]

    def _end(self, event: dict[str, Any]) -> dict[str, Any]:
        index = event.get("contentIndex")
        if index in self._changed and self._rewrite(index) and isinstance(event.get("content"), str):
            event["content"] = "".join(self._said[index])
        return event

    def _finish(self, message: Any) -> None:
        """The final message: the blocks a delta changed hold what the deltas said (a stream may build its final
        message apart from the one it started with)."""
        if isinstance(message, dict) and message is not self._message:
            self._message = message
        for index in self._changed:
            self._rewrite(index)

    def _rewrite(self, index: int) -> bool:
        """Block `index`'s text is what its deltas said (O(the block): only blocks a delta changed)."""
        found = self._field(index)
        if found is not None:
            found[0][found[1]] = "".join(self._said.get(index, []))
        return found is not None
