"""One `session/prompt`: submit it to the AgentSession, wait for the run to settle, answer its ACP stop reason.

A prompt sent while a turn runs is queued as a follow-up (ACP has no steering): both requests are answered
when the run settles. `session/cancel` aborts the run (its tool processes are killed) and every prompt of it
answers `cancelled`; the prompts queued behind it are dropped, never run. A provider error that ended the run
(after the automatic retries) is a JSON-RPC error carrying the provider's message, never a silent `end_turn`;
Anthropic's `refusal` is the `refusal` stop reason.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from ...coding.errors import CommandError
from ..dropped_images import dropped_images_warning
from ..print_outcome import RunWatch
from .content import prompt_input
from .protocol import AUTH_REQUIRED, INTERNAL_ERROR, AcpError
from .shown import title_of

STOP_REASONS = {"length": "max_tokens", "stop": "end_turn", "toolUse": "end_turn"}


class _Prompt:
    """One `session/prompt` waiting for its answer; `cancelled` once a `session/cancel` came after it (and
    `stopped` done then); `commands`: the plugin command it started, if it named one."""

    cancelled = False

    def __init__(self, commands: frozenset[asyncio.Future[object]] = frozenset()):
        self.commands = commands
        self.stopped: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def cancel(self) -> None:
        self.cancelled = True
        if not self.stopped.done():
            self.stopped.set_result(None)


class Turns:
    """The prompts of one session (`session`: an AgentSession)."""

    def __init__(self, session: Any, tell: Callable[[str, str], None] = lambda text, severity: None):
        self.session, self.tell = session, tell  # `tell(text, severity)`: a status line the user sees
        self.watch = RunWatch()
        self.first_line = ""  # of the last prompt's text (a session's title until it is named)
        self._waiting: set[_Prompt] = set()
        self._settle_waiters: list[asyncio.Future[None]] = []
        self._idle_commands = asyncio.Lock()  # held by the running `/compact`, `/fork`, `/clone` or `/tree`
        session.subscribe(self.watch)
        session.subscribe(self._on_event)

    def _on_event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "agent_settled":
            waiters, self._settle_waiters = self._settle_waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def submit(self, blocks: Any) -> Any:
        """Take the prompt now (in arrival order, so a `session/cancel` sent after it cancels it); returns the
        awaitable answering `{"stopReason"}`. Raises `AcpError` for a malformed prompt."""
        text, images = prompt_input(blocks)
        self.first_line = title_of(None, text) or ""
        if not self.session.is_streaming:
            self.watch.start()
        settled: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._settle_waiters.append(settled)  # before `submit`: a handled prompt may settle right after it
        running = self.session.intake.running_commands
        try:
            submitted = self.session.submit(text, images or None, "followUp")
        except CommandError as exc:
            raise self._refusal(exc) from None
        prompt = _Prompt(self.session.intake.running_commands - running)  # a plugin command starts at the call
        self._waiting.add(prompt)
        if (warning := dropped_images_warning(self.session.model, images)) is not None:
            self.tell(warning, "warning")
        return self._answer(submitted, prompt, settled)

    async def _answer(self, submitted: Any, prompt: _Prompt, settled: asyncio.Future[None]) -> dict[str, Any]:
        try:
            disposition = await submitted
            if disposition == "handled":  # a plugin command (or input handler): its `agent_settled` ends it,
                await settled  # but a command sent during a run settles with the run: it may still be running
                await self._command_over(prompt)
            else:
                await self.session.wait_for_idle()
        except CommandError as exc:
            if prompt.cancelled:  # stopped by our own cancel before it reached the model (input handlers)
                return {"stopReason": "cancelled"}
            raise self._refusal(exc) from None
        finally:
            self._waiting.discard(prompt)
        return {"stopReason": self.stop_reason(prompt.cancelled)}

    @staticmethod
    async def _command_over(prompt: _Prompt) -> None:
        """Until the plugin command `prompt` started is done (what it says comes before the answer), or a
        `session/cancel` came (a command that ignores its cancellation cannot hold the answer)."""
        running = {command for command in prompt.commands if not command.done()}
        if running and not prompt.cancelled:
            await asyncio.wait({*running, prompt.stopped}, return_when=asyncio.FIRST_COMPLETED)

    async def command(self, work: Callable[[], Awaitable[dict[str, Any]]], *, when_idle: bool = False
                      ) -> dict[str, Any]:
        """A built-in command's answer (`commands.py`): `cancelled` when a `session/cancel` came while it ran
        (a `/compact` or `/tree N summarize` stopped mid-request), else its own. `when_idle`: it waits for the
        running turn (and its queued prompts) to end rather than disturb it; cancelled meanwhile, it never runs."""
        prompt = _Prompt()
        self._waiting.add(prompt)
        try:
            answer = await (self._when_idle(work, prompt) if when_idle else work())
        finally:
            self._waiting.discard(prompt)
        return {"stopReason": "cancelled"} if prompt.cancelled else answer

    async def _when_idle(self, work: Callable[[], Awaitable[dict[str, Any]]], prompt: _Prompt) -> dict[str, Any]:
        """`work` once no turn runs and the `when_idle` commands sent before it are done (one at a time: a
        `/tree M` sent during a `/tree N summarize` or a `/compact` waits for it rather than being refused)."""
        async with self._idle_commands:
            while self.session.is_streaming and not prompt.cancelled:  # a prompt queued meanwhile runs first
                await self.session.wait_for_idle()
            return {"stopReason": "cancelled"} if prompt.cancelled else await work()

    def cancel(self, *, client_gone: bool = False) -> asyncio.Future[None]:
        """`session/cancel`: abort the run now (its tool processes are killed); the prompts sent before it
        answer `cancelled` (one sent after it runs), and those queued behind the run never reach the model:
        dropped from the queue, settled in the file (`client_gone`, the editor closed stdin: dropped but left
        pending there, as RPC leaves them at EOF, so `session/load` queues them again). The future is done
        once the session settled."""
        for prompt in self._waiting:
            prompt.cancel()
        if client_gone:
            self.session.agent.clear_queues()
        else:
            self.session.intake.journal.clear()
        return asyncio.ensure_future(asyncio.gather(self.session.begin_abort(), self.session.user_bash.begin_abort()))

    def stop_reason(self, cancelled: bool = False) -> str:
        """The stop reason of the settled run. Raises `AcpError` when it ended in a provider error."""
        last = self.watch.last
        reason = last.get("stopReason") if last else None
        if cancelled or self.watch.aborted or reason == "aborted":
            return "cancelled"
        if reason == "error":
            if last and last.get("rawStopReason") == "refusal":
                return "refusal"
            message = (last or {}).get("errorMessage") or "The model request failed."
            raise AcpError(INTERNAL_ERROR, message, {"stopReason": "error"})
        return STOP_REASONS.get(str(reason), "end_turn")

    def _refusal(self, exc: CommandError) -> AcpError:
        """A prompt the session refused: no model or key is `auth_required`, the rest an internal error."""
        code = AUTH_REQUIRED if self.session.readiness_problem() else INTERNAL_ERROR
        return AcpError(code, str(exc))
