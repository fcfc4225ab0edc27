"""The RPC protocol as data: every command of both seeds with its fields, and every event type.

Field specs drive validation in the server (a missing or mistyped field answers an error naming the field) and
tests check this table against the seeds' command list.
"""

from __future__ import annotations

from typing import Any

# field name -> (JSON type, required). JSON types: string, number, boolean, array, object, "string|number".
FieldSpec = dict[str, tuple[str, bool]]

_IMAGES = ("array", False)

COMMANDS: dict[str, FieldSpec] = {
    # prompting
    "prompt": {"message": ("string", True), "images": _IMAGES, "streamingBehavior": ("string", False)},
    "steer": {"message": ("string", True), "images": _IMAGES},
    "follow_up": {"message": ("string", True), "images": _IMAGES},
    "abort": {},
    "clear_queue": {},
    "new_session": {"parentSession": ("string", False)},
    # state
    "get_state": {},
    "get_messages": {},
    # model
    "set_model": {"provider": ("string", True), "modelId": ("string", True)},
    "cycle_model": {},
    "get_available_models": {},
    "logout_provider": {"provider": ("string", True)},
    # context window (seed 003)
    "get_available_context_windows": {},
    "set_context_window": {"contextWindow": ("string|number", True)},
    # thinking
    "set_thinking_level": {"level": ("string", True)},
    "cycle_thinking_level": {},
    "get_available_thinking_levels": {},
    # queue modes
    "set_steering_mode": {"mode": ("string", True)},
    "set_follow_up_mode": {"mode": ("string", True)},
    # compaction
    "compact": {"customInstructions": ("string", False)},
    "set_auto_compaction": {"enabled": ("boolean", True)},
    # retry
    "set_auto_retry": {"enabled": ("boolean", True)},
    "abort_retry": {},
    # bash
    "bash": {"command": ("string", True), "excludeFromContext": ("boolean", False)},
    "abort_bash": {},
    # session
    "get_session_stats": {},
    "export_html": {"outputPath": ("string", False)},
    "switch_session": {"sessionPath": ("string", True)},
    "fork": {"entryId": ("string", True)},
    "clone": {},
    "get_fork_messages": {},
    "get_entries": {"since": ("string", False)},
    "get_tree": {"flat": ("boolean", False)},
    "get_last_assistant_text": {},
    "set_session_name": {"name": ("string", True)},
    # commands
    "get_commands": {},
}

# Inputs that are not commands: answers to plugin dialogs (never answered with a response).
INPUT_MESSAGES = ("extension_ui_response",)

EVENTS: tuple[str, ...] = (
    "agent_start", "agent_end", "agent_settled", "turn_start", "turn_end", "message_start", "message_update",
    "message_end", "bash_execution_update", "tool_execution_start", "tool_execution_update",
    "tool_execution_end", "queue_update", "compaction_start", "compaction_end", "auto_retry_start",
    "auto_retry_end", "summarization_retry_scheduled", "summarization_retry_attempt_start",
    "summarization_retry_finished", "context_window_changed", "extension_error", "extension_ui_request",
    "session_write_error", "session_write_resumed",
)

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "boolean": (bool,), "array": (list,), "object": (dict,),
    "string|number": (str, int, float),
}


def _type_ok(value: Any, json_type: str) -> bool:
    if isinstance(value, bool) and json_type != "boolean":
        return False  # JSON true/false are not numbers even though Python's bool is an int
    return isinstance(value, _JSON_TYPES[json_type])


def validate(command: dict[str, Any]) -> str | None:
    """The first problem with a command's fields as an error message, or None when it is well formed."""
    for name, (json_type, required) in COMMANDS[command["type"]].items():
        if name not in command or command[name] is None:
            if required:
                return f"Missing required field: {name}"
            continue
        if not _type_ok(command[name], json_type):
            return f"Field '{name}' must be {_article(json_type)}"
    return None


def _article(json_type: str) -> str:
    if json_type == "string|number":
        return "a string or a number"
    return ("an " if json_type[0] in "aeiou" else "a ") + json_type


class _NoId:
    """The request carried no `id` (distinct from `"id": null`, which is echoed)."""

    def __repr__(self) -> str:
        return "NO_ID"


NO_ID: Any = _NoId()
"""`request_id` of a request without an `id` field (or of a line that was not a JSON object)."""


def response(command: str, request_id: Any = NO_ID, *, data: Any = None, error: str | None = None,
             has_data: bool = False) -> dict[str, Any]:
    """A response record `{id?, type, command, success, data?|error?}` (seed 000, "Error Handling"). Any
    `request_id` but NO_ID is echoed, `None` (a request's `"id": null`) included."""
    out: dict[str, Any] = {"type": "response", "command": command, "success": error is None}
    if request_id is not NO_ID:
        out["id"] = request_id
    if error is not None:
        out["error"] = error
    elif data is not None or has_data:
        out["data"] = data
    return out
