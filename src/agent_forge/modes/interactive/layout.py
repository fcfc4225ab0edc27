"""The live region's layout: the streaming message, running tools and dialogs above the editor, the
completion menu under it, then the footer; each row count derived from the terminal's size on every redraw
(`ScreenLayout`), and the inline prompt_toolkit Application around them (`build_application`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import DynamicKeyBindings
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.processors import AfterInput, ConditionalProcessor, PasswordProcessor
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.styles import Style

from .graphemes import drawn, drawn_fragments
from .render import color_allowed
from .visible import ShowInvisible
from .resize import InlineApplication

if TYPE_CHECKING:
    from .app import InteractiveMode

MIN_REDRAW_S = 0.03
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

Fragments = list[tuple[str, str]]


def build_application(mode: InteractiveMode) -> Application[int]:
    """The inline Application of `mode` (its editor, dialogs, live state, footer, terminal and keymap);
    `run_async` returns the exit code."""
    screen = ScreenLayout(mode)
    live = Window(FormattedTextControl(screen.live_fragments), wrap_lines=True, dont_extend_height=True)
    editor = Window(_editor_control(mode), wrap_lines=True, dont_extend_height=True, height=screen.editor_height,
                    get_line_prefix=_prefix)
    rule = Window(height=1, char="─", style="class:rule")
    top_rule = Window(FormattedTextControl(_drawn(screen.spinner_fragments)), height=1, char="─", style="class:rule")
    # the rows an area that scrolled the screen no longer fills: above the live region, or under an open menu
    # (typing narrows it: the editor stays where it is)
    completing = Condition(lambda: bool(mode.editor.buffer.complete_state
                                        and mode.editor.buffer.complete_state.completions))
    pad = Window(height=lambda: Dimension.exact(0 if completing() else app.pad_rows()))
    menu_pad = Window(height=lambda: Dimension.exact(app.pad_rows() if completing() else 0))
    footer = Window(FormattedTextControl(_drawn(screen.footer_fragments)), dont_extend_height=True,
                    style="class:footer")
    menu = Window(FormattedTextControl(_drawn(screen.completion_fragments)), dont_extend_height=True)
    content = HSplit([ConditionalContainer(live, filter=Condition(screen.live_visible)), top_rule, editor,
                      ConditionalContainer(HSplit([menu, menu_pad]), filter=completing),
                      ConditionalContainer(HSplit([rule, footer]), filter=Condition(screen.footer_visible))])
    root = HSplit([pad, content])
    app: Application[int] = InlineApplication(
        layout=Layout(root, focused_element=editor), key_bindings=DynamicKeyBindings(lambda: mode.bindings),
        style=Style.from_dict(mode.theme.live), color_depth=_color_depth(), full_screen=False,
        erase_when_done=True, mouse_support=False, min_redraw_interval=MIN_REDRAW_S,
        input=mode.terminal.input, output=mode.terminal.output, include_default_pygments_style=False)
    # Escape alone acts after `ESCAPE_WAIT_S` (it may start Alt+key, whose bytes arrive together)
    app.ttimeoutlen, app.timeoutlen = ESCAPE_BYTES_WAIT_S, ESCAPE_WAIT_S
    app.natural_height = lambda: content.preferred_height(mode.terminal.columns(), mode.terminal.rows()).preferred
    # the `/` or `@` menu, like a dialog, may scroll the screen: closed, it leaves blank rows (`resize.py`)
    app.overlay_open = lambda: mode.dialogs.current is not None or completing()
    return app


def _drawn(fragments: Callable[[], Fragments]) -> Callable[[], Fragments]:
    """`fragments` with each grapheme cluster drawn so that the terminal gives it the columns prompt_toolkit
    counts (`graphemes.drawn_fragments`): text from anywhere (a plugin's widget or status) gets it too."""
    return lambda: drawn_fragments(fragments())


def _editor_control(mode: InteractiveMode) -> BufferControl:
    """The editor's buffer, masked for a secret dialog, with a dialog's placeholder while it is empty."""
    dialogs = mode.dialogs
    secret = Condition(lambda: bool(dialogs.current and dialogs.current.secret))
    placeholder = Condition(lambda: bool(not mode.editor.buffer.text and dialogs.current
                                         and dialogs.current.placeholder))
    return BufferControl(buffer=mode.editor.buffer, input_processors=[
        ConditionalProcessor(PasswordProcessor(), secret), ShowInvisible(),
        ConditionalProcessor(AfterInput(lambda: drawn(dialogs.current.placeholder) if dialogs.current else "",
                                        style="class:dim"), placeholder)])


class ScreenLayout:
    """Row counts and fragments of the live region, computed on each redraw from `mode`'s state."""

    def __init__(self, mode: InteractiveMode):
        self.mode = mode

    def live_visible(self) -> bool:
        live = self.mode.live
        return bool(live.has_rows() or self.mode.dialogs.current)

    def spinner_fragments(self) -> Fragments:
        """The rule above the editor's text: the run's spinner (`LiveState.spinner`), the rule's line after it."""
        text = self.mode.live.spinner(self.mode.terminal.columns(), self.mode.dialogs.short_hint())
        return [("class:spinner", text)] if text else []

    def footer_visible(self) -> bool:
        """The footer gives its rows to an open dialog in a short terminal (it comes back when it closes)."""
        return not (self.mode.dialogs.current and self.mode.terminal.rows() < SHORT_TERMINAL_ROWS)

    def live_fragments(self) -> Fragments:
        """The live region's rows: what is left of the screen under the editor, the menu and the footer;
        an open dialog first, the streaming message and the rest above it in the rows that remain; drawn
        (`graphemes.drawn_fragments`: `LiveState.fragments` draws its rows, the streamed text's as it wraps
        them, so that text is not drawn twice per redraw)."""
        mode = self.mode
        state = mode.editor.buffer.complete_state
        menu = min(len(state.completions), self.menu_rows()) if state else 0
        height = max(1, self.rows_free() - menu)
        columns = mode.terminal.columns()
        dialog = drawn_fragments(mode.dialogs.fragments(columns, height))
        left = height - len(dialog)
        lines = (mode.live.fragments(columns, left)[-left:] if left > 0 else []) + dialog
        if lines:
            style, text = lines[-1]
            lines[-1] = (style, text.rstrip("\n"))
        return lines

    def rows_free(self) -> int:
        """Screen rows left over by the editor, the rule above it and the footer (with its rule)."""
        mode = self.mode
        editor = min(mode.editor.buffer.text.count("\n") + 1, self.editor_height().max)
        footer = 1 + len(mode.footer.lines(mode.terminal.columns(), mode.terminal.rows())) \
            if self.footer_visible() else 0
        return mode.terminal.rows() - 1 - editor - footer

    def menu_rows(self) -> int:
        """The completion menu's height: 8 rows, fewer in a short terminal (at least 1)."""
        return max(1, min(MENU_ROWS, self.rows_free()))

    def completion_fragments(self) -> Fragments:
        from .completion import menu_fragments

        return menu_fragments(self.mode.editor.buffer.complete_state, self.menu_rows(), self.mode.terminal.columns())

    def editor_height(self) -> Dimension:
        return Dimension(min=1, max=max(1, min(12, self.mode.terminal.rows() // 2)))

    def footer_fragments(self) -> Fragments:
        return [("", "\n".join(self.mode.footer.lines(self.mode.terminal.columns(), self.mode.terminal.rows())))]


def _prefix(line: int, wrap_count: int) -> Fragments:
    return [("class:prompt", "› " if line == 0 and wrap_count == 0 else "  ")]


def _color_depth() -> ColorDepth | None:
    """Monochrome under `NO_COLOR` (prompt_toolkit would still colour the live region), else the terminal's."""
    return None if color_allowed() else ColorDepth.DEPTH_1_BIT
