"""What the editor's keys do to the session (`InputActions`, a part of `InteractiveMode`): Enter and
Alt+Enter send or queue the text (a `!` line, a built-in `/command` or a prompt), Escape aborts, Alt+Up takes
the queue back, Ctrl+C clears or exits, Ctrl+G edits externally, Shift+Tab / Ctrl+P cycle, Ctrl+T / Ctrl+O
toggle thinking and expanded output."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Coroutine, TypeVar

from ...coding.errors import CommandError
from .commands import builtin
from .completion import attachments, typed_text
from .blocks import thinking_block
from .header import resource_list, session_resources
from .keymap import key_hint
from .wording import error_text

if TYPE_CHECKING:
    from ...coding.agent_session import AgentSession
    from .commands import Commands
    from .dialogs import Dialogs
    from .editor import PromptEditor
    from .footer import Footer
    from .live import LiveState
    from .view import EventView

T = TypeVar("T")

CTRL_C_EXIT_WINDOW_S = 2.0
"""A second Ctrl+C on an empty editor within this many seconds exits."""


class InputActions:
    """The key actions of `InteractiveMode` (which provides the attributes declared here)."""

    session: AgentSession
    editor: PromptEditor
    live: LiveState
    footer: Footer
    view: EventView
    commands: Commands
    dialogs: Dialogs
    _ctrl_c_at: float
    say: Callable[..., None]
    print_: Callable[..., None]
    changed: Callable[[], None]
    footer_changed: Callable[[], None]
    exit: Callable[[int], None]
    _spawn: Callable[[Coroutine[Any, Any, Any]], asyncio.Task]
    _sent = 0  # prompts sent from the editor so far (a refused one comes back in this order)

    async def loaded(self) -> None:
        """Wait for what start-up loads in the background (plugins); overridden by the mode."""

    def send(self, behavior: str) -> None:
        """Enter (`behavior` "steer") or Alt+Enter ("followUp"): take the editor's text and dispatch it. A
        prompt refused (a binary `@file`, no model) comes back into the editor: nothing typed is lost."""
        if not self.editor.text().strip():
            return
        if self.editor.text().strip() in ("!", "!!"):
            self.say("usage: !command runs a shell command, its output added to the context; !!command keeps "
                     "it out of the context")
            return
        draft = self.editor.snapshot()
        self._sent += 1
        self._spawn(self._dispatch(self.editor.take(), behavior, draft, self._sent))

    async def _dispatch(self, text: str, behavior: str | None, draft: Any = None, order: int = 0) -> None:
        # A prompt typed while plugins still load waits for them: their tools, commands and hooks belong to it
        await self.loaded()
        if text.startswith("!"):
            await self.commands.shell(text)
            return
        command = builtin(text.strip())
        if command is not None:
            with self.dialogs.expecting():  # keys typed before its dialog opens are that dialog's
                await self.commands.run(*command)
            return
        try:
            if await self._submit(text, behavior) == "handled":
                await self._commands_running(text)
        except CommandError as exc:
            if draft is not None and not self.dialogs.keep(draft):  # a dialog's text is not the prompt's
                self.editor.restore(draft, order)
            back = " The prompt is back in the editor." if draft is not None else ""
            self.say(f"{error_text(exc).rstrip('.')}.{back}", "error")

    async def _submit(self, text: str, behavior: str | None) -> str:
        """`text` (with its `@file` attachments) to the session: its disposition. Raises `CommandError`."""
        text, images = attachments(text, self.session.cwd, lambda problem: self.say(problem, "warning"))
        # queued while the session is busy (a run, a compaction, a branch summary: sent once it is over) or an
        # earlier prompt is still being taken in (its run will have started by the time this one is)
        queue_as = (behavior or "steer") if self.session_busy() or self.session.intake.taking_in else None
        return await self.working("sending the prompt…", self.session.submit(text, images or None, queue_as))

    async def _commands_running(self, text: str) -> None:
        """A plugin command took the prompt `text` and runs on (it may wait on a server or a person): the
        spinner says so until the commands running end, and Escape or Ctrl+C cancels them (`interrupt`)."""
        from .render import clean

        running = self.session.intake.running_commands
        if running:
            await self.working(f"running {clean(text.split()[0])[:40]}…", asyncio.wait(set(running)))

    def session_busy(self) -> bool:
        """Whether the session works: a run, or a compaction or branch summary outside one."""
        return self.session.is_streaming or self.session.compaction.is_compacting

    async def working(self, activity: str, work: Awaitable[T]) -> T:
        """Await `work`, a session call that may wait long outside a run (a model request, a server, a plugin):
        meanwhile the spinner shows `activity` with the abort hint, and Escape or Ctrl+C abort it (`interrupt`:
        the session's `abort`, which stops a branch summary, a compaction and prompts still being taken in)."""
        token = self.live.begin(activity)
        self.changed()
        try:
            return await work
        finally:
            self.live.end(token)
            self.changed()

    async def interruptible(self, activity: str, work: Awaitable[T]) -> tuple[T, bool]:
        """`working`, and whether Escape or Ctrl+C aborted something meanwhile (a session change cancelled by
        that abort answers like a vetoed one: the caller tells the two apart so)."""
        before = self.live.interrupts
        result = await self.working(activity, work)
        return result, self.live.interrupts != before

    def _keep_queue_after_failure(self, event: dict[str, Any]) -> None:
        """A run that failed for good (an error after the retries, or one not retried) does not go on with the
        messages queued meanwhile: they come back into the editor (listeners run before the session would
        take them), and a notice says so."""
        if event.get("type") != "agent_end" or event.get("willRetry"):
            return
        messages = event.get("messages") or []
        last = messages[-1] if messages else {}
        if last.get("role") == "assistant" and last.get("stopReason") == "error" and self.restore_queue():
            self.say("the run failed: the messages queued during it are back in the editor"
                     + key_hint("app.send", " ({} sends them)"), "warning")

    def interrupt(self) -> None:
        """Escape: queued messages back into the editor (clear_queue), then abort what works: the run, a
        compaction or branch summary, a prompt still being taken in (`working`), and user bash. What works at
        the key press is stopped now (`begin_abort`), not a loop turn later: a run, prompt or session change
        starting meanwhile is not aborted by a key pressed before it."""
        if not (self.session_busy() or self.live.busy):
            return
        self.live.interrupts += 1
        self.restore_queue()
        self._spawn(_settled(self.session.begin_abort(), self.session.user_bash.begin_abort()))

    def restore_queue(self) -> int:
        """Alt+Up (and Escape): the queued steering and follow-up texts, oldest first, back into the editor
        above what it holds; the run goes on. How many there were."""
        from ...agent.agent import message_text  # (not before the first paint: `app.py`)

        steering, follow_up = self.session.intake.journal.clear()
        queued = [typed_text(message_text(m), self.session.cwd) for m in [*steering, *follow_up]]
        if queued and not self.dialogs.keep(("\n".join(queued), {})):  # an open dialog's text is not theirs
            self.editor.set_text("\n".join([*queued, self.editor.text()]).rstrip("\n"))
        return len(queued)

    def ctrl_c(self) -> None:
        """Ctrl+C: clear the editor; on an empty one abort what works, as Escape does (`interrupt`), and a
        second press within `CTRL_C_EXIT_WINDOW_S` exits."""
        if self.editor.buffer.text:
            self.editor.clear()
            return
        now = time.monotonic()
        if now - self._ctrl_c_at < CTRL_C_EXIT_WINDOW_S:
            self.exit(0)
            return
        self.interrupt()
        self._ctrl_c_at = now
        self.footer.note = f"press {key_hint('app.clear') or 'ctrl+c'} again to exit"
        asyncio.get_running_loop().call_later(CTRL_C_EXIT_WINDOW_S, self._clear_note)
        self.changed()

    def _clear_note(self) -> None:
        self.footer.note = ""
        self.changed()

    def suspend(self) -> None:
        """Ctrl+Z: stop the process (SIGTSTP to its process group) as terminal programs do, the terminal in its
        own modes meanwhile; after `fg` the live region is drawn again. Nothing where the system has no job
        control (and a process group without a job-control shell is not stopped: the kernel drops the signal)."""
        import os
        import signal

        from prompt_toolkit.application import run_in_terminal

        from .typeahead import paused

        stop = getattr(signal, "SIGTSTP", None)
        if stop is None:
            return

        def suspended() -> None:
            with paused(take_queued=False):  # keys typed after `fg` are the editor's, read as usual
                os.kill(0, stop)

        run_in_terminal(suspended)

    def edit_externally(self) -> None:
        """Ctrl+G: the prompt in `$VISUAL` / `$EDITOR` (`extras.edit_externally`)."""
        from .extras import edit_externally

        async def edit() -> None:
            try:
                await edit_externally(self)
            except CommandError as exc:
                self.say(error_text(exc), "error")

        self._spawn(edit())

    def cycle(self, what: str) -> None:
        """Shift+Tab (`what` "thinking") or Ctrl+P ("model"): the next level or scoped model."""
        control = self.session.model_control
        try:
            result = control.cycle_thinking_level() if what == "thinking" else control.cycle_model()
        except CommandError as exc:
            self.say(error_text(exc), "error")
            return
        if result is None:
            self.say("only one model to cycle through" if what == "model" else "this model has no thinking levels")
        self.footer_changed()

    def toggle_thinking(self) -> None:
        """Ctrl+T: later thinking shown or not; shown, the last answer's thinking is printed again (the
        scrollback above cannot change)."""
        self.live.show_thinking = not self.live.show_thinking
        if self.live.show_thinking and self.view.last_thinking:
            self.print_(thinking_block(self.view.last_thinking), "")
        self.say(f"thinking {'shown' if self.live.show_thinking else 'hidden'}")

    def toggle_expanded(self) -> None:
        """Ctrl+O: later collapsible blocks (tool calls, `!` commands) expanded or not; the last one is printed
        again expanded (the scrollback above cannot change)."""
        self.view.expanded = not self.view.expanded
        listing = resource_list(session_resources(self.session)) if self.view.expanded else None
        if listing is not None:
            self.print_(listing)
        if self.view.expanded and self.view.last_block is not None:
            self.print_(self.view.last_block(True))
        self.say(f"tool output {'expanded' if self.view.expanded else 'collapsed'}")


async def _settled(*aborts: Awaitable[object]) -> None:
    """Await the second parts of aborts begun already (an error in one is shown by `_spawn`)."""
    await asyncio.gather(*aborts)
