"""The interactive mode: one prompt_toolkit Application drawn inline (no alternate screen) under the terminal's
normal scrollback. Finished messages are rendered by rich and written above the live region
(`above.py`), so they stay in the scrollback after exit; the live region holds the streaming message,
running tools, queued messages, the editor and the footer, and is redrawn only when something changed
(`invalidate`, at most every `MIN_REDRAW_S`). It drives the same `AgentSession` as RPC and print mode."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.processors import AfterInput, ConditionalProcessor, PasswordProcessor
from prompt_toolkit.styles import Style

from ... import __version__
from ...agent.agent import message_text
from ...coding.errors import CommandError
from ...coding.agent_session import AgentSession
from ..approvals import answer_dialog, withdraw_on_end
from .above import write_above
from .blocks import notice
from .commands import Commands, builtin
from .completion import FileCompleter, attachments
from .dialogs import Dialogs
from .editor import PromptEditor
from .footer import Footer
from .header import header, resource_list
from .keymap import key_hint, load_keymap, with_keys
from .keys import key_bindings, teach_shift_enter
from .live import LiveState
from .reload import PluginArgs
from .render import clean, color_allowed, to_ansi
from .resize import InlineApplication, Scrollback, WidthRedraw
from .replay import transcript
from .terminal import StrayOutput, Terminal
from .theme import use as use_theme
from .theme_files import resolve_theme
from .view import EventView

MIN_REDRAW_S = 0.03
SPINNER_TICK_S = 0.1
ESCAPE_BYTES_WAIT_S = 0.05
"""How long a lone ESC byte waits for the rest of an escape sequence (terminals send those at once)."""
ESCAPE_WAIT_S = 0.05
"""How long Escape waits for a second key that would make it Alt+key (Alt+Enter) before it aborts. A terminal
sends Alt+key as ESC and the key in one write, so this only has to cover bytes split in transit; a person's
Escape followed by a letter is seconds apart from that (at 0.3 s, Escape then a quick `b` was Alt+b and the
abort was lost). The trade-off: Alt+key typed as a separate Escape and key (Esc, then b) is not Alt+key."""
MENU_ROWS = 8
"""Completions shown at once (fewer when the terminal is short)."""
SHORT_TERMINAL_ROWS = 14
"""Below this many rows an open dialog takes the footer's rows."""
CTRL_C_EXIT_WINDOW_S = 2.0
"""A second Ctrl+C on an empty editor within this many seconds exits."""


async def run_interactive_mode(session: AgentSession, first_prompt: str | None = None,
                               plugin_args: PluginArgs | None = None) -> int:
    """Run the terminal UI on `session` until the user exits; the exit code (0 for Ctrl+D, `/quit`).
    `first_prompt` (the command line's message arguments, or `/resume` for `-r`) is sent at once;
    `plugin_args` (the command line's `-e` paths, `--no-plugins`) are what `/reload` loads again."""
    return await InteractiveMode(session, plugin_args).run(first_prompt)


