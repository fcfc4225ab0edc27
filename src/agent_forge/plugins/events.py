"""The events plugin handlers get and the results they may return (re-exported by `plugins.api`, the public API;
documented with examples in `docs/plugins.md`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from ..ai.types import ImageContent, JsonValue, UserMessage
from .values import describe_value, images_problem


# -- events -------------------------------------------------------------------------------------------


@dataclass
class InputEvent:
    """`input`: a `prompt` that is not a plugin command, before skills and templates expand. Handlers run in
    load order and see the text as earlier handlers left it. `streaming_behavior` is None when idle."""

    text: str
    images: list[ImageContent] | None = None
    streaming_behavior: str | None = None


@dataclass
class BeforeRunEvent:
    """`before_run`: a run is about to start with `prompts` (user messages; do not mutate). `system_prompt`
    is the prompt so far, changes of earlier handlers included."""

    prompts: list[UserMessage]
    system_prompt: str


@dataclass
class ToolCallEvent:
    """`tool_call`: the model called `tool_name`; the tool runs with `args` as handlers leave them (change the
    dict in place or assign a new dict). Unknown tools and unparseable arguments never reach this event."""

    tool_name: str
    tool_call_id: str
    args: dict[str, JsonValue]


@dataclass
class SessionChangeEvent:
    """`session_before_change`: `action` is "new_session", "switch_session", "fork" or "clone";
    `target_session_file` is set for switch_session, `entry_id` for fork, `parent_session` for new_session
    when the client gave one."""

    action: str
    target_session_file: str | None = None
    entry_id: str | None = None
    parent_session: str | None = None


@dataclass
class SessionStartEvent:
    """`session_start`: `reason` is "startup" or the action that moved the session to another store;
    `previous_session_file` is the file it left (None at start-up and for in-memory sessions)."""

    reason: str
    previous_session_file: str | None = None


@dataclass
class SessionShutdownEvent:
    """`session_shutdown`: the agent is exiting (`reason` "quit"); finish and release what the plugin holds."""

    reason: str = "quit"


# -- results ------------------------------------------------------------------------------------------


class HandlerResult:
    """A handler result: checked when built (`TypeError` in the handler, reported as its failure) and again when
    the runner reads it (a list inside may have changed since)."""

    def __post_init__(self) -> None:
        problem = self.problem()
        if problem is not None:
            raise TypeError(f"{type(self).__name__}: {problem}")

    def problem(self) -> str | None:
        """Why this result cannot be used, or None."""
        return None


@dataclass(frozen=True)
class Transform(HandlerResult):
    """From an `input` handler: go on with this text (and these images, when not None: a list of image blocks
    `{type: "image", data: <base64>, mimeType}` that pass `file_kinds.image_data_problem`: a type every provider
    accepts, strict base64, matching magic bytes, at most 20 MB)."""

    text: str
    images: list[ImageContent] | None = None

    def problem(self) -> str | None:
        if not isinstance(self.text, str):
            return f"text must be a string, got {type(self.text).__name__}"
        return None if self.images is None else images_problem(self.images)


class Handled:
    """From an `input` handler: the plugin took care of the input; no run starts (`disposition: "handled"`)."""

    def __repr__(self) -> str:
        return "HANDLED"


HANDLED = Handled()


@dataclass(frozen=True)
class AddContext(HandlerResult):
    """From a `before_run` handler: `messages` (a string or a list of strings) join the run after the prompt as
    `custom` messages (saved in the session, sent to the model as user text); `system_prompt` (a string)
    replaces the system prompt of this run; `display` (a bool) tells clients whether to show the messages."""

    messages: Union[str, list[str], tuple[str, ...]] = ()
    system_prompt: str | None = None
    display: bool = True

    def texts(self) -> list[str]:
        return [self.messages] if isinstance(self.messages, str) else list(self.messages)

    def problem(self) -> str | None:
        messages = self.messages
        texts = [messages] if isinstance(messages, str) else messages if isinstance(messages, (list, tuple)) else None
        if texts is None or not all(isinstance(text, str) for text in texts):
            return f"messages must be a string or a list of strings, got {describe_value(self.messages)}"
        if self.system_prompt is not None and not isinstance(self.system_prompt, str):
            return f"system_prompt must be a string or None, got {type(self.system_prompt).__name__}"
        if not isinstance(self.display, bool):
            return f"display must be True or False, got {type(self.display).__name__}"
        return None


@dataclass(frozen=True)
class Block(HandlerResult):
    """From a `tool_call` handler: do not run the tool; `reason` (a string) is the error result the model sees."""

    reason: str = "Blocked by a plugin"

    def problem(self) -> str | None:
        return None if isinstance(self.reason, str) else f"reason must be a string, got {type(self.reason).__name__}"


@dataclass(frozen=True)
class Cancel(HandlerResult):
    """From a `session_before_change` handler: do not change the session (the response says `cancelled`)."""

    reason: str | None = None

    def problem(self) -> str | None:
        if self.reason is None or isinstance(self.reason, str):
            return None
        return f"reason must be a string or None, got {type(self.reason).__name__}"


PluginEvent = Union[InputEvent, BeforeRunEvent, ToolCallEvent, SessionChangeEvent, SessionStartEvent,
                    SessionShutdownEvent, dict[str, object]]
"""What a handler gets: the event object of a `HOOK_EVENTS` event, or a shallow copy of an observed event's dict."""
HandlerReturn = Union[HandlerResult, Handled, None]
"""What a handler may return (ignored for observed events)."""
