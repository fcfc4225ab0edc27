"""Coding-agent message roles and their conversion to what a provider understands.

`bashExecution` (created by the RPC `bash` command, seed 000 "How bash results reach the LLM") becomes a user
message `Ran \\`cmd\\`` followed by the output in a fenced block; `custom` messages become user messages; failed
or aborted assistant turns are left out of the model's context.
"""

from __future__ import annotations

from typing import Any


def bash_execution_text(message: dict[str, Any]) -> str:
    """The user-message text for a `bashExecution` message (the seed's rendering)."""
    output = message.get("output") or "(no output)"
    text = f"Ran `{message.get('command', '')}`\n```\n{output.rstrip(chr(10))}\n```"
    if message.get("cancelled"):
        text += "\n(command cancelled)"
    elif message.get("exitCode") not in (0, None):
        text += f"\nCommand exited with code {message['exitCode']}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


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
    return None


def convert_to_llm(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Map agent messages to provider messages (user, assistant, toolResult), in order."""
    out = []
    for message in messages:
        converted = _to_llm(message)
        if converted is not None:
            out.append(converted)
    return out
