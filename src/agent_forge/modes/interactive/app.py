"""The interactive mode: one prompt_toolkit Application drawn inline (no alternate screen) under the terminal's
normal scrollback. Finished messages are rendered by rich and written above the live region
(`above.py`), so they stay in the scrollback after exit; the live region (`layout.py`) holds the streaming
message, running tools, queued messages, the editor and the footer, and is redrawn only when something changed
(`invalidate`, at most every `layout.MIN_REDRAW_S`). It drives the same `AgentSession` as RPC and print mode;
what the keys do is `input_actions.py`."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Coroutine

from prompt_toolkit.application import Application
from prompt_toolkit.styles import Style

from ... import __version__
from ...coding.agent_session import AgentSession
from ..approvals import answer_dialog, withdraw_on_end
from .above import write_above
from .blocks import notice, whole_message
from .commands import Commands, offered_commands
from .completion import FileCompleter
from .file_index import FileIndex
from .dialogs import Dialogs
from .editor import PromptEditor
from .footer import Footer
from .header import header, session_resources
from .input_actions import InputActions
from .keymap import load_keymap
from .keys import teach_shift_enter
from .layout import build_application
from .live import LiveState
from .reload import PluginArgs
from .render import to_ansi
from .resize import Scrollback, WidthRedraw
from .replay import transcript
from .terminal import StrayOutput, Terminal
from .theme import use as use_theme
from .theme_files import resolve_theme
from .typeahead import release as release_terminal, take as take_typed_ahead
from .view import EventView

SPINNER_TICK_S = 0.1
STARTING = "loading…"
"""The footer's note from the first paint until plugins are loaded and the header, transcript and warnings
printed."""


async def run_interactive_mode(session: AgentSession, first_prompt: str | None = None,
                               plugin_args: PluginArgs | None = None,
                               load_plugins: Callable[[], Awaitable[object]] | None = None) -> int:
    """Run the terminal UI on `session` until the user exits; the exit code (0 for Ctrl+D, `/quit`).
    `first_prompt` (the command line's message arguments, or `/resume` for `-r`) is sent once plugins are
    loaded; `plugin_args` (the command line's `-e` paths, `--no-plugins`) are what `/reload` loads again;
    `load_plugins` installs the start-up plugins into `session`, run after the editor's first paint (an
    exception it raises is shown as an error and the mode goes on without them)."""
    return await InteractiveMode(session, plugin_args).run(first_prompt, load_plugins)


def _typed_ahead(app: Application[int]) -> None:
    """The keys typed before the editor was ready (`typeahead.hold`), for prompt_toolkit to take first."""
    from prompt_toolkit.input.typeahead import store_typeahead
    from prompt_toolkit.key_binding import KeyPress

    from .paste import PasteSafeParser

    keys: list[KeyPress] = []
    parser = PasteSafeParser(keys.append)  # the same rules as later input: a stray end-of-paste mark, a mouse report
    parser.feed_burst(take_typed_ahead())
    parser.flush()
    if keys:
        store_typeahead(app.input, keys)


class InteractiveMode(InputActions):
    """The terminal UI for one session; `run` returns the exit code."""

    def __init__(self, session: AgentSession, plugin_args: PluginArgs | None = None):
        from ...coding.paths import agent_dir

        teach_shift_enter()
        theme, warning = resolve_theme(session.settings.get("theme"), agent_dir())
        self.theme = use_theme(theme)
        session.warnings.extend([warning] if warning else [])
        self.session = session
        self.plugin_args = plugin_args or PluginArgs()
        self.terminal = Terminal()
        self.files = FileIndex(session.cwd)  # the `@` search's list, walked again after each turn
        self.editor = PromptEditor(agent_dir() / "prompt-history",
                                   FileCompleter(session.cwd, lambda: offered_commands(self.session), self.files))
        self.live = LiveState()
        self.live.show_thinking = session.settings.get("hideThinkingBlock", True) is False
        self.footer = Footer(session)
        self.dialogs = Dialogs(lambda fields: answer_dialog(self.session, fields), self.editor, self.changed)
        withdraw_on_end(session, self.dialogs.withdraw)  # an aborted call's approval question closes
        self.view = EventView(self.live, print_=self.print_, changed=self.changed,
                              footer_changed=self.footer_changed, set_editor_text=self.editor.set_text,
                              open_dialog=self.dialogs.open, footer_status=self.footer.status)
        self.dialogs.on_close = self.view.dialog_closed
        self.dialogs.print_message = lambda dialog: self.print_(*whole_message(dialog.title, dialog.message))
        self.keymap = load_keymap(agent_dir() / "keybindings.json", session.warnings)
        self.commands = Commands(self)
        self._pending: list[str] = []
        self.scrollback = Scrollback()
        self._width_changed = WidthRedraw(self.scrollback, self.terminal, self._spawn, lambda: self._pending.clear())
        self.app: Application[int] = build_application(self)
        self.app.on_width_change = self._width_changed
        self.app.on_shrink = self._width_changed.reprint  # the conversation's end back on screen, blank rows gone
        self._draining: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()
        self._ctrl_c_at = 0.0
        self._ready = asyncio.Event()  # set once start-up's background loading is over (`loaded`)
        self.footer.note = STARTING

    # -- running -------------------------------------------------------------------------------------------
    async def run(self, first_prompt: str | None = None,
                  load_plugins: Callable[[], Awaitable[object]] | None = None) -> int:
        unsubscribe = self.session.subscribe(self.view)
        unsubscribe_failed = self.session.subscribe(self._keep_queue_after_failure)
        unsubscribe_files = self.session.subscribe(self._files_after_turn)
        self.session.intake.journal.announce()  # messages a killed process left queued show as queued

        def started() -> None:  # before the first paint: what these tasks do comes after it
            self._spawn(self._start_up(load_plugins, first_prompt))
            self._spawn(self._tick())

        stray = StrayOutput()
        _typed_ahead(self.app)
        try:
            code = await self.app.run_async(pre_run=started, set_exception_handler=False, handle_sigint=False)
        finally:
            try:
                await self._finish()
            finally:
                unsubscribe()
                unsubscribe_failed()
                unsubscribe_files()
                log = stray.restore()
                release_terminal()
        if log is not None:
            self.print_(notice(f"output of plugins and commands written while the UI ran: {log}", "warning"))
        self._resume_hint()
        return code

    async def _start_up(self, load_plugins: Callable[[], Awaitable[object]] | None,
                        first_prompt: str | None) -> None:
        """Behind the painted editor: load the plugins, then print the header, the resumed transcript and the
        warnings above it, in that order; then plugins' `session_start` and the first prompt. A prompt sent
        meanwhile waits for this (`loaded`)."""
        try:
            if load_plugins is not None:
                await self._load(load_plugins)
            self._print_start()
            if self._draining is not None:
                await self._draining  # on screen before the note goes: the footer says when start-up is over
        finally:
            self._ready.set()
            self.footer.note = "" if self.footer.note == STARTING else self.footer.note
            self.changed()
        self._spawn(self.session.hooks.start())  # plugins' session_start, now that their requests show
        if first_prompt:
            self._spawn(self._dispatch(first_prompt, None))

    async def _load(self, load_plugins: Callable[[], Awaitable[object]]) -> None:
        try:
            await load_plugins()
        except Exception as exc:  # a broken plugin set-up must not take the editor down with it
            self.session.warnings.append(f"plugins not loaded: {type(exc).__name__}: {exc}")

    def _print_start(self) -> None:
        if self.session.settings.get("quietStartup") is not True:
            expand = self.keymap.get("app.tools.expand") or [None]
            self.print_(header(__version__, session_resources(self.session), expand[0]))
        self.show_transcript()
        for warning in self.session.warnings:
            self.say(f"warning: {warning}", "warning")
        problem = self.session.readiness_problem()
        if problem:
            self.say(problem, "error")

    def _files_after_turn(self, event: dict[str, Any]) -> None:
        if event.get("type") == "agent_end":  # the agent's tools may have created files: `@` offers them
            self.files.refresh()

    async def loaded(self) -> None:
        """Return once start-up's plugins are loaded (at once after that)."""
        await self._ready.wait()

    async def _finish(self) -> None:
        """Stop what still runs (a run, user bash, our tasks), then close the session (flushes its file)."""
        if self.session.is_streaming:
            self.session.agent.clear_queues()
            await self.session.abort()
        await self.session.user_bash.abort()
        for task in list(self._tasks):
            task.cancel()
        await self.session.close()
        self._flush_pending()

    def _resume_hint(self) -> None:
        store = self.session.store
        if store.path is not None and store.path.exists():
            self.terminal.write(to_ansi([notice(f"Resume this session: agent-forge --session "
                                                       f"{store.session_id}")], self.terminal.columns()))

    def exit(self, code: int) -> None:
        if self.app.is_running and not self.app.future.done():  # type: ignore[union-attr]
            self.app.exit(result=code)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task:
        """Run `coro` as a task of the mode (cancelled at exit; an exception is shown as an error)."""
        return self._spawn(coro)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            self.say(f"internal error: {type(exc).__name__}: {exc}", "error")

    async def _tick(self) -> None:
        """Redraw the spinner and elapsed times while something runs; nothing is redrawn while idle."""
        while True:
            await asyncio.sleep(SPINNER_TICK_S)
            if self.live.busy:
                self.app.invalidate()

    # -- output ----------------------------------------------------------------------------------------
    def print_(self, *renderables: Any) -> None:
        """Render `renderables` at the terminal's width and write them above the live region, in order."""
        width = self.terminal.columns()
        self._pending.append(to_ansi(list(renderables), width))
        self.scrollback.record(list(renderables), self._pending[-1], width)
        if not self.app.is_running:
            self._flush_pending()
        elif self._draining is None or self._draining.done():
            self._draining = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        while self._pending and self.app.is_running:
            await write_above(self._flush_pending)
        self._flush_pending()

    def _flush_pending(self) -> None:
        chunk, self._pending = "".join(self._pending), []
        if chunk:
            self.terminal.write(chunk)

    def show_transcript(self) -> None:
        """Print the session's messages so far (a resumed or switched session)."""
        messages = self.session.messages
        if messages:
            self.print_(*transcript(messages, show_thinking=self.live.show_thinking, expanded=self.view.expanded))

    def say(self, text: str, kind: str = "info") -> None:
        self.print_(notice(text, kind))

    def changed(self) -> None:
        self.app.invalidate()

    def apply_theme(self, name: object) -> None:
        """Use theme `name` for what is printed from now on and for the live region (`/settings`); a bad
        custom theme is a warning and the dark theme."""
        from ...coding.paths import agent_dir

        theme, warning = resolve_theme(name, agent_dir())
        self.theme = use_theme(theme)
        self.app.style = Style.from_dict(theme.live)
        if warning:
            self.say(warning, "warning")
        self.changed()

    def footer_changed(self) -> None:
        self.footer.refresh()
        self.app.invalidate()
