"""The RPC protocol as data: every command of both seeds with its fields, every event type, the response record.

Field specs drive validation (`validation.py`: a missing or mistyped field answers an error naming the field);
tests check this table against the seeds' command list. The event table is derived from the TypedDicts of the
events' writers (`agent/events.py`, `coding/events.py`, `BashExecutionUpdate` here), and tests check it against
docs/rpc.md both ways.
"""

# No `from __future__ import annotations`: see agent/events.py (NotRequired must stay visible at runtime).
from typing import Any, Literal, NotRequired, TypedDict, Union

from ...agent.events import event_shapes
from ...coding.events import SessionEvent
from .responses import NO_ID, response

__all__ = ["COMMANDS", "EVENTS", "EVENT_SHAPES", "INPUT_MESSAGES", "NO_ID", "RpcEvent", "response"]

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
    # approvals (an addition to the seed protocol: docs/rpc.md, "Approvals")
    "set_approvals": {"policy": ("string", True)},
    # commands
    "get_commands": {},
    # MCP servers (an addition to the seed protocol: docs/mcp.md)
    "get_mcp_servers": {},
}

# Inputs that are not commands: answers to plugin dialogs (never answered with a response).
INPUT_MESSAGES = ("extension_ui_response",)


class BashExecutionUpdate(TypedDict):
    """A chunk of a running `bash` command's output; `id` is the command's, when it had one. Written by the
    server itself (`handlers/bash.py`), not by the session."""

    type: Literal["bash_execution_update"]
    id: NotRequired[Any]
    delta: str


RpcEvent = Union[SessionEvent, BashExecutionUpdate]
"""Every event record RPC mode writes."""

EVENT_SHAPES: dict[str, type] = event_shapes(RpcEvent)
"""Event `type` → its TypedDict: the event table of docs/rpc.md, derived from the writers' own types."""

EVENTS: tuple[str, ...] = tuple(EVENT_SHAPES)
