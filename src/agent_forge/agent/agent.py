"""The Agent: conversation state, steering/follow-up queues, one run at a time, abort.

The model call is injected (`stream_fn`), so tests and SDK users swap in the scripted `faux` provider.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Awaitable, Callable, TypeVar, Union

from ..ai.options import StreamOptions
from ..ai.types import Message, Model, ToolResultMessage
from .events import Emit, QueueUpdate
from .loop import BeforeToolCall, LoopConfig, RunState, StreamFn, TurnLoop
from .types import AgentMessage, AgentTool, ToolError, ToolResult

QUEUE_MODES = ("all", "one-at-a-time")
_T = TypeVar("_T")


async def _settled(value: Union[_T, Awaitable[_T]]) -> _T:
    """`value`, awaited first when it is an awaitable (a getter may be sync or async)."""
    return await value if inspect.isawaitable(value) else value


def default_convert_to_llm(messages: list[AgentMessage]) -> list[Message]:
    """Keep the roles a provider understands; drop failed or aborted assistant turns."""
    return [
        m for m in messages
        if m.get("role") in ("user", "toolResult")
        or (m.get("role") == "assistant" and m.get("stopReason") not in ("error", "aborted"))
    ]


def message_text(message: AgentMessage) -> str:
    """The text of a user message's content (string or text blocks), for queue listings."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


