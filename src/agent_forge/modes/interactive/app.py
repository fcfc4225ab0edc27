"""The interactive mode: one prompt_toolkit Application drawn inline (no alternate screen) under the terminal's
normal scrollback. Finished messages are rendered by rich and written above the live region
(`above.py`), so they stay in the scrollback after exit; the live region (`layout.py`) holds the streaming
message, running tools, queued messages, the editor and the footer, and is redrawn only when something changed
(`invalidate`, at most every `layout.MIN_REDRAW_S`). It drives the same `AgentSession` as RPC and print mode;
what the keys do is `input_actions.py`.

The editor and the footer are painted before the session is built: the mode starts from the session's prelude
(`coding/prelude.py`: settings, store, start-up model), and the session (`AgentSession` and what it imports,
about a sixth of a start-up) is built right after the first paint (`attach`). Keys typed meanwhile are the
editor's; an application key that acts on the session waits for it (`keys.py`)."""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Coroutine

from prompt_toolkit.application import Application
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.styles import Style

from ... import __version__
from ...ai.visible_text import escape_invisible
from ...coding.paths import os_failure, path_text
from ...coding.safe_read import exists
from ..approvals import answer_dialog, withdraw_on_end
from .above import write_above
from .blocks import notice, whole_message
from .commands import Commands, offered_commands, shadowed_warnings
from .completion import FileCompleter
from .file_index import FileIndex
from .dialogs import Dialogs
from .editor import PromptEditor
from .footer import Footer
from .header import header, session_resources
from .input_actions import InputActions
from .keymap import load_keymap
from .keys import key_bindings, teach_shift_enter
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

if TYPE_CHECKING:
    from ...coding.agent_session import AgentSession
    from ...coding.prelude import SessionPrelude

SPINNER_TICK_S = 0.1
FINISH_NOTICE_S = 0.5
"""How long closing the session (at exit) may take before `FINISHING` says what it waits for."""
FINISHING = "finishing: waiting for plugins to end… (ctrl+c to quit now)"
STARTING = "loading…"
TITLE_LIMIT = 200  # characters of a plugin's window title: terminals cut long ones anyway
"""The footer's note from the first paint until plugins are loaded and the header, transcript and warnings
printed."""


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


TERMINAL_GONE = 128 + signal.SIGHUP
"""The exit code when the terminal goes away: the hang-up's (README "Stopping"), whether its SIGHUP or the end of
the terminal's input is seen first."""


