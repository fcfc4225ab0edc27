"""The turn loop: assistant response → tool calls → tool results → next turn, until the model stops.

One run emits, in order (seed 000, "Events"): `agent_start`, then per turn `turn_start`, the new user messages
(`message_start`/`message_end`), the assistant message (`message_start`, `message_update`*, `message_end`),
tool executions (`tool_execution_start|update|end`) and their `toolResult` messages, `turn_end`; finally
`agent_end{messages, willRetry}`. Abort is asyncio cancellation of the step in progress: the streaming step
keeps the partial assistant message with `stopReason: "aborted"` (the arguments of its tool calls, which never
run, cut: `unsent_calls.py`), tool steps record aborted results, and the run ends after the
current turn.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, TypeVar

from ..ai.errors import AIError
from ..ai.options import StreamOptions
from ..ai.partial_json import parse_partial_json
from ..ai.types import AssistantMessage, Context, Model, ToolCall, ToolResultMessage
from .events import (AgentEnd, AgentStart, Emit, MessageEnd, MessageStart, MessageUpdate, ToolExecutionEnd,
                     ToolExecutionStart, ToolExecutionUpdate, ToolResultPayload, TurnEnd, TurnStart)
from .unsent_calls import cut_unsent_arguments
from .unusable_calls import NAMELESS_CALL, named, not_found
from .tool_call_ids import make_tool_call_ids_unique
from .types import AgentTool, ToolError, ToolResult


StreamFn = Callable[[Model, Context, StreamOptions], AsyncIterator[dict[str, Any]]]
BeforeToolCall = Callable[[ToolCall], Awaitable["str | None"]]
"""Awaited before a known tool runs with well-formed arguments (after `tool_execution_start`) with a copy of the
call: changes to its `arguments` are what the tool runs with (the assistant message keeps what the model sent);
a returned string blocks the call and becomes its error result."""


T = TypeVar("T")


async def abortable_step(coro: Awaitable[T], *, aborted: Callable[[], bool] = lambda: True,
                         unstarted: Callable[[], T] = lambda: None, track: Callable[[asyncio.Task | None], None]
                         | None = None) -> T:
    """Run `coro` as its own task (`track(task)` while it runs, `track(None)` after) so an abort can cancel
    exactly it. A started step may swallow its own cancellation and return its aborted result; a step
    cancelled (while `aborted()`) before it could report itself gives `unstarted()` instead. A step cancelled
    otherwise raises CancelledError; when the caller itself is cancelled, so is the step, and the cancellation
    goes on once the step has ended. The step's own exceptions propagate. The one abortable-step idiom of the
    agent loop, the session run (`coding/run.py`) and compaction."""
    task = asyncio.ensure_future(coro)
    if track is not None:
        track(task)
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.wait({task})
        raise
    finally:
        if track is not None:
            track(None)
    if task.cancelled() and aborted():
        return unstarted()
    return task.result()


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(kw_only=True)
class LoopConfig:
    """What one run needs from its owner (the Agent). Callables are read at each turn, so changes made while a
    run is going on (model, thinking level, queued messages) apply from the next model call."""

    model: Callable[[], Model]
    stream_options: Callable[[], Awaitable[StreamOptions]]
    """Called once per model request (it resolves the API key, which may run a `!command`)."""
    system_prompt: Callable[[], str]
    tools: Callable[[], list[AgentTool]]
    convert_to_llm: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
    stream_fn: StreamFn
    take_steering: Callable[[], list[dict[str, Any]]] = lambda: []
    take_follow_up: Callable[[], list[dict[str, Any]]] = lambda: []
    will_retry: Callable[[list[dict[str, Any]]], bool] = lambda new_messages: False
    """Asked with the run's new messages just before `agent_end`: will the owner retry this run?"""
    before_tool_call: BeforeToolCall | None = None
    before_turn: Callable[[list[dict[str, Any]]], Awaitable[None]] | None = None
    """Awaited before each turn (the first one included) as an abortable step, with the messages the turn is about
    to add (the prompt and steering delivered with it; [] between the turns of a tool loop): the owner's upkeep of
    the context it is about to send (compaction). It must swallow its own cancellation, as every step does."""
    missing_tool: Callable[[str], str | None] = lambda name: None
    """Why the model's call of a tool that is not in `tools()` finds none (an MCP server restarting), as the
    call's error; None: `Tool <name> not found`."""
    check_result: Callable[[object], ToolResult] = lambda value: value  # type: ignore[assignment, return-value]
    check_error: Callable[[ToolError], ToolError] = lambda error: error
    """What a tool returned or sent as progress as the `ToolResult` kept, else `ToolError` naming the problem (for
    progress raised in the tool); a call's `ToolError` made fit to keep (the owner's: `coding/tool_results.py`)."""
    on_tool_result: Callable[[ToolResultMessage], None] | None = None
    """Called with a call's `toolResult` message the moment the call finishes, just before its
    `tool_execution_end` (in completion order; the message events follow later, in call order): the owner makes
    a result the client was told of durable at once (a kill before the batch ends must not lose it). The very
    dict later passed in `message_end`."""


