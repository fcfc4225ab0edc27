"""`session/load`: the stored conversation (the current branch as the model sees it) replayed as
`session/update` notifications, so the editor can draw it: user text and images as `user_message_chunk`,
thinking and answers as `agent_thought_chunk` / `agent_message_chunk`, each tool call as a `tool_call`
with its final status and result. A compaction or branch summary is shown as a thought; `!` commands as
execute tool calls."""

from __future__ import annotations

from typing import Any, Callable, Iterator

from . import tool_calls
from .updates import chunk


def replay(messages: list[dict[str, Any]], cwd: str) -> Iterator[dict[str, Any]]:
    """The updates telling `messages` (stored message dicts, oldest first)."""
    results = {m.get("toolCallId"): m for m in messages if m.get("role") == "toolResult"}
    for index, message in enumerate(messages):
        teller = _TELLERS.get(str(message.get("role")))
        if teller is not None:
            yield from teller(message, cwd, results, index)


def _user(message: dict[str, Any], cwd: str, results: dict[Any, Any], index: int) -> Iterator[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        yield chunk("user_message_chunk", content)
        return
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            yield chunk("user_message_chunk", str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") == "image":
            yield {"sessionUpdate": "user_message_chunk", "content": {
                "type": "image", "data": str(block.get("data", "")), "mimeType": str(block.get("mimeType", ""))}}


def _assistant(message: dict[str, Any], cwd: str, results: dict[Any, Any],
               index: int) -> Iterator[dict[str, Any]]:
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "thinking" and block.get("thinking"):
            yield chunk("agent_thought_chunk", str(block["thinking"]))
        elif block.get("type") == "text" and block.get("text"):
            yield chunk("agent_message_chunk", str(block["text"]))
        elif block.get("type") == "toolCall":
            yield _tool_call(block, results.get(block.get("id")), cwd)
    if message.get("stopReason") == "error" and message.get("errorMessage"):
        yield chunk("agent_message_chunk", f"\n\nError: {message['errorMessage']}")


def _tool_call(block: dict[str, Any], result: dict[str, Any] | None, cwd: str) -> dict[str, Any]:
    name = str(block.get("name"))
    args = block.get("arguments") if isinstance(block.get("arguments"), dict) else {}
    failed = result is None or bool(result.get("isError"))
    content = tool_calls.pending_content(name, args, cwd) if not failed else []
    if not content and result is not None:
        content = tool_calls.output_content(result, fenced=(name == "bash"))
    return {"sessionUpdate": "tool_call", "toolCallId": str(block.get("id")), "title": tool_calls.title_of(name, args),
            "kind": tool_calls.kind_of(name), "status": "failed" if failed else "completed", "rawInput": args,
            "locations": tool_calls.locations_of(name, args, cwd), "content": content}


def _bash(message: dict[str, Any], cwd: str, results: dict[Any, Any], index: int) -> Iterator[dict[str, Any]]:
    command = str(message.get("command", ""))
    output = str(message.get("output", ""))
    failed = message.get("exitCode") not in (0, None) or bool(message.get("cancelled"))
    yield {"sessionUpdate": "tool_call", "toolCallId": f"user-bash-{index}",
           "title": tool_calls.title_of("bash", {"command": command}), "kind": "execute",
           "status": "failed" if failed else "completed", "rawInput": {"command": command},
           "content": tool_calls.output_content({"content": [{"type": "text", "text": output}]}, fenced=True)}


def _summary(message: dict[str, Any], cwd: str, results: dict[Any, Any], index: int) -> Iterator[dict[str, Any]]:
    if isinstance(message.get("summary"), str):
        yield chunk("agent_thought_chunk", f"Summary of the earlier conversation:\n{message['summary']}")


_TELLERS: dict[str, Callable[..., Iterator[dict[str, Any]]]] = {
    "user": _user, "assistant": _assistant, "bashExecution": _bash,
    "compactionSummary": _summary, "branchSummary": _summary,
}
