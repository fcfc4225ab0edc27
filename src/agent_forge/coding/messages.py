"""Coding-agent message roles and their conversion to what a provider understands.

`bashExecution` (created by the RPC `bash` command, seed 000 "How bash results reach the LLM") becomes a user
message `Ran \\`cmd\\`` followed by the output in a fenced block (left out when it has `excludeFromContext`);
`custom` messages and the summaries of compactions (`compactionSummary`) and abandoned branches (`branchSummary`)
become user messages; failed or aborted assistant turns are left out of the model's context.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Mapping, TypeGuard

if TYPE_CHECKING:
    from ..agent.types import AgentMessage
    from ..ai.types import Message


def bash_execution_text(message: Mapping[str, object]) -> str:
    """The user-message text for a `bashExecution` message.

    Seed 000 ("How bash results reach the LLM"): ``Ran `<command>` `` then the output, without its trailing
    newlines, in a fenced block. Notes follow after a blank line: `(command cancelled)` or `Command exited with
    code N`, then `[Output truncated. Full output: <path>]` (when the full output could not be saved, ours:
    `[Output truncated. Full output not saved: <reason>]`). Empty output reads `(no output)` instead of a
    block; output containing backtick runs gets a longer fence, so it cannot close the block early.
    """
    output = (message.get("output") or "").rstrip("\n")
    parts = [f"Ran `{message.get('command', '')}`\n" + (_fenced(output) if output else "(no output)")]
    if message.get("cancelled"):
        parts.append("(command cancelled)")
    elif message.get("exitCode") not in (0, None):
        parts.append(f"Command exited with code {message['exitCode']}")
    if message.get("truncated") and message.get("fullOutputPath"):
        parts.append(f"[Output truncated. Full output: {message['fullOutputPath']}]")
    elif message.get("truncated") and message.get("fullOutputError"):
        parts.append(f"[Output truncated. Full output not saved: {message['fullOutputError']}]")
    return "\n\n".join(parts)


def _fenced(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _to_llm(message: AgentMessage) -> AgentMessage | None:
    role = message.get("role")
    if role in ("user", "toolResult"):
        return message
    if role == "assistant":
        return None if message.get("stopReason") in ("error", "aborted") else message
    if role == "bashExecution":
        if message.get("excludeFromContext"):
            return None
        return {"role": "user", "content": [{"type": "text", "text": bash_execution_text(message)}],
                "timestamp": message.get("timestamp", 0)}
    if role == "custom":
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        return {"role": "user", "content": content or [], "timestamp": message.get("timestamp", 0)}
    if role in _SUMMARY_INTROS and isinstance(message.get("summary"), str):
        text = f"{_SUMMARY_INTROS[role]}\n\n<summary>\n{message['summary']}\n</summary>"
        return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": message.get("timestamp", 0)}
    return None


_SUMMARY_INTROS = {
    "compactionSummary": "Earlier turns of this conversation were condensed into the summary below; continue from it.",
    "branchSummary": "Before this point the conversation explored another branch, summarized below.",
}
"""Summary message roles (built from `compaction` / `branch_summary` entries, `session/context.py`) → the
sentence that introduces the summary text in the user message the model receives."""

SUMMARY_NOTES = {
    "compactionSummary": "earlier messages were compacted into a summary",
    "branchSummary": "the conversation continued from another branch (summarised)",
}
"""Summary message roles → what a front end tells the user where a replayed conversation holds one (the
terminal UI's notice, ACP's thought before the summary text): one wording for both."""


def convert_to_llm(messages: list[AgentMessage]) -> list[Message]:
    """Map agent messages to provider messages (user, assistant, toolResult), in order, with every tool call
    answered exactly once (see `pair_tool_results`)."""
    out: list[Message] = []
    for message in messages:
        converted = sent_form(message)
        if converted is not None:
            out.append(converted)
    return pair_tool_results(out)


def sent_form(message: AgentMessage) -> Message | None:
    """The provider message `message` becomes in the model's context, or None when the model is not sent it:
    a failed or aborted assistant turn, a bash run excluded from context, an unknown role, a damaged entry.
    The context estimate (`session.stats.estimate_tokens`) measures this form, so it counts what is sent."""
    converted = _to_llm(message) if isinstance(message, dict) else None
    return converted if converted is not None and well_formed(converted) else None


_BLOCK_TEXT_FIELDS = {"text": "text", "thinking": "thinking"}


def well_formed(message: AgentMessage) -> TypeGuard[Message]:
    """Whether a provider message has the shape every provider module relies on. A hand-edited or damaged
    session entry that fails this is left out of the model's context (it stays in the file), so one bad entry
    cannot make every later request fail."""
    content = message.get("content")
    if message["role"] == "user" and isinstance(content, str):
        return True
    if not isinstance(content, list):
        return False
    return all(_well_formed_block(block) for block in content)


def _well_formed_block(block: object) -> bool:
    if not isinstance(block, dict):
        return False
    kind = block.get("type")
    if kind in _BLOCK_TEXT_FIELDS:
        return isinstance(block.get(_BLOCK_TEXT_FIELDS[kind]), str)
    if kind == "image":
        return isinstance(block.get("data"), str) and isinstance(block.get("mimeType"), str)
    if kind == "toolCall":
        return isinstance(block.get("id"), str) and isinstance(block.get("name"), str) and isinstance(
            block.get("arguments"), dict)
    return False


def shown_custom_text(message: Message) -> str | None:
    """How a plugin's message (`role: custom`) is shown to the person, `[<customType>] <text>`; None when it asks
    not to be (`display: false`): the terminal UI and ACP both show it so."""
    from ..agent.agent import message_text

    if message.get("display") is False:
        return None
    return f"[{message.get('customType') or 'plugin'}] {message_text(message)}"


INTERRUPTED_RESULT = "No result: the tool call was interrupted before it finished (the agent stopped)."


def interrupted_result(call_id: str, name: str) -> Message:
    """The error result a tool call without one stands for (the agent stopped while it ran or waited): what the
    model is told (`pair_tool_results`) and what the terminal UI and ACP replays show."""
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name, "isError": True,
            "content": [{"type": "text", "text": INTERRUPTED_RESULT}], "timestamp": 0}


def pair_tool_results(messages: list[Message]) -> list[Message]:
    """Providers reject a tool call without a result, and a result without its call (HTTP 400). A session
    killed mid-tool, or edited by hand, has such gaps: answer missing calls with an error result, drop results
    whose call is not in the assistant message before them (and repeats). The results follow their call's turn
    in the order of its calls, whatever order they were stored in (a finished call is saved at once)."""
    out: list[Message] = []
    open_calls: dict[str, str] = {}  # id -> tool name, for the latest assistant message, in call order
    answered: dict[str, Message] = {}  # id -> its first result
    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            call_id = message.get("toolCallId")
            if call_id in open_calls and call_id not in answered:
                answered[call_id] = message  # type: ignore[index]
            continue
        _close_calls(out, open_calls, answered)
        out.append(message)
        if role == "assistant":
            open_calls = {b["id"]: b.get("name", "") for b in message.get("content", [])
                          if isinstance(b, dict) and b.get("type") == "toolCall" and "id" in b}
    _close_calls(out, open_calls, answered)
    return out


def _close_calls(out: list[Message], open_calls: dict[str, str], answered: dict[str, Message]) -> None:
    for call_id, name in open_calls.items():
        out.append(answered.get(call_id) or interrupted_result(call_id, name))
    open_calls.clear()
    answered.clear()


def last_assistant_text(messages: list[AgentMessage]) -> str | None:
    """The text blocks of the last assistant message, joined; None when it has none (or there is none)."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            texts = [b["text"] for b in blocks
                     if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
            return "".join(texts) if texts else None
    return None
