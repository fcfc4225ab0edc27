"""The events a session emits on top of its agent's (`agent/events.py`), one `TypedDict` per `type`.

`SessionEvent` is the union of both: what `AgentSession.subscribe` listeners receive and what every writer
(`retry.py`, `compaction/`, `models/control.py`, the session file's write state, plugins through
`AgentSession.emit`) builds. RPC mode derives its event table from it (`modes/rpc/types.py`), so a new event is
declared here first; `tests/modes/test_protocol_docs.py` checks it against `docs/rpc.md`.
"""

# No `from __future__ import annotations`: see agent/events.py (NotRequired must stay visible at runtime).
from typing import Any, Callable, Literal, NotRequired, TypedDict, Union

from ..agent.events import AgentEvent

CompactionReason = Literal["manual", "threshold", "overflow"]


class AgentSettled(TypedDict):
    """A session-level run is over (retries, compaction and queued continuations included), or a `handled`
    prompt's plugin command ended: nothing more follows automatically. `aborted` when `abort` ended it."""

    type: Literal["agent_settled"]
    aborted: bool


class AutoRetryStart(TypedDict):
    """A failed run will be retried after `delayMs` (ms); `attempt` counts from 1 up to `maxAttempts`."""

    type: Literal["auto_retry_start"]
    attempt: int
    maxAttempts: int
    delayMs: int
    errorMessage: str


class AutoRetryEnd(TypedDict):
    """A retry chain ended: with the first assistant message that did not fail (`success`), or for good
    (`finalError`: the last error, or `Retry cancelled`)."""

    type: Literal["auto_retry_end"]
    success: bool
    attempt: int
    finalError: NotRequired[str]


class CompactionStart(TypedDict):
    type: Literal["compaction_start"]
    reason: CompactionReason


class CompactionEnd(TypedDict):
    """`result` is the written compaction (`summary`, `firstKeptEntryId`, `tokensBefore`, ...) or None when it
    failed or was aborted; `willRetry` when the overflowed run continues; `unresolvedOverflow` when overflow
    recovery failed or a retried request overflowed again."""

    type: Literal["compaction_end"]
    reason: CompactionReason
    result: dict[str, Any] | None
    aborted: bool
    willRetry: bool
    errorMessage: NotRequired[str]
    unresolvedOverflow: NotRequired[bool]


class SummarizationRetryScheduled(TypedDict):
    """A failed summarisation request is retried after `delayMs` (ms)."""

    type: Literal["summarization_retry_scheduled"]
    attempt: int
    maxAttempts: int
    delayMs: int
    errorMessage: str


class SummarizationRetryAttemptStart(TypedDict):
    """The retried summarisation request starts; `source` e.g. `compaction`, `reason` its trigger."""

    type: Literal["summarization_retry_attempt_start"]
    source: str
    reason: NotRequired[str]


class SummarizationRetryFinished(TypedDict):
    """The summarisation that needed retries is over (succeeded or not)."""

    type: Literal["summarization_retry_finished"]


class ContextWindowChanged(TypedDict):
    """The active token budget changed without `set_context_window` (seed 003, e.g. a tree move)."""

    type: Literal["context_window_changed"]
    contextWindow: int
    previousContextWindow: int
    provider: str
    modelId: str


class ThinkingLevelChanged(TypedDict):
    """The active thinking level is now `level` (a command, a model that clamps it, another branch or session:
    `announcer.py`)."""

    type: Literal["thinking_level_changed"]
    level: str


class SessionInfoChanged(TypedDict):
    """The session's name is now `name`; without `name` it has none (a new session, a branch without one)."""

    type: Literal["session_info_changed"]
    name: NotRequired[str]


class SessionWriteError(TypedDict):
    """The session file cannot be written: `error` is the OS reason, `pendingEntries` wait in memory."""

    type: Literal["session_write_error"]
    path: str
    error: str
    pendingEntries: int


class SessionWriteResumed(TypedDict):
    """Every waiting entry is on disk again."""

    type: Literal["session_write_resumed"]
    path: str


class ExtensionError(TypedDict):
    """A plugin (`extensionPath`) failed in `event` (a hook, command or tool name); `error` says how."""

    type: Literal["extension_error"]
    extensionPath: str
    event: str
    error: str


class ExtensionUiRequest(TypedDict):
    """A plugin dialog (`select`, `confirm`, `input`, `editor`: answered by `extension_ui_response` with this
    `id`) or a display request (`notify`, `setStatus`, `setWidget`, `setTitle`, `set_editor_text`: no answer).
    The optional fields are those of `method`; `timeout` is in ms (`plugins/ui.py`). An approval question
    (`modes/approvals.py`) adds the call's `toolCallId`, `toolName`, `kind` and `args`."""

    type: Literal["extension_ui_request"]
    id: str
    method: str
    title: NotRequired[str]
    options: NotRequired[list[str]]
    message: NotRequired[str]
    placeholder: NotRequired[str]
    prefill: NotRequired[str]
    timeout: NotRequired[int]
    notifyType: NotRequired[str]
    statusKey: NotRequired[str]
    statusText: NotRequired[str]
    widgetKey: NotRequired[str]
    widgetPlacement: NotRequired[str]
    widgetLines: NotRequired[list[str]]
    text: NotRequired[str]
    toolCallId: NotRequired[str]  # an approval question (`select`, its reason's `input`): the call it is about
    toolName: NotRequired[str]
    kind: NotRequired[str]
    args: NotRequired[dict[str, Any]]


class McpServerInfo(TypedDict):
    """One MCP server as `get_mcp_servers` lists it: `scope` `user`, `project` or `sdk`; `transport` `stdio` or
    `http`; `state` `disabled`, `starting`, `connected`, `failed` (restarting after a backoff) or `stopped`;
    `tools` the agent tool names it offers now; `lastError` why it last failed (or what it did wrong);
    `warnings` its current tool naming problems (gone once resolved); `prompts` its prompt names while connected;
    `resources` how many resources it listed, when `read_mcp_resource` can read from it."""

    name: str
    scope: str
    transport: str
    state: str
    tools: list[str]
    lastError: NotRequired[str]
    warnings: NotRequired[list[str]]
    prompts: NotRequired[list[str]]
    resources: NotRequired[int]


class McpServerChanged(McpServerInfo):
    """An MCP server's state, tools or error changed (the fields of `McpServerInfo`); `message` when a prompt
    runs without a server that is not ready."""

    type: Literal["mcp_server_changed"]
    message: NotRequired[str]


SessionOnlyEvent = Union[AgentSettled, AutoRetryStart, AutoRetryEnd, CompactionStart, CompactionEnd,
                         SummarizationRetryScheduled, SummarizationRetryAttemptStart, SummarizationRetryFinished,
                         ContextWindowChanged, ThinkingLevelChanged, SessionInfoChanged, SessionWriteError,
                         SessionWriteResumed, ExtensionError, ExtensionUiRequest, McpServerChanged]

SessionEvent = Union[AgentEvent, SessionOnlyEvent]

Emit = Callable[[SessionEvent], None]
"""Where session collaborators send their events (`AgentSession.emit`: every listener, in order)."""