@dataclass
class RunState:
    """Mutable state of one run: the full transcript (history + new), new messages, and the abort flag."""

    messages: list[dict[str, Any]]
    new_messages: list[dict[str, Any]] = field(default_factory=list)
    aborted: bool = False
    current: asyncio.Task | None = None

    def abort(self) -> None:
        self.aborted = True
        if self.current is not None and not self.current.done():
            self.current.cancel()


class TurnLoop:
    """Runs one agent run (possibly many turns) and reports everything through `emit`."""

    def __init__(self, config: LoopConfig, state: RunState, emit: Emit):
        self.config = config
        self.state = state
        self.emit = emit

    async def run(self, prompts: list[dict[str, Any]], *, repeat: bool = False) -> list[dict[str, Any]]:
        """`repeat`: the run repeats a request that failed (`Agent.start`), so steering waits for its first turn
        boundary."""
        self.emit(AgentStart(type="agent_start"))
        try:
            await self._turns(prompts, repeat)
        except Exception as exc:  # a bug below must still end the run as the protocol promises
            self._end_message(self._finish_failed(None, f"Unexpected agent failure: {type(exc).__name__}: {exc}"))
            traceback.print_exc()
        will_retry = not self.state.aborted and self.config.will_retry(self.state.new_messages)
        self.emit(AgentEnd(type="agent_end", messages=self.state.new_messages, willRetry=will_retry))
        return self.state.new_messages

    async def _turns(self, prompts: list[dict[str, Any]], repeat: bool) -> None:
        # Seed 000: steering messages go in before the next model call, the run's first one included (a
        # message steered while idle rides with the prompt that starts the run, after it).
        pending: list[dict[str, Any]] | None = [*prompts, *([] if repeat else self.config.take_steering())]
        while pending is not None:
            await self._before_turn(pending)
            if self.state.aborted and not pending:
                break  # aborted during the upkeep between turns: nothing new to record
            has_tool_calls = await self._turn(pending)
            pending = self._next_messages(has_tool_calls)

    async def _before_turn(self, pending: list[dict[str, Any]]) -> None:
        if self.config.before_turn is None or self.state.aborted:
            return
        await self._step(self.config.before_turn(pending))

    def _next_messages(self, has_tool_calls: bool) -> list[dict[str, Any]] | None:
        """Messages that open the next turn ([] when only tool results are pending), or None to stop. A failed
        turn ends the run with queued messages still queued: its owner retries it (or recovers from an overflow)
        first and hands them over after (docs/rpc.md, "Automatic retry")."""
        if self.state.aborted or self.state.new_messages[-1].get("stopReason") in ("error", "aborted"):
            return None
        steering = self.config.take_steering()
        if steering or has_tool_calls:
            return steering
        return self.config.take_follow_up() or None

    async def _turn(self, pending: list[dict[str, Any]]) -> bool:
        """One turn; returns True when the model asked for tools (so the loop must call it again)."""
        self.emit(TurnStart(type="turn_start"))
        for message in pending:
            self._add_message(message)
        assistant = await self._step(self._stream_assistant(), self._aborted_before_streaming)
        results: list[ToolResultMessage] = []
        calls = [b for b in assistant["content"] if b.get("type") == "toolCall"]
        if assistant["stopReason"] not in ("error", "aborted") and calls:
            results = await self._execute_tools(calls)
        self.emit(TurnEnd(type="turn_end", message=assistant, toolResults=results))
        return bool(results) and assistant["stopReason"] not in ("error", "aborted")

    def _add_message(self, message: dict[str, Any]) -> None:
        self.emit(MessageStart(type="message_start", message=message))
        self.state.messages.append(message)
        self.state.new_messages.append(message)
        self.emit(MessageEnd(type="message_end", message=message))

    async def _step(self, coro: Awaitable[Any], unstarted: Callable[[], Any] = lambda: None) -> Any:
        """Run one step so `abort` can cancel exactly it (`abortable_step`, the task in `state.current`)."""
        def track(task: asyncio.Task | None) -> None:
            self.state.current = task

        return await abortable_step(coro, aborted=lambda: self.state.aborted, unstarted=unstarted, track=track)

    # -- assistant streaming -------------------------------------------------------------------------

    async def _stream_assistant(self) -> AssistantMessage:
        started = time.monotonic()
        message: AssistantMessage | None = None
        try:
            if self.state.aborted:  # abort arrived before this step could start
                raise asyncio.CancelledError
            context = self._context()  # inside the guard: a malformed stored message must not kill the run
            # Built once per request: building resolves the API key and headers, which may run a `!command`.
            options = await self.config.stream_options()
            async for event in self.config.stream_fn(self.config.model(), context, options):
                message = self._on_stream_event(event, message, options.thinking_level)
        except asyncio.CancelledError:
            message = self._finish_aborted(message)
        except AIError as exc:  # e.g. a key that could not be resolved: its text is the whole message
            message = self._finish_failed(message, str(exc))
        except Exception as exc:  # a provider must not raise, but one bug must not kill the session
            message = self._finish_failed(message, f"{type(exc).__name__}: {exc}")
        if message is None or message["stopReason"] == "pending":
            message = self._finish_failed(message, "Provider stream ended without a final message")
        message["durationMs"] = int((time.monotonic() - started) * 1000)
        if message["stopReason"] in ("error", "aborted"):
            cut_unsent_arguments(message)  # before message_end: memory, the session file and clients alike
        make_tool_call_ids_unique(message)  # each call must get its own result and events
        self._end_message(message)
        return message

    def _aborted_before_streaming(self) -> AssistantMessage:
        message = self._finish_aborted(None)
        self._end_message(message)
        return message

    def _context(self) -> Context:
        context: Context = {
            "systemPrompt": self.config.system_prompt(),
            "messages": self.config.convert_to_llm(self.state.messages),
        }
        tools = self.config.tools()
        if tools:
            context["tools"] = [
                {"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools
            ]
        return context

    def _on_stream_event(self, event: dict[str, Any], message: AssistantMessage | None,
                         thinking_level: str) -> AssistantMessage:
        kind = event["type"]
        if kind == "start":
            message = event["message"]
            message["thinkingLevel"] = thinking_level
            self.emit(MessageStart(type="message_start", message=message))
        elif kind in ("done", "error"):
            message = event["message"]
        elif message is not None:
            self.emit(MessageUpdate(type="message_update", usage=message["usage"], assistantMessageEvent=event))
        return message  # type: ignore[return-value]

    def _placeholder(self) -> AssistantMessage:
        model = self.config.model()
        from ..ai.usage import empty_usage

        message: AssistantMessage = {
            "role": "assistant", "content": [], "api": model["api"], "provider": model["provider"],
            "model": model["id"], "usage": empty_usage(), "stopReason": "pending", "timestamp": now_ms(),
        }
        self.emit(MessageStart(type="message_start", message=message))
        return message

    def _finish_aborted(self, message: AssistantMessage | None) -> AssistantMessage:
        message = message or self._placeholder()
        _close_open_tool_calls(message)
        message["stopReason"] = "aborted"
        message["errorMessage"] = "Request was aborted"
        return message

    def _finish_failed(self, message: AssistantMessage | None, error: str) -> AssistantMessage:
        message = message or self._placeholder()
        message["stopReason"] = "error"
        message.setdefault("errorMessage", error)
        return message

    def _end_message(self, message: dict[str, Any]) -> None:
        self.state.messages.append(message)
        self.state.new_messages.append(message)
        self.emit(MessageEnd(type="message_end", message=message))

    # -- tools ------------------------------------------------------------------------------------

    async def _execute_tools(self, calls: list[ToolCall]) -> list[ToolResultMessage]:
        tools = {t.name: t for t in self.config.tools()}
        for call in calls:
            self.emit(ToolExecutionStart(type="tool_execution_start", toolCallId=call["id"], toolName=call["name"],
                                          args=call["arguments"]))
        runs = [_ToolRun(call, tools.get(call["name"]), self.emit, self.config, self._missing(call, tools))
                for call in calls]
        await self._step(_run_all(runs, self.state), lambda: _mark_aborted(runs))
        _mark_aborted(runs)  # a call cancelled before its task first ran never reached its own `finally`
        results = [run.message() for run in runs]
        for result in results:
            self._end_tool_result(result)
        return results

    def _missing(self, call: ToolCall, tools: dict[str, AgentTool]) -> str | None:
        """The error of a call whose tool is not there: the owner's reason, else `Tool <name> not found`."""
        if not named(call) or call["name"] in tools:
            return None
        return self.config.missing_tool(call["name"]) or not_found(call["name"])

    def _end_tool_result(self, result: ToolResultMessage) -> None:
        self.emit(MessageStart(type="message_start", message=result))
        self._end_message(result)  # type: ignore[arg-type]


async def _run_all(runs: list["_ToolRun"], state: RunState) -> None:
    """Run the tool calls concurrently; on abort, cancel them all and still wait for their clean-up."""
    if state.aborted:
        _mark_aborted(runs)
        return
    batch = asyncio.gather(*(run.execute() for run in runs), return_exceptions=True)
    try:
        await batch
    except asyncio.CancelledError:
        for run in runs:
            run.aborted = not run.ended  # a call that already finished keeps its result
        batch.cancel()
        await asyncio.gather(batch, return_exceptions=True)


def _mark_aborted(runs: list["_ToolRun"]) -> None:
    for run in runs:
        if not run.ended:
            run.aborted = True
            run.emit_end()


class _ToolRun:
    """One tool call's execution and the result message it produces."""

    def __init__(self, call: ToolCall, tool: AgentTool | None, emit: Emit, config: LoopConfig,
                 missing: str | None = None):
        self.call = call
        self.missing = missing or not_found(call.get("name"))  # the error when `tool` is None
        self.config = config  # the owner's hooks: `before_tool_call`, `check_result`, `on_tool_result`, ...
        self.tool = tool
        self.emit = emit
        self.result: ToolResult | None = None
        self.partial: ToolResult | None = None
        self.error: str | None = None
        self.error_details: Any = None
        self.aborted = False
        self.ended = False  # `tool_execution_end` was sent (exactly once per call)
        self.final: tuple[ToolResult, bool] | None = None  # the result `tool_execution_end` reported
        self._message: ToolResultMessage | None = None
        self.started = time.monotonic()

    async def execute(self) -> None:
        try:
            if not named(self.call):  # tools.get("") must not find anything either
                raise ToolError(NAMELESS_CALL)
            if self.tool is None:
                raise ToolError(self.missing)
            if self.call.get("argumentsError"):  # the model's arguments were not valid JSON
                raise ToolError(str(self.call["argumentsError"]))
            returned = await self.tool.execute(self.call["id"], await self._arguments(), self._on_update)
            self.result = self.config.check_result(returned)
        except ToolError as exc:
            exc = self.config.check_error(exc)
            self.error, self.error_details = str(exc), exc.details
        except asyncio.CancelledError:
            self.aborted = True
            raise
        except (Exception, SystemExit) as exc:  # a tool's bug (even sys.exit) is an error result, not a dead session
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.emit_end()

    async def _arguments(self) -> dict[str, Any]:
        if self.config.before_tool_call is None:
            return self.call["arguments"]
        import copy

        call: ToolCall = {**self.call, "arguments": copy.deepcopy(self.call["arguments"])}
        blocked = await self.config.before_tool_call(call)
        if blocked is not None:  # refused before it ran (a plugin, the approval policy): clients say so
            raise ToolError(blocked, {"blocked": True})
        return call["arguments"]

    def _on_update(self, partial: ToolResult) -> None:
        partial = self.config.check_result(partial)  # a bad one raises ToolError in the tool, as plugins' `update` does
        self.partial = partial
        self.emit(ToolExecutionUpdate(type="tool_execution_update", toolCallId=self.call["id"],
                                      toolName=self.call["name"], args=self.call["arguments"],
                                      partialResult=_result_dict(partial)))

    def _final(self) -> tuple[ToolResult, bool]:
        if self.aborted:
            content = list(self.partial.content) if self.partial else []
            content.append({"type": "text", "text": "Tool execution was aborted."})
            return ToolResult(content=content, details=self.partial.details if self.partial else None), True
        if self.error is not None:
            return ToolResult(content=[{"type": "text", "text": self.error}], details=self.error_details), True
        return self.result or ToolResult(content=[]), False

    def emit_end(self) -> None:
        if self.ended:
            return
        self.ended = True
        # Frozen here: an abort arriving after this call finished must not rewrite what the client was told.
        self.final = self._final()
        message = self.message()
        if self.config.on_tool_result is not None:
            self.config.on_tool_result(message)
        # From the message, not `final`: the owner may have shrunk it in place to fit the session file, and the
        # event must carry what the file and the agent hold (never a 70 MB line the file does not have).
        self.emit(ToolExecutionEnd(type="tool_execution_end", toolCallId=self.call["id"], toolName=self.call["name"],
                                   result=_result_dict(ToolResult(message["content"], message.get("details"))),
                                   isError=message["isError"]))

    def message(self) -> ToolResultMessage:
        """The stored result: exactly what `tool_execution_end` reported (the loop emits it first); one dict,
        made once (`on_tool_result` got the same)."""
        if self._message is not None:
            return self._message
        result, is_error = self.final if self.final is not None else self._final()
        message: ToolResultMessage = {
            "role": "toolResult", "toolCallId": self.call["id"], "toolName": self.call["name"],
            "content": result.content, "isError": is_error, "timestamp": now_ms(),
        }
        if result.details is not None:
            message["details"] = result.details
        self._message = message
        return message


def _result_dict(result: ToolResult) -> ToolResultPayload:
    out = ToolResultPayload(content=result.content)
    if result.details is not None:
        out["details"] = result.details
    return out


def _close_open_tool_calls(message: AssistantMessage) -> None:
    """Tool calls cut off by an abort keep whatever arguments parse; they will not be executed."""
    for block in message["content"]:
        if block.get("type") == "toolCall" and not isinstance(block.get("arguments"), dict):
            block["arguments"] = parse_partial_json(str(block.get("arguments") or ""))