class Agent:
    """Holds the transcript and runs the turn loop.

    `emit` receives every event (`agent/events.py`: loop events and `queue_update`) synchronously, in order.
    `get_api_key(model)` is asked at each model call. Errors: `start()` raises `RuntimeError` when a run is
    already going on (callers check `is_streaming` and queue instead).
    """

    def __init__(self, *, model: Model | None, stream_fn: StreamFn | None = None, emit: Emit,
                 get_api_key: Callable[[Model], str | None | Awaitable[str | None]] = lambda m: None,
                 get_headers: Callable[[Model], dict[str, str] | Awaitable[dict[str, str]]] = lambda m: {},
                 convert_to_llm: Callable[[list[AgentMessage]], list[Message]] = default_convert_to_llm):
        self.model = model
        self.thinking_level = "off"
        self.system_prompt = ""
        self.prepare_tools: Callable[[list[AgentTool]], None] | None = None
        """Set by the owner (the session's tool environment): called with the tool list whenever `tools` is
        replaced and at each run's start, so a tool added at any time works where the session's tools work."""
        self._tools: list[AgentTool] = []
        self.messages: list[AgentMessage] = []
        self.session_id: str | None = None
        self.idle_timeout_s: float | None = StreamOptions.idle_timeout_s
        """Passed to every request's StreamOptions (set by the owner from settings `httpIdleTimeoutMs`)."""
        self.steering_mode = "one-at-a-time"
        self.follow_up_mode = "one-at-a-time"
        self.steering_queue: list[AgentMessage] = []
        self.follow_up_queue: list[AgentMessage] = []
        self._stream_fn = stream_fn
        self._emit = emit
        self._get_api_key = get_api_key
        self._get_headers = get_headers
        self._convert = convert_to_llm
        self._run: RunState | None = None
        self._task: asyncio.Task | None = None
        self.will_retry: Callable[[list[AgentMessage]], bool] = lambda new_messages: False
        """Set by the owner (the session's auto-retry): decides `agent_end.willRetry` (see LoopConfig)."""
        self.before_tool_call: BeforeToolCall | None = None
        self.before_turn: Callable[[list[AgentMessage]], Awaitable[None]] | None = None
        """Set by the owner (compaction): awaited before each turn's model call, with the messages the turn is
        about to add (see LoopConfig)."""
        self.on_tool_result: Callable[[ToolResultMessage], None] | None = None
        """Set by the owner (the session file): gets each call's result as the call finishes (see LoopConfig)."""
        self.check_result: Callable[[object], ToolResult] = lambda value: value  # type: ignore[assignment]
        """Set by the owner (the session): checks each tool result and progress update (see LoopConfig)."""
        self.check_error: Callable[[ToolError], ToolError] = lambda error: error
        """Set by the owner (the session): makes each tool error fit to keep (see LoopConfig)."""
        self.missing_tool: Callable[[str], str | None] = lambda name: None
        """Set by the owner (MCP): why a called tool is not there now, or None (see LoopConfig)."""
        """Set by the owner (plugins): may change or block each tool call before it runs (see LoopConfig)."""

    @property
    def tools(self) -> list[AgentTool]:
        return self._tools

    @tools.setter
    def tools(self, tools: list[AgentTool]) -> None:
        self._tools = tools
        if self.prepare_tools is not None:
            self.prepare_tools(tools)

    @property
    def is_streaming(self) -> bool:
        return self._task is not None and not self._task.done()

    # -- queues --------------------------------------------------------------------------------------

    def steer(self, message: AgentMessage) -> None:
        self.steering_queue.append(message)
        self._emit_queue()

    def follow_up(self, message: AgentMessage) -> None:
        self.follow_up_queue.append(message)
        self._emit_queue()

    def clear_queues(self) -> tuple[list[AgentMessage], list[AgentMessage]]:
        """Empty both queues: (steering, follow-up) as they were; `queue_update` only when that changed them."""
        steering, follow_up = self.steering_queue, self.follow_up_queue
        self.steering_queue, self.follow_up_queue = [], []
        if steering or follow_up:
            self._emit_queue()
        return steering, follow_up

    def queue_texts(self) -> dict[str, list[str]]:
        return {"steering": [message_text(m) for m in self.steering_queue],
                "followUp": [message_text(m) for m in self.follow_up_queue]}

    def announce_queue(self) -> None:
        """Send `queue_update` with the queues as they are (a listener subscribing late learns of them)."""
        self._emit_queue()

    def _emit_queue(self) -> None:
        texts = self.queue_texts()
        self._emit(QueueUpdate(type="queue_update", steering=texts["steering"], followUp=texts["followUp"]))

    def take_queued(self) -> list[AgentMessage] | None:
        """The prompts of a run that continues with messages still queued, or None when nothing is queued.
        Steering messages stay queued (`[]`): every run's first turn takes them itself, in the steering mode;
        else the next follow-up(s)."""
        if self.steering_queue:
            return []
        return self._take(self.follow_up_queue, self.follow_up_mode) or None

    def _take(self, queue: list[AgentMessage], mode: str) -> list[AgentMessage]:
        if not queue:
            return []
        taken = queue[:] if mode == "all" else queue[:1]
        del queue[: len(taken)]
        self._emit_queue()
        return taken

    # -- runs ----------------------------------------------------------------------------------------

    def start(self, prompts: list[AgentMessage], *, repeat: bool = False) -> asyncio.Task:
        """Start a run with `prompts` (user messages; may be empty to continue). Returns the run's task.
        `repeat`: the run repeats the request that failed (automatic retry, overflow recovery), so steering
        messages queued meanwhile wait for its first turn boundary, as they would have had the failed attempt
        succeeded, instead of joining the repeated request."""
        if self.is_streaming:
            raise RuntimeError("Agent is already processing")
        if self.model is None or self._stream_fn is None:
            raise RuntimeError("No model selected")
        if self.prepare_tools is not None:  # also tools appended to the list in place
            self.prepare_tools(self._tools)
        self._run = RunState(messages=self.messages)
        loop = TurnLoop(self._loop_config(), self._run, self._emit)
        self._task = asyncio.ensure_future(loop.run(prompts, repeat=repeat))
        return self._task

    async def prompt(self, prompts: list[AgentMessage]) -> list[AgentMessage]:
        """Run to completion and return the run's new messages."""
        return await self.start(prompts)

    def _loop_config(self) -> LoopConfig:
        return LoopConfig(
            model=lambda: self.model,  # type: ignore[arg-type, return-value]
            stream_options=self._stream_options,
            system_prompt=lambda: self.system_prompt,
            tools=lambda: self.tools,
            convert_to_llm=self._convert,
            stream_fn=self._stream_fn,  # type: ignore[arg-type]
            take_steering=lambda: self._take(self.steering_queue, self.steering_mode),
            take_follow_up=lambda: self._take(self.follow_up_queue, self.follow_up_mode),
            will_retry=lambda new_messages: self.will_retry(new_messages),
            before_tool_call=self.before_tool_call,
            before_turn=self.before_turn,
            on_tool_result=self.on_tool_result,
            missing_tool=lambda name: self.missing_tool(name),
            check_result=lambda value: self.check_result(value),
            check_error=lambda error: self.check_error(error),
        )

    @property
    def stream_fn(self) -> StreamFn | None:
        """The model call this agent makes; owners use it for side requests (summaries)."""
        return self._stream_fn

    async def request_options(self) -> StreamOptions:
        """Fresh StreamOptions for a request with the current model (API key, headers, thinking level)."""
        return await self._stream_options()

    async def _stream_options(self) -> StreamOptions:
        """`get_api_key` and `get_headers` may return awaitables (a key `!command` runs without blocking the
        loop, and an abort cancels it); whatever they raise fails the request with that text."""
        model = self.model
        assert model is not None
        # One at a time: a coroutine made before an earlier await fails or is cancelled would never be awaited
        # (a RuntimeWarning on stderr), so each is created only when it is awaited at once.
        api_key = await _settled(self._get_api_key(model))
        headers = await _settled(self._get_headers(model))
        return StreamOptions(api_key=api_key, thinking_level=self.thinking_level,
                             session_id=self.session_id, headers=dict(headers),
                             idle_timeout_s=self.idle_timeout_s)

    def abort(self) -> None:
        """Cancel the step in progress; the run then ends after recording partial results."""
        if self._run is not None and self.is_streaming:
            self._run.abort()

    @property
    def was_aborted(self) -> bool:
        return self._run is not None and self._run.aborted

    async def wait_for_idle(self) -> None:
        if self._task is not None and not self._task.done():
            await asyncio.wait({self._task})
