"""A session's existing messages as scrollback blocks: what a resumed, switched or new session shows first.

Tool results are paired with the tool calls of the assistant message before them (by id), so they render as
the same blocks a live run prints; a call left without a result (the agent was killed while it ran) gets its
block too, saying so; user shell commands and compaction / branch summaries get their own."""

from __future__ import annotations

from typing import Any, Iterator

from ...coding.messages import SUMMARY_NOTES, interrupted_result
from .blocks import assistant_block, custom_block, notice, user_block, user_parts
from .tool_blocks import ToolCall, shell_block, tool_block

GAP = ""  # rendered as an empty line, as Text("") is


def transcript(messages: list[dict[str, Any]], *, show_thinking: bool, expanded: bool) -> Iterator[Any]:
    """Renderables for `messages` in order (a blank line after each message or block); a turn's tool calls
    once its results are all in, in call order."""
    calls: dict[str, ToolCall] = {}
    results: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            results.append(message)
            continue
        yield from _tool_blocks(calls, results, expanded)
        block = None
        if role == "user":
            text, attached = user_parts(message)
            block = user_block(text, attached=attached)
        elif role == "assistant":
            if message.get("stopReason") == "toolUse":  # its calls ran (a stream cut in a call runs none)
                _remember_calls(message, calls)
            block = assistant_block(message, show_thinking=show_thinking)
        elif role == "bashExecution":
            block = shell_block(str(message.get("command", "")), str(message.get("output", "")),
                                message.get("exitCode"), None, in_context=not message.get("excludeFromContext"),
                                expanded=expanded, result=message, total_lines=message.get("totalLines"))
        elif role in ("compactionSummary", "branchSummary"):
            block = notice(SUMMARY_NOTES[role], "info")
        elif role == "custom":
            block = custom_block(message, expanded=expanded)
        if block is not None:
            yield block
            yield GAP
    yield from _tool_blocks(calls, results, expanded)
    if messages and messages[-1].get("role") == "toolResult":  # the last run was aborted in its tools
        yield notice("aborted", "warning")  # as it said live (`view.EventView`)
        yield GAP


def _tool_blocks(calls: dict[str, ToolCall], results: list[dict[str, Any]], expanded: bool) -> Iterator[Any]:
    """The blocks of one turn's tool calls in call order (stored, results are in the order the calls ended),
    each with its result or, left without one (the agent was killed while it ran), saying so as the model is
    told (`interrupted_result`); then results no call of the turn asked for (a damaged file). Both are emptied."""
    by_id: dict[str, dict[str, Any]] = {}
    strays = []
    for result in results:
        call_id = str(result.get("toolCallId"))
        if call_id in calls and call_id not in by_id:
            by_id[call_id] = result
        else:
            strays.append((ToolCall(str(result.get("toolName")), {}, timed=False), result))
    shown = [(call, by_id.get(call_id) or interrupted_result(call_id, call.name)) for call_id, call in calls.items()]
    for call, result in [*shown, *strays]:
        yield tool_block(call, result, bool(result.get("isError")), expanded=expanded)
        yield GAP
    calls.clear()
    results.clear()


def _remember_calls(message: dict[str, Any], calls: dict[str, ToolCall]) -> None:
    for part in message.get("content") or []:
        if isinstance(part, dict) and part.get("type") == "toolCall":
            calls[str(part.get("id"))] = ToolCall(str(part.get("name")), part.get("arguments") or {}, timed=False)