class InteractiveMode:
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
        self.editor = PromptEditor(agent_dir() / "prompt-history", FileCompleter(session.cwd, self._commands))
        self.live = LiveState()
        self.live.show_thinking = session.settings.get("hideThinkingBlock", True) is False
        self.footer = Footer(session)
        self.dialogs = Dialogs(lambda fields: answer_dialog(self.session, fields), self.editor, self.changed)
        withdraw_on_end(session, self.dialogs.withdraw)  # an aborted call's approval question closes
        self.view = EventView(self.live, print_=self.print_, changed=self.changed,
                              footer_changed=self.footer_changed, set_editor_text=self.editor.set_text,
                              open_dialog=self.dialogs.open, footer_status=self.footer.status)
        self.dialogs.on_close = self.view.dialog_closed
        self.keymap = load_keymap(agent_dir() / "keybindings.json", session.warnings)
        self.commands = Commands(self)
        self._pending: list[str] = []
        self.scrollback = Scrollback()
        self._width_changed = WidthRedraw(self.scrollback, self.terminal, self._spawn, lambda: self._pending.clear())
        self.app: Application[int] = self._application()
        self._draining: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()
        self._ctrl_c_at = 0.0

    # -- running -------------------------------------------------------------------------------------------
    async def run(self, first_prompt: str | None = None) -> int:
        if self.session.settings.get("quietStartup") is not True:
            expand = self.keymap.get("app.tools.expand") or [None]
            self.print_(header(__version__, self._resources(), expand[0]))
        self.show_transcript()
        for warning in self.session.warnings:
            self.say(f"warning: {warning}", "warning")
        problem = self.session.readiness_problem()
        if problem:
            self.say(problem, "error")
        unsubscribe = self.session.subscribe(self.view)
        unsubscribe_failed = self.session.subscribe(self._keep_queue_after_failure)

        def started() -> None:
            self._spawn(self.session.hooks.start())  # plugins' session_start, now that their requests show
            self._spawn(self._tick())
            if first_prompt:
                self._spawn(self._dispatch(first_prompt, None))

        stray = StrayOutput()
        try:
            code = await self.app.run_async(pre_run=started, set_exception_handler=False, handle_sigint=False)
        finally:
            try:
                await self._finish()
            finally:
                unsubscribe()
                unsubscribe_failed()
                log = stray.restore()
        if log is not None:
            self.print_(notice(f"output of plugins and commands written while the UI ran: {log}", "warning"))
        self._resume_hint()
        return code

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

    def spawn(self, coro: Any) -> asyncio.Task:
        """Run `coro` as a task of the mode (cancelled at exit; an exception is shown as an error)."""
        return self._spawn(coro)

    def _spawn(self, coro: Any) -> asyncio.Task:
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
            if self.live.working or self.live.tools:
                self.app.invalidate()

    # -- output ----------------------------------------------------------------------------------------
    def print_(self, *renderables: Any) -> None:
        """Render `renderables` at the terminal's width and write them above the live region, in order."""
        self.scrollback.record(list(renderables))
        self._pending.append(to_ansi(list(renderables), self.terminal.columns()))
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

    # -- input -----------------------------------------------------------------------------------------
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
        self._spawn(self._dispatch(self.editor.take(), behavior, draft))

    async def _dispatch(self, text: str, behavior: str | None, draft: Any = None) -> None:
        if text.startswith("!"):
            await self.commands.shell(text)
            return
        command = builtin(text.strip())
        if command is not None:
            await self.commands.run(*command)
            return
        try:
            text, images = attachments(text, self.session.cwd, lambda problem: self.say(problem, "warning"))
            await self.session.submit(text, images or None, behavior if self.session.is_streaming else None)
        except CommandError as exc:
            kept = draft is not None and self.editor.restore(draft)
            back = " The prompt is back in the editor." if kept else ""
            self.say(f"{str(exc).rstrip('.')}.{back}", "error")

    def _keep_queue_after_failure(self, event: dict[str, Any]) -> None:
        """A run that failed for good (an error after the retries, or one not retried) does not go on with the
        messages queued meanwhile: they come back into the editor (listeners run before the session would
        take them), and a notice says so."""
        if event.get("type") != "agent_end" or event.get("willRetry"):
            return
        messages = event.get("messages") or []
        last = messages[-1] if messages else {}
        if last.get("role") == "assistant" and last.get("stopReason") == "error" and self.restore_queue():
            self.say("the run failed: the messages queued during it are back in the editor (enter sends them)",
                     "warning")

    def interrupt(self) -> None:
        """Escape: queued messages back into the editor (clear_queue), then abort the run and user bash."""
        if not (self.session.is_streaming or self.live.working or self.live.tools):
            return
        self.restore_queue()
        self._spawn(self.session.abort())
        self._spawn(self.session.user_bash.abort())

    def restore_queue(self) -> int:
        """Alt+Up (and Escape): the queued steering and follow-up texts, oldest first, back into the editor
        above what it holds; the run goes on. How many there were."""
        steering, follow_up = self.session.agent.clear_queues()
        queued = [message_text(m) for m in [*steering, *follow_up]]
        if queued:
            self.editor.set_text("\n".join([*queued, self.editor.text()]).rstrip("\n"))
        return len(queued)

    def ctrl_c(self) -> None:
        if self.editor.buffer.text:
            self.editor.clear()
            return
        now = time.monotonic()
        if now - self._ctrl_c_at < CTRL_C_EXIT_WINDOW_S:
            self.exit(0)
            return
        self._ctrl_c_at = now
        self.footer.note = f"press {key_hint('app.clear') or 'ctrl+c'} again to exit"
        asyncio.get_running_loop().call_later(CTRL_C_EXIT_WINDOW_S, self._clear_note)
        self.changed()

    def _clear_note(self) -> None:
        self.footer.note = ""
        self.changed()

    def edit_externally(self) -> None:
        """Ctrl+G: the prompt in `$VISUAL` / `$EDITOR` (`extras.edit_externally`)."""
        from .extras import edit_externally

        async def edit() -> None:
            try:
                await edit_externally(self)
            except CommandError as exc:
                self.say(str(exc), "error")

        self._spawn(edit())

    def cycle(self, what: str) -> None:
        """Shift+Tab (`what` "thinking") or Ctrl+P ("model"): the next level or scoped model."""
        control = self.session.model_control
        try:
            result = control.cycle_thinking_level() if what == "thinking" else control.cycle_model()
        except CommandError as exc:
            self.say(str(exc), "error")
            return
        if result is None:
            self.say("only one model to cycle through" if what == "model" else "this model has no thinking levels")
        self.footer_changed()

    def toggle_thinking(self) -> None:
        self.live.show_thinking = not self.live.show_thinking
        self.say(f"thinking {'shown' if self.live.show_thinking else 'hidden'}")

    def toggle_expanded(self) -> None:
        """Ctrl+O: later collapsible blocks (tool calls, `!` commands) expanded or not; the last one is printed
        again expanded (the scrollback above cannot change)."""
        self.view.expanded = not self.view.expanded
        listing = resource_list(self._resources()) if self.view.expanded else None
        if listing is not None:
            self.print_(listing)
        if self.view.expanded and self.view.last_block is not None:
            self.print_(self.view.last_block(True))
        self.say(f"tool output {'expanded' if self.view.expanded else 'collapsed'}")

    # -- layout ----------------------------------------------------------------------------------------
    def _application(self) -> Application[int]:
        live = Window(FormattedTextControl(self._live_fragments), wrap_lines=True, dont_extend_height=True)
        secret = Condition(lambda: bool(self.dialogs.current and self.dialogs.current.secret))
        placeholder = Condition(lambda: bool(not self.editor.buffer.text and self.dialogs.current
                                             and self.dialogs.current.placeholder))
        control = BufferControl(buffer=self.editor.buffer, input_processors=[
            ConditionalProcessor(PasswordProcessor(), secret),
            ConditionalProcessor(AfterInput(lambda: self.dialogs.current.placeholder if self.dialogs.current
                                            else "", style="class:dim"), placeholder)])
        editor = Window(control, wrap_lines=True, dont_extend_height=True, height=self._editor_height,
                        get_line_prefix=self._prefix)
        rule = Window(height=1, char="─", style="class:rule")
        footer = Window(FormattedTextControl(self._footer_fragments), dont_extend_height=True,
                        style="class:footer")
        menu = Window(FormattedTextControl(self._completion_fragments), dont_extend_height=True)
        completing = Condition(lambda: bool(self.editor.buffer.complete_state
                                            and self.editor.buffer.complete_state.completions))
        root = HSplit([ConditionalContainer(live, filter=Condition(self._live_visible)), rule, editor,
                       ConditionalContainer(menu, filter=completing),
                       ConditionalContainer(HSplit([rule, footer]), filter=Condition(self._footer_visible))])
        app: Application[int] = InlineApplication(
            layout=Layout(root, focused_element=editor), key_bindings=key_bindings(self, self.keymap),
            style=Style.from_dict(self.theme.live), color_depth=_color_depth(), full_screen=False,
            erase_when_done=True, mouse_support=False, min_redraw_interval=MIN_REDRAW_S,
            input=self.terminal.input, output=self.terminal.output, include_default_pygments_style=False)
        app.on_width_change = self._width_changed
        return self._tuned(app)

    def _tuned(self, app: Application[int]) -> Application[int]:
        """Escape alone acts after `ESCAPE_WAIT_S` (it may start Alt+key, whose bytes arrive together)."""
        app.ttimeoutlen, app.timeoutlen = ESCAPE_BYTES_WAIT_S, ESCAPE_WAIT_S
        return app

    def _live_visible(self) -> bool:
        live = self.live
        return bool(live.working or live.tools or live.steering or live.follow_up or live.widgets
                    or not live.text.empty() or self.dialogs.current)

    def _footer_visible(self) -> bool:
        """The footer gives its rows to an open dialog in a short terminal (it comes back when it closes)."""
        return not (self.dialogs.current and self.terminal.rows() < SHORT_TERMINAL_ROWS)

    def _live_fragments(self) -> list[tuple[str, str]]:
        """The live region's rows: what is left of the screen under the editor, the menu and the footer;
        an open dialog first, the streaming message and the rest above it in the rows that remain."""
        state = self.editor.buffer.complete_state
        menu = min(len(state.completions), self._menu_rows()) if state else 0
        height = max(1, self._rows_free() - menu)
        columns = self.terminal.columns()
        dialog = self.dialogs.fragments(columns, height)
        left = height - len(dialog)
        lines = (self.live.fragments(columns, left)[-left:] if left > 0 else []) + dialog
        if lines:
            style, text = lines[-1]
            lines[-1] = (style, text.rstrip("\n"))
        return lines

    def _rows_free(self) -> int:
        """Screen rows left over by the editor, the rule above it and the footer (with its rule)."""
        editor = min(self.editor.buffer.text.count("\n") + 1, self._editor_height().max)
        footer = 1 + len(self.footer.lines(self.terminal.columns())) if self._footer_visible() else 0
        return self.terminal.rows() - 1 - editor - footer

    def _menu_rows(self) -> int:
        """The completion menu's height: 8 rows, fewer in a short terminal (at least 1)."""
        return max(1, min(MENU_ROWS, self._rows_free()))

    def _completion_fragments(self) -> list[tuple[str, str]]:
        from .completion import menu_fragments

        return menu_fragments(self.editor.buffer.complete_state, self._menu_rows(), self.terminal.columns())

    def _editor_height(self) -> Dimension:
        return Dimension(min=1, max=max(1, min(12, self.terminal.rows() // 2)))

    def _prefix(self, line: int, wrap_count: int) -> list[tuple[str, str]]:
        return [("class:prompt", "› " if line == 0 and wrap_count == 0 else "  ")]

    def _footer_fragments(self) -> list[tuple[str, str]]:
        return [("", "\n".join(self.footer.lines(self.terminal.columns())))]

    def _commands(self) -> list[tuple[str, str, str]]:
        """(name, argument hint, description) of every command the editor offers: built-ins, then
        `get_commands` (plugin commands and templates with their `argumentHint`; skills take a request)."""
        from .commands import COMMAND_HINTS, COMMANDS

        offered = [(name, COMMAND_HINTS.get(name, ""), with_keys(what)) for name, what in COMMANDS.items()]
        for item in self.session.get_commands():
            hint = item.get("argumentHint") or ("[request]" if item.get("source") == "skill" else "")
            offered.append((clean(item.get("name")), clean(hint), clean(item.get("description") or "")))
        return offered

    def _resources(self) -> list[tuple[str, list[str]]]:
        resources = self.session.resources
        plugins = [getattr(p, "id", "?") for p in getattr(self.session.hooks, "plugins", [])]
        return [("context", [clean(getattr(f, "path", f)) for f in resources.context_files]),
                ("skills", [s.name for s in resources.skills]),
                ("templates", [f"/{t.name}" for t in resources.templates]), ("plugins", plugins)]


def _color_depth() -> Any:
    """Monochrome under `NO_COLOR` (prompt_toolkit would still colour the live region), else the terminal's."""
    from prompt_toolkit.output import ColorDepth

    return None if color_allowed() else ColorDepth.DEPTH_1_BIT