class InteractiveMode(InputActions):
    """The terminal UI for the session `build()` makes on `prelude` (its settings, store and model);
    `run` returns the exit code; `session` is None until it is built (`attach`), and `start_error` says why
    when building it failed (the exit code is then 1)."""

    def __init__(self, prelude: SessionPrelude, build: Callable[[], AgentSession],
                 plugin_args: PluginArgs | None = None):
        from ...coding.paths import agent_dir

        teach_shift_enter()
        settings, cwd = prelude.settings, prelude.options.cwd
        theme, warning = resolve_theme(settings.get("theme"), agent_dir())
        self.theme = use_theme(theme)
        self._warnings = [warning] if warning else []  # the session's warnings once it is built
        self.session: AgentSession = None  # type: ignore[assignment]  (`attach`: before, only the editor acts)
        self._build = build
        self._on_attach: list[Callable[[], None]] = []  # key actions waiting for the session
        self._unsubscribe: list[Callable[[], None]] = []
        self.start_error: str | None = None
        self.plugin_args = plugin_args or PluginArgs()
        self.terminal = Terminal()
        self.terminal.input.vt100_parser.notify = lambda text: self.say(text, "warning")  # a paste left open
        self.files = FileIndex(cwd)  # the `@` search's list, walked again after each turn
        self.editor = PromptEditor(agent_dir() / "prompt-history",
                                   FileCompleter(cwd, lambda: offered_commands(self.session), self.files))
        self.live = LiveState()
        self.live.show_thinking = settings.get("hideThinkingBlock", True) is False
        self.footer = Footer(prelude)
        self.dialogs = Dialogs(lambda fields: answer_dialog(self.session, fields), self.editor, self.changed)
        self.view = EventView(self.live, print_=self.print_, changed=self.changed,
                              footer_changed=self.footer_changed, set_editor_text=self.dialogs.set_editor_text,
                              open_dialog=self.dialogs.open, footer_status=self.footer.status,
                              set_title=self.set_title)
        self.dialogs.on_close = self.view.dialog_closed
        self.dialogs.print_message = lambda dialog: self.print_(*whole_message(dialog.title, dialog.message))
        self.keymap: dict[str, list[str]] = {}
        self.bindings = KeyBindings()
        self.load_keys(self._warnings)
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
                  load_plugins: Callable[[AgentSession], Awaitable[object]] | None = None) -> int:
        """Run until the user exits; the exit code (0 for Ctrl+D, `/quit`; 1 when the session could not be
        built, `start_error`, or entries could not be written to its file). `first_prompt` (the command line's
        message arguments, or `/resume` for `-r`) is sent once plugins are loaded; `load_plugins(session)`
        installs the start-up plugins, run after the editor's first paint (an exception it raises is shown as an
        error and the mode goes on without them)."""
        def started() -> None:  # before the first paint: what these tasks do comes after it
            self._spawn(self._start_up(load_plugins, first_prompt))
            self._spawn(self._tick())

        stray = StrayOutput()
        _typed_ahead(self.app)
        code, finished = None, False  # either unset: a signal stopped the mode (its task was cancelled)
        try:
            code = await self.app.run_async(pre_run=started, set_exception_handler=False, handle_sigint=False)
        except EOFError:  # the terminal's input ended (its window closed) before its hang-up signal came
            code = TERMINAL_GONE
        finally:
            try:
                await self._finish_saying()
                finished = code is not None
            finally:
                for undo in self._unsubscribe:
                    undo()
                log = stray.restore()
                release_terminal()
                if not finished:  # stopped: nothing more is printed, but entries not on disk are said
                    self._say_unsaved(lambda report: print(f"agent-forge: {report}", file=sys.stderr))
        if log is not None:
            self.print_(notice(f"what was written to stderr while the UI ran (plugins, commands, warnings): "
                               f"{path_text(log)}", "warning"))
        unsaved = self._say_unsaved(lambda report: self._say_unwrapped(report, "error"))
        self._resume_hint()
        return 1 if self.start_error is not None or (unsaved and not code) else code

    def _subscribe(self) -> list[Callable[[], None]]:
        """The mode's session listeners (their unsubscribe functions); queued messages a killed process left
        show as queued."""
        session = self.session
        undo = [session.subscribe(listener) for listener in (self.view, self._keep_queue_after_failure,
                                                             self._files_after_turn)]
        withdraw_on_end(session, self.dialogs.withdraw)  # an aborted call's approval question closes
        session.intake.journal.announce()
        return undo

    def attach(self) -> bool:
        """Build the session (after the first paint) and give it to the footer, the listeners and the key
        actions that waited for it; False (the mode exits, `start_error` says why) when it cannot be built."""
        from ...coding.errors import CommandError

        try:
            session = self._build()
        except CommandError as exc:
            self.start_error = str(exc)
        except Exception as exc:  # noqa: BLE001  (said once, as the CLI says a start-up failure)
            self.start_error = f"cannot start the session: {type(exc).__name__}: {exc}"
        if self.start_error is not None:
            self.exit(1)
            return False
        self.session = session
        session.warnings.extend(self._warnings)
        self._unsubscribe = self._subscribe()
        self.footer.attach(session)
        waiting, self._on_attach = self._on_attach, []
        for action in waiting:
            action()
        return True

    def when_attached(self, action: Callable[[], None]) -> None:
        """Run `action` now, or once the session is built (a key pressed before it was)."""
        if self.session is not None:
            action()
        else:
            self._on_attach.append(action)

    async def _start_up(self, load_plugins: Callable[[AgentSession], Awaitable[object]] | None,
                        first_prompt: str | None) -> None:
        """Behind the painted editor: build the session, load the plugins, then print the header, the resumed
        transcript and the warnings above it, in that order; then plugins' `session_start` and the first
        prompt. A prompt sent meanwhile waits for this (`loaded`)."""
        if not self.attach():
            return
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

    async def _load(self, load_plugins: Callable[[AgentSession], Awaitable[object]]) -> None:
        try:
            await load_plugins(self.session)
        except Exception as exc:  # a broken plugin set-up must not take the editor down with it
            from ...plugins.isolation import describe_error

            self.session.warnings.append(f"plugins not loaded: {describe_error(exc)}")

    def _print_start(self) -> None:
        if self.session.settings.get("quietStartup") is not True:
            expand = self.keymap.get("app.tools.expand") or [None]
            self.print_(header(__version__, session_resources(self.session), expand[0]))
        self.show_transcript()
        for warning in [*self.session.warnings, *self.shadowed_warnings()]:  # plugins loaded: theirs count
            self.say(f"warning: {warning}", "warning")
        problem = self.session.readiness_problem()
        if problem:
            self.say(problem, "error")

    def shadowed_warnings(self) -> list[str]:
        """The session's commands a built-in shadows here, one warning each (at start and after `/reload`, which
        reaches it through the UI: `reload.py` importing `commands.py` would close an import cycle)."""
        return shadowed_warnings(self.session)

    def _files_after_turn(self, event: dict[str, Any]) -> None:
        if event.get("type") == "agent_end":  # the agent's tools may have created files: `@` offers them
            self.files.refresh()

    async def loaded(self) -> None:
        """Return once start-up's plugins are loaded (at once after that)."""
        await self._ready.wait()

    async def _finish(self) -> None:
        """Stop what still runs (a run, user bash, our tasks), then close the session (flushes its file)."""
        if self.session is None:  # never built: nothing ran (the prelude's store is released by the caller)
            for task in list(self._tasks):
                task.cancel()
            self._flush_pending()
            return
        if self.session.is_streaming:
            self.session.agent.clear_queues()
            await self.session.abort()
        await self.session.user_bash.abort()
        for task in list(self._tasks):
            task.cancel()
        await self.session.close()
        self._flush_pending()

    async def _finish_saying(self) -> None:
        """`_finish`, saying what it waits for when that takes a while (a plugin's `session_shutdown` may wait
        up to `pluginHandlerTimeoutMs`): the editor and footer are gone by then, and a blank wait reads as a
        hang. Ctrl+C still quits at once (exit code 130, after the resume line)."""
        finishing = asyncio.ensure_future(self._finish())
        done, _ = await asyncio.wait({finishing}, timeout=FINISH_NOTICE_S)
        if not done:
            self.terminal.write(to_ansi([notice(FINISHING)], self.terminal.columns()))
        await finishing

    def _say_unsaved(self, say: Callable[[str], None]) -> bool:
        """Say (with `say`) again what the session's release said on stderr of entries it could not write
        (stderr was the log meanwhile): whether there were any (an exit code of 0 then becomes 1, as in print
        mode)."""
        from ...coding.persistence import unsaved_report

        report = None if self.session is None else unsaved_report(self.session.store)
        if report is not None:
            say(report)
        return report is not None

    def _resume_hint(self) -> None:
        """How to resume: by the recovery copy's path when entries could not be written to the session file
        (the file lacks them; the copy's id alone finds nothing: it may be in the temp dir)."""
        from ...coding.persistence import resume_argument

        store = self.session.store if self.session is not None else None
        if store is not None and store.recovered is not None:
            where = resume_argument(store.recovered[0])
        elif store is not None and store.path is not None and exists(store.path):
            where = store.session_id
        else:
            return
        self._say_unwrapped(f"Resume this session: agent-forge --session {where}")

    def _say_unwrapped(self, text: str, kind: str = "info") -> None:
        """A line with a command or path to copy, written unwrapped after the UI ended: the terminal wraps it
        softly, so a copy (or `tmux capture-pane -J`) gives it whole, without a line break inside a path."""
        self.terminal.write(to_ansi([notice(text, kind)], max(len(text) + 8, self.terminal.columns())))

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
            self.say(os_failure(exc) or f"internal error: {type(exc).__name__}: {exc}", "error")

    async def _tick(self) -> None:
        """Redraw the spinner and elapsed times while something runs; nothing is redrawn while idle."""
        while True:
            await asyncio.sleep(SPINNER_TICK_S)
            if self.live.busy:
                self.app.invalidate()

    # -- output ----------------------------------------------------------------------------------------
    def set_title(self, title: str) -> None:
        """A plugin's `setTitle`: the terminal's window title (OSC 2), with control and invisible characters
        shown as escapes, never sent raw, and at most `TITLE_LIMIT` characters."""
        shown = escape_invisible(" ".join(title.split()))[:TITLE_LIMIT]
        self.app.output.set_title(shown)
        self.app.output.flush()

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
            await write_above(self._write_pending)
        self._flush_pending()

    def _write_pending(self) -> None:
        """The printed text not written yet, where the live region was (erased by `write_above`); or, when that
        would leave blank rows under the footer (the region had scrolled the screen: a `/` menu narrowed by
        typing, then Enter sent what it held), the whole conversation again, so it ends right above the region."""
        rows = sum(chunk.count("\n") for chunk in self._pending)  # `to_ansi` wraps: one row a line
        if self.app.rows_left_blank_by(rows) > 0:
            self._width_changed.write_all()
        else:
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

    def load_keys(self, warnings: list[str]) -> None:
        """Read `<agent dir>/keybindings.json` (again: `/reload`) into `keymap`, its problems added to `warnings`,
        and make `bindings` (which the Application reads at each key) bind its keys."""
        from ...coding.paths import agent_dir

        self.keymap = load_keymap(agent_dir() / "keybindings.json", warnings)
        self.bindings = key_bindings(self, self.keymap)

    def footer_changed(self) -> None:
        self.footer.refresh()
        self.app.invalidate()
