"""Key bindings of the editor and the application (on top of prompt_toolkit's Emacs bindings).

The application's actions (`keymap.ACTIONS`: send, follow-up, newline, interrupt, clear, exit, toggles,
cycling) get the keys of the keymap (`<agent dir>/keybindings.json` over the defaults). Fixed on top: a
bracketed paste goes through `PromptEditor.paste` (large ones collapse), Tab and Enter drive the completion
menu, and while a plugin dialog is open Enter, Escape, Up and Down belong to it."""

from __future__ import annotations

from typing import Any, Callable

from prompt_toolkit.filters import Condition
from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys

from .keymap import ACTIONS, key_sequence, with_keys

EDITOR_KEYS = [
    ("up, down", "move in the text; at its first or last line: prompt history"),
    ("/ at the start", "the menu of commands, filtered as you type"),
    ("@name, tab", "@: fuzzy file search (attached when sent); tab: take a completion or complete a path"),
    ("ctrl+a/e, alt+b/f, ...", "Emacs editing keys (ctrl+w, ctrl+k, ctrl+u, ctrl+y, ...)"),
    ("!cmd, !!cmd", "run a shell command (!! keeps it out of the context)"),
]

OWN_DIALOG_KEYS = ("pageup", "pagedown", "tab", "s-tab", "c-left", "c-right", "escape left", "escape right")
"""Keys an open dialog may claim (its `own_keys`); `tree_view.OWN_KEYS` claims them all."""

EDITOR_ONLY = frozenset({"app.send", "app.followUp", "editor.newline"})
"""Actions that act on the editor alone (a prompt sent waits for the session itself: `InteractiveMode.loaded`);
every other one waits for the session when it is not built yet."""

SHIFT_ENTER_SEQUENCES = ("\x1b[13;2u", "\x1b[27;2;13~")
"""What terminals with the kitty keyboard protocol or xterm's modifyOtherKeys send for Shift+Enter."""


def hotkeys(keymap: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(keys, what they do) for `/hotkeys`: the active keymap, then the editor's fixed keys."""
    rows = [(", ".join(keymap.get(action, [])) or "(unbound)", with_keys(what))
            for action, (_, what) in ACTIONS.items()]
    return rows + EDITOR_KEYS


def teach_shift_enter() -> None:
    """Make prompt_toolkit read those sequences as Ctrl+J (a newline) instead of stray text."""
    for sequence in SHIFT_ENTER_SEQUENCES:
        ANSI_SEQUENCES.setdefault(sequence, Keys.ControlJ)


def key_bindings(ui: Any, keymap: dict[str, list[str]]) -> KeyBindings:
    """The bindings, calling into the interactive mode `ui` (`send`, `interrupt`, `ctrl_c`, `exit`, ...)."""
    kb = KeyBindings()
    empty = Condition(lambda: not ui.editor.buffer.text)
    handlers: dict[str, tuple[Callable[[Any], None], Any]] = {
        "app.send": (lambda event: ui.send("steer"), None),
        "app.followUp": (lambda event: ui.send("followUp"), None),
        "editor.newline": (lambda event: _newline(ui, event), None),
        "app.interrupt": (lambda event: ui.interrupt(), None),
        "app.queue.restore": (lambda event: ui.restore_queue(), None),
        "app.clear": (lambda event: ui.ctrl_c(), None),
        "app.exit": (lambda event: ui.exit(0), empty),
        "app.suspend": (lambda event: ui.suspend(), None),
        "app.thinking.toggle": (lambda event: ui.toggle_thinking(), None),
        "app.tools.expand": (lambda event: ui.dialogs.show_all() or ui.toggle_expanded(), None),
        "app.editor.external": (lambda event: ui.edit_externally(), None),
        "app.thinking.cycle": (lambda event: ui.cycle("thinking"), None),
        "app.model.cycle": (lambda event: ui.cycle("model"), None),
    }
    for action, (handler, condition) in handlers.items():
        if action not in EDITOR_ONLY:
            handler = _once_attached(ui, handler)
        for key in keymap.get(action, []):
            sequence = key_sequence(key)
            if sequence is not None:
                kb.add(*sequence, filter=condition if condition is not None else True)(handler)

    @kb.add(Keys.BracketedPaste)
    def _paste(event: Any) -> None:
        dialog = ui.dialogs.current
        ui.editor.paste(event.data, one_line=bool(dialog and dialog.secret))

    _completion_bindings(kb, ui)
    _dialog_bindings(kb, ui)
    return kb


def _once_attached(ui: Any, handler: Callable[[Any], None]) -> Callable[[Any], None]:
    """`handler`, acting at once when the session is built, else when it is (`InteractiveMode.attach`): the
    editor is painted first, and a key typed that early (Ctrl+D right after the command's Enter) still acts."""
    return lambda event: ui.when_attached(lambda: handler(event))


def _newline(ui: Any, event: Any) -> None:
    """A new line, except in a one-line `input` dialog (an API key, a name): there it would be part of the
    answer, which no plugin and no HTTP header expects."""
    dialog = ui.dialogs.current
    if dialog is None or dialog.method != "input":
        event.current_buffer.newline(copy_margin=False)


def _completion_bindings(kb: KeyBindings, ui: Any) -> None:
    """Tab takes the highlighted (else the first) completion of an open menu and closes it (a directory opens
    its own menu), or starts completing; Enter on a selected one takes it (closes the menu)."""
    selected = Condition(lambda: bool(ui.editor.buffer.complete_state
                                      and ui.editor.buffer.complete_state.current_completion))

    @kb.add("tab")
    def _tab(event: Any) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if state and state.completions:
            buffer.apply_completion(state.current_completion or state.completions[0])
            if buffer.document.text_before_cursor.endswith("/"):  # a directory: go on into it
                buffer.start_completion(select_first=False)
        elif not state:
            buffer.start_completion(select_first=True)

    @kb.add("enter", filter=selected)
    def _take(event: Any) -> None:
        event.current_buffer.complete_state = None

    menu_open = Condition(lambda: bool(ui.editor.buffer.complete_state and ui.editor.buffer.complete_state.completions))

    @kb.add("escape", filter=menu_open)
    def _close_menu(event: Any) -> None:
        """Escape closes an open `@` or `/` menu (a second one aborts): closing it must not stop the run."""
        event.current_buffer.cancel_completion()

    @kb.add("enter", filter=Condition(lambda: _command_choice(ui.editor.buffer) is not None))
    def _run_command(event: Any) -> None:
        """Enter in the `/` menu on its highlighted (or only) command: take it and run it, one key."""
        buffer = event.current_buffer
        buffer.apply_completion(_command_choice(buffer))
        ui.send("steer")


def _command_choice(buffer: Any) -> Any:
    """The completion Enter runs in the `/` menu: the highlighted one, else the only one; None otherwise (Enter
    then sends the text as typed: an unknown `/word` goes to the model as text)."""
    state = buffer.complete_state
    if state is None or not buffer.text.startswith("/") or " " in buffer.text:
        return None
    choice = state.current_completion or (state.completions[0] if len(state.completions) == 1 else None)
    return choice


def _dialog_bindings(kb: KeyBindings, ui: Any) -> None:
    """While a plugin dialog is open these win over the bindings above (added later, same table)."""
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

    for key in OWN_DIALOG_KEYS:  # keys a dialog takes for itself (`own_keys`, `press`): `/tree`'s
        owned = Condition(lambda key=key: key in getattr(ui.dialogs.current, "own_keys", ()))
        kb.add(*key.split(), filter=owned)(lambda event, key=key: ui.dialogs.current.press(key))
