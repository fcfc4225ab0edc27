"""`session/load`: the stored conversation (the current branch as the model sees it) replayed as
`session/update` notifications, so the editor can draw it: user text and images as `user_message_chunk`,
thinking and answers as `agent_thought_chunk` / `agent_message_chunk`, each tool call as a `tool_call`
with its final status and result. A compaction or branch summary is shown as a thought; `!` commands as
execute tool calls.

Each replayed chunk carries the `messageId` its live stream had (`updates.message_key`: role and timestamp,
then the block index for an assistant message's thinking and texts), the same on every load; a message
without a timestamp is named by its place in the conversation, and an id met twice gets `~2`, `~3`, ... so
ids stay unique. A `!command`'s call is `user-bash-<timestamp>` (live ones have random ids: never the same)."""

from __future__ import annotations

from typing import Any, Callable, Collection, Iterator

from . import tool_calls
from .updates import chunk, message_key, user_chunks


def replay(messages: list[dict[str, Any]], cwd: str, running: Collection[str] = ()) -> Iterator[dict[str, Any]]:
    """The updates telling `messages` (stored message dicts, oldest first). A result no call asked for (a
    damaged file) is told as a call of its own, as the terminal UI shows it. `running`: the ids of calls under
    way in this process (an open session), left out rather than told as interrupted: those of the last
    assistant message only (a server may reuse ids: an earlier call of the same id stays told)."""
    results = {m.get("toolCallId"): m for m in messages if m.get("role") == "toolResult"}
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), None)
    if running and last is not None:
        messages = [*messages[:last], _without_calls(messages[last], set(running)), *messages[last + 1:]]
    called = {str(block.get("id")) for m in messages if m.get("role") == "assistant"
              for block in m.get("content") or [] if isinstance(block, dict) and block.get("type") == "toolCall"}
    taken: set[str] = set()
    for index, message in enumerate(messages):
        if message.get("role") == "toolResult" and str(message.get("toolCallId")) not in called:
            yield _stray_result(message, cwd, _unique(message, index, taken))
        teller = _TELLERS.get(str(message.get("role")))
        if teller is not None:
            yield from teller(message, cwd, results, _unique(message, index, taken))


def _without_calls(message: dict[str, Any], ids: set[str]) -> dict[str, Any]:
    """`message` without its tool calls of `ids` (running: `Updates.in_flight` tells them)."""
    content = [block for block in message.get("content") or [] if not (
        isinstance(block, dict) and block.get("type") == "toolCall" and str(block.get("id")) in ids)]
    return {**message, "content": content}


def _unique(message: dict[str, Any], index: int, taken: set[str]) -> str:
    """`message`'s id stem (`message_key`, else `<role>-at<index>`), made unique among `taken` (then added)."""
    key = message_key(message) or f"{message.get('role')}-at{index}"
    candidate, number = key, 1
    while candidate in taken:
        number += 1
        candidate = f"{key}~{number}"
    taken.add(candidate)
    return candidate


def _chunk(kind: str, text: str, message_id: str) -> dict[str, Any]:
    return {**chunk(kind, text), "messageId": message_id}


def _assistant(message: dict[str, Any], cwd: str, results: dict[Any, Any], key: str) -> Iterator[dict[str, Any]]:
    for index, block in enumerate(message.get("content") or []):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "thinking" and block.get("thinking"):
            yield _chunk("agent_thought_chunk", str(block["thinking"]), f"{key}-{index}")
        elif block.get("type") == "text" and block.get("text"):
            yield _chunk("agent_message_chunk", str(block["text"]), f"{key}-{index}")
        elif block.get("type") == "toolCall":
            yield _tool_call(block, results.get(block.get("id")), cwd)
    if message.get("stopReason") == "error" and message.get("errorMessage"):
        yield _chunk("agent_message_chunk", f"\n\nError: {message['errorMessage']}", f"{key}-error")


def _tool_call(block: dict[str, Any], result: dict[str, Any] | None, cwd: str) -> dict[str, Any]:
    """A call with no stored result (the agent stopped while it ran or waited) says so, as the model is told
    (`messages.pair_tool_results`) and the terminal UI shows it."""
    from ...coding.messages import interrupted_result

    name = str(block.get("name"))
    args = block.get("arguments") if isinstance(block.get("arguments"), dict) else {}
    interrupted = result is None
    if result is None:
        result = interrupted_result(str(block.get("id")), name)
    failed = bool(result.get("isError"))
    content = tool_calls.pending_content(name, args, cwd) if not failed else []
    if not content:  # bash output in a code fence; the note on an interrupted call is no output
        content = tool_calls.output_content(result, fenced=name == "bash" and not interrupted)
    return {"sessionUpdate": "tool_call", "toolCallId": str(block.get("id")), "title": tool_calls.title_of(name, args),
            "kind": tool_calls.kind_of(name), "status": "failed" if failed else "completed", "rawInput": args,
            "locations": tool_calls.locations_of(name, args, cwd), "content": content}


def _stray_result(message: dict[str, Any], cwd: str, key: str) -> dict[str, Any]:
    call_id = message.get("toolCallId")
    block = {"id": call_id if isinstance(call_id, str) and call_id else key, "name": message.get("toolName")}
    return _tool_call(block, message, cwd)


def _bash(message: dict[str, Any], cwd: str, results: dict[Any, Any], key: str) -> Iterator[dict[str, Any]]:
    command = str(message.get("command", ""))
    output = str(message.get("output", ""))
    failed = message.get("exitCode") not in (0, None) or bool(message.get("cancelled"))
    yield {"sessionUpdate": "tool_call", "toolCallId": key.replace("bashExecution-", "user-bash-", 1),
           "title": tool_calls.title_of("bash", {"command": command}), "kind": "execute",
           "status": "failed" if failed else "completed", "rawInput": {"command": command},
           "content": tool_calls.output_content({"content": [{"type": "text", "text": output}]}, fenced=True)}


def _summary(message: dict[str, Any], cwd: str, results: dict[Any, Any], key: str) -> Iterator[dict[str, Any]]:
    """A compaction's or a branch's summary as a thought, introduced as the terminal UI says it
    (`SUMMARY_NOTES`: `The conversation continued from another branch (summarised):`)."""
    from ...coding.messages import SUMMARY_NOTES

    if isinstance(message.get("summary"), str):
        note = SUMMARY_NOTES[message["role"]]
        yield _chunk("agent_thought_chunk", f"{note[0].upper()}{note[1:]}:\n{message['summary']}", key)


def _custom(message: dict[str, Any], cwd: str, results: dict[Any, Any], key: str) -> Iterator[dict[str, Any]]:
    """A plugin's message meant to be seen (`display` not false): a thought, as it was told live."""
    from ...coding.messages import shown_custom_text

    shown = shown_custom_text(message)
    if shown is not None:
        yield _chunk("agent_thought_chunk", shown, key)


def _user(message: dict[str, Any], cwd: str, results: dict[Any, Any], key: str) -> Iterator[dict[str, Any]]:
    return user_chunks(message, key)


_TELLERS: dict[str, Callable[..., Iterator[dict[str, Any]]]] = {
    "user": _user, "assistant": _assistant, "bashExecution": _bash, "custom": _custom,
    "compactionSummary": _summary, "branchSummary": _summary,
}
