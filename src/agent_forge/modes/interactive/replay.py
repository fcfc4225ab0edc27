"""A session's existing messages as scrollback blocks: what a resumed, switched or new session shows first.

Tool results are paired with the tool calls of the assistant message before them (by id), so they render as
the same blocks a live run prints; a call left without a result (the agent was killed while it ran) gets its
block too, saying so; user shell commands and compaction / branch summaries get their own."""

from __future__ import annotations

from typing import Any, Iterator

from ...coding.messages import SUMMARY_NOTES, interrupted_result
from .blocks import assistant_block, notice, user_block, user_parts
from .tool_blocks import ToolCall, shell_block, tool_block

GAP = ""  # rendered as an empty line, as Text("") is


def transcript(messages: list[dict[str, Any]], *, show_thinking: bool, expanded: bool) -> Iterator[Any]:
    """Renderables for `messages` in order (a blank line after each message or block)."""
    calls: dict[str, ToolCall] = {}
    for message in messages:
        role = message.get("role")
        if role != "toolResult":
            yield from _interrupted(calls, expanded)
        block = None
        if role == "user":
            text, attached = user_parts(message)
            block = user_block(text, attached=attached)
        elif role == "assistant":
            if message.get("stopReason") == "toolUse":  # its calls ran (a stream cut in a call runs none)
                _remember_calls(message, calls)
            block = assistant_block(message, show_thinking=show_thinking)
        elif role == "toolResult":
            call = calls.pop(str(message.get("toolCallId")), None) or ToolCall(str(message.get("toolName")), {},
                                                                                 timed=False)
            block = tool_block(call, message, bool(message.get("isError")), expanded=expanded)
        elif role == "bashExecution":
            block = shell_block(str(message.get("command", "")), str(message.get("output", "")),
                                message.get("exitCode"), None, in_context=not message.get("excludeFromContext"),
                                expanded=expanded, result=message, total_lines=message.get("totalLines"))
        elif role in ("compactionSummary", "branchSummary"):
            block = notice(SUMMARY_NOTES[role], "info")
        if block is not None:
            yield block
            yield GAP
    yield from _interrupted(calls, expanded)
    if messages and messages[-1].get("role") == "toolResult":  # the last run was aborted in its tools
        yield notice("aborted", "warning")  # as it said live (`view.EventView`)
        yield GAP


def _interrupted(calls: dict[str, ToolCall], expanded: bool) -> Iterator[Any]:
    """Blocks for the calls left without a result (the agent was killed while they ran), as the model is told
    of them (`interrupted_result`); `calls` is emptied."""
    for call_id, call in calls.items():
        yield tool_block(call, interrupted_result(call_id, call.name), True, expanded=expanded)
        yield GAP
    calls.clear()


def _remember_calls(message: dict[str, Any], calls: dict[str, ToolCall]) -> None:
    for part in message.get("content") or []:
        if isinstance(part, dict) and part.get("type") == "toolCall":
            calls[str(part.get("id"))] = ToolCall(str(part.get("name")), part.get("arguments") or {}, timed=False)
