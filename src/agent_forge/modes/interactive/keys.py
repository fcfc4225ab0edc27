"""Key bindings of the editor and the application (on top of prompt_toolkit's Emacs bindings).

Enter sends (a steering message while the agent works), Alt+Enter queues a follow-up, Shift+Enter or Ctrl+J
inserts a newline, Escape aborts (queued messages come back into the editor), Ctrl+C clears the editor and
exits on a second press when it is empty, Ctrl+D on an empty editor exits, Ctrl+T shows or hides thinking,
Ctrl+O expands tool output, a bracketed paste goes through `PromptEditor.paste` (large ones collapse)."""

from __future__ import annotations

from typing import Any

from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys

HOTKEYS = [
    ("enter", "send; while the agent works: steer (delivered after the current tool calls)"),
    ("alt+enter", "queue a follow-up (delivered when the agent would stop)"),
    ("shift+enter, ctrl+j", "new line"),
    ("escape", "abort the run; queued messages come back into the editor"),
    ("ctrl+c", "clear the editor; on an empty editor press twice to exit"),
    ("ctrl+d", "exit (on an empty editor)"),
    ("ctrl+t", "show or hide thinking"),
    ("ctrl+o", "expand or collapse tool output (the last block is shown again)"),
    ("ctrl+g", "edit the prompt in $VISUAL / $EDITOR"),
    ("shift+tab", "next thinking level"),
    ("ctrl+p", "next model of the --models scope (all models with a key without one)"),
    ("up, down", "move in the text; at its first or last line: prompt history"),
    ("@name, tab", "@: fuzzy file search (attached when sent); tab: complete a path or take a completion"),
    ("ctrl+a/e, alt+b/f, ...", "Emacs editing keys (ctrl+w, ctrl+k, ctrl+u, ctrl+y, ...)"),
    ("!cmd, !!cmd", "run a shell command (!! keeps it out of the context)"),
]

SHIFT_ENTER_SEQUENCES = ("\x1b[13;2u", "\x1b[27;2;13~")
"""What terminals with the kitty keyboard protocol or xterm's modifyOtherKeys send for Shift+Enter."""


def teach_shift_enter() -> None:
    """Make prompt_toolkit read those sequences as Ctrl+J (a newline) instead of stray text."""
    for sequence in SHIFT_ENTER_SEQUENCES:
        ANSI_SEQUENCES.setdefault(sequence, Keys.ControlJ)


def key_bindings(ui: Any) -> KeyBindings:
    """The bindings, calling into the interactive mode `ui` (`send`, `interrupt`, `ctrl_c`, `exit`, ...)."""
    kb = KeyBindings()
    empty = _editor_empty(ui)

    @kb.add("enter")
    def _send(event: Any) -> None:
        ui.send("steer")

    @kb.add("escape", "enter")
    def _follow_up(event: Any) -> None:
        ui.send("followUp")

    @kb.add("c-j")
    def _newline(event: Any) -> None:
        event.current_buffer.newline(copy_margin=False)

    @kb.add("escape")
    def _interrupt(event: Any) -> None:
        ui.interrupt()

    @kb.add("c-c")
    def _ctrl_c(event: Any) -> None:
        ui.ctrl_c()

    @kb.add("c-d", filter=empty)
    def _ctrl_d(event: Any) -> None:
        ui.exit(0)

    @kb.add("c-t")
    def _thinking(event: Any) -> None:
        ui.toggle_thinking()

    @kb.add("c-o")
    def _expand(event: Any) -> None:
        ui.toggle_expanded()

    @kb.add("c-g")
    def _external_editor(event: Any) -> None:
        ui.edit_externally()

    @kb.add("s-tab")
    def _cycle_thinking(event: Any) -> None:
        ui.cycle("thinking")

    @kb.add("c-p")
    def _cycle_model(event: Any) -> None:
        ui.cycle("model")

    @kb.add(Keys.BracketedPaste)
    def _paste(event: Any) -> None:
        ui.editor.paste(event.data)

    _completion_bindings(kb, ui)
    _dialog_bindings(kb, ui)
    return kb


def _completion_bindings(kb: KeyBindings, ui: Any) -> None:
    """Tab starts or moves through completions; Enter on a selected one takes it (closes the menu)."""
    from prompt_toolkit.filters import Condition

    selected = Condition(lambda: bool(ui.editor.buffer.complete_state
                                      and ui.editor.buffer.complete_state.current_completion))

    @kb.add("tab")
    def _tab(event: Any) -> None:
        buffer = event.current_buffer
        if buffer.complete_state:
            buffer.complete_next()
        else:
            buffer.start_completion(select_first=True)

    @kb.add("enter", filter=selected)
    def _take(event: Any) -> None:
        event.current_buffer.complete_state = None


def _dialog_bindings(kb: KeyBindings, ui: Any) -> None:
    """While a plugin dialog is open these win over the bindings above (added later, same table)."""
    from prompt_toolkit.filters import Condition

    open_ = Condition(lambda: ui.dialogs.current is not None)
    choosing = Condition(lambda: ui.dialogs.current is not None and ui.dialogs.current.chooses)

    @kb.add("enter", filter=open_)
    def _answer(event: Any) -> None:
        ui.dialogs.submit()

    @kb.add("escape", filter=open_)
    def _cancel(event: Any) -> None:
        ui.dialogs.cancel()

    @kb.add("up", filter=choosing)
    def _up(event: Any) -> None:
        ui.dialogs.move(-1)

    @kb.add("down", filter=choosing)
    def _down(event: Any) -> None:
        ui.dialogs.move(1)


def _editor_empty(ui: Any) -> Any:
    from prompt_toolkit.filters import Condition

    return Condition(lambda: not ui.editor.buffer.text)
