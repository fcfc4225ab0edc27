"""Coding-agent message roles and their conversion to what a provider understands.

`bashExecution` (created by the RPC `bash` command, seed 000 "How bash results reach the LLM") becomes a user
message `Ran \\`cmd\\`` followed by the output in a fenced block (left out when it has `excludeFromContext`);
`custom` messages and the summaries of compactions (`compactionSummary`) and abandoned branches (`branchSummary`)
become user messages; failed or aborted assistant turns are left out of the model's context.
"""

from __future__ import annotations

import re
from typing import Any


def bash_execution_text(message: dict[str, Any]) -> str:
    """The user-message text for a `bashExecution` message.

    Seed 000 ("How bash results reach the LLM"): ``Ran `<command>` `` then the output, without its trailing
    newlines, in a fenced block. Notes follow after a blank line: `(command cancelled)` or `Command exited with
    code N`, then `[Output truncated. Full output: <path>]`. Empty output reads `(no output)` instead of a
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
    return "\n\n".join(parts)


def _fenced(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _to_llm(message: dict[str, Any]) -> dict[str, Any] | None:
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
"""Summary message roles (built from `compaction` / `branch_summary` entries, `session_context.py`) → the
sentence that introduces the summary text in the user message the model receives."""


def convert_to_llm(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Map agent messages to provider messages (user, assistant, toolResult), in order."""
    out = []
    for message in messages:
        converted = _to_llm(message)
        if converted is not None:
            out.append(converted)
    return out
