"""Named actions and their keys: the defaults, overridden by `<agent dir>/keybindings.json` (`{"app.exit":
"ctrl+q", "app.model.cycle": ["ctrl+p", "f2"], "app.thinking.toggle": []}`: one key or a list, `[]` unbinds).

Key syntax: `ctrl+<letter>`, `alt+<key>`, `shift+tab`, `shift+enter`, `enter`, `escape`, `tab`, `space`,
`backspace`, `delete`, `home`, `end`, `pageUp`, `pageDown`, `up`, `down`, `left`, `right`, `f1`-`f12`, and
single characters. Unknown actions and keys are reported as warnings and ignored: an entry whose keys are all
unknown leaves the action its default keys, one with some valid keys keeps those."""

from __future__ import annotations

import re
from pathlib import Path

from ...coding.paths import path_text
from ...coding.errors import ConfigFileError
from ...coding.safe_read import read_json_document

ACTIONS: dict[str, tuple[list[str], str]] = {
    "app.send": (["enter"], "send; while the agent works: steer (delivered after the current tool calls)"),
    "app.followUp": (["alt+enter"], "queue a follow-up (delivered when the agent would stop)"),
    "editor.newline": (["shift+enter", "ctrl+j"], "new line"),
    "app.interrupt": (["escape"], "abort the run; queued messages come back into the editor"),
    "app.queue.restore": (["alt+up"], "take the queued messages back into the editor, without aborting"),
    "app.clear": (["ctrl+c"], "clear the editor; on an empty editor press twice to exit"),
    "app.exit": (["ctrl+d"], "exit (on an empty editor)"),
    "app.suspend": (["ctrl+z"], "suspend agent-forge to the shell (fg brings it back)"),
    "app.thinking.toggle": (["ctrl+t"], "show or hide thinking"),
    "app.tools.expand": (["ctrl+o"], "expand or collapse tool output (the last block is shown again); expanding "
                         "also lists the loaded resources"),
    "app.editor.external": (["ctrl+g"], "edit the prompt in $VISUAL / $EDITOR"),
    "app.thinking.cycle": (["shift+tab"], "next thinking level"),
    "app.model.cycle": (["ctrl+p"], "next model of the --models scope (all models with a key without one)"),
}
_NAMED = {"enter": "enter", "return": "enter", "escape": "escape", "esc": "escape", "tab": "tab", "space": " ",
          "backspace": "backspace", "delete": "delete", "home": "home", "end": "end", "pageup": "pageup",
          "pagedown": "pagedown", "up": "up", "down": "down", "left": "left", "right": "right",
          **{f"f{n}": f"f{n}" for n in range(1, 13)}}


_ACTIVE: dict[str, list[str]] = {action: list(keys) for action, (keys, _) in ACTIONS.items()}
"""The keymap hints are written from (`key_hint`, `with_keys`): the defaults until `load_keymap` loads one."""


def key_hint(action: str, text: str = "{}") -> str:
    """`text` with `{}` replaced by `action`'s key (`key_hint("app.tools.expand", " ({} to expand)")`), or ""
    when the action has no key: a hint never names a key that does not do it. The key is the first one, but
    `ctrl+j` for a new line when bound (Shift+Enter is not reported by every terminal)."""
    keys = _ACTIVE.get(action) or []
    if action == "editor.newline" and "ctrl+j" in keys:
        return text.format("ctrl+j")
    return text.format(keys[0]) if keys else ""


def with_keys(text: str) -> str:
    """`text` with each `{<action>}` replaced by that action's first key (`(unbound)` without one)."""
    return re.sub(r"\{([a-zA-Z.]+)\}", lambda m: key_hint(m.group(1)) or "(unbound)", text)


def load_keymap(path: Path, warnings: list[str]) -> dict[str, list[str]]:
    """Action → its keys (as written): the defaults with the file's entries in their place, also made the
    keymap that hints name (`key_hint`). The file is read as every configuration file is
    (`safe_read.read_json_document`); its problems, a repeated action included (the last one counts), go to
    `warnings` as `<path>[:<line>]: ...`."""
    keymap = _load(path, warnings)
    _ACTIVE.clear()
    _ACTIVE.update(keymap)
    return keymap


def _load(path: Path, warnings: list[str]) -> dict[str, list[str]]:
    keymap = {action: list(keys) for action, (keys, _) in ACTIONS.items()}
    try:
        document = read_json_document(path, if_blank={})
    except FileNotFoundError:
        return keymap
    except ConfigFileError as exc:
        warnings.append(f"{path_text(path)}: {exc}; the default keys are used")
        return keymap
    raw = document.data
    warnings.extend(document.duplicate_warnings(path))
    if not isinstance(raw, dict):
        warnings.append(f'{path_text(path)}: expected a JSON object such as {{"app.exit": "ctrl+q"}}; the '
                        "default keys are used")
    for action, keys in (raw.items() if isinstance(raw, dict) else []):
        if action.startswith("$"):
            continue
        if action not in ACTIONS:
            warnings.append(f"{path_text(path)}: unknown action {action!r}")
            continue
        keys = [keys] if isinstance(keys, str) else keys
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            warnings.append(f"{path_text(path)}: {action} needs a key or a list of keys; using "
                            f"{', '.join(keymap[action]) or '(unbound)'} (the default)")
            continue
        good = [k for k in keys if key_sequence(k) is not None]
        if len(good) < len(keys):
            kept = good or keymap[action]  # a typo must not leave the action without any key
            warnings.append(f"{path_text(path)}: {action}: unknown key{'s' if len(keys) - len(good) > 1 else ''} "
                            f"{', '.join(repr(k) for k in keys if k not in good)}; using "
                            f"{', '.join(kept) or '(unbound)'}{'' if good else ' (the default)'}")
            keymap[action] = kept
        else:
            keymap[action] = good
    return keymap


def key_sequence(key: str) -> tuple[str, ...] | None:
    """prompt_toolkit's key sequence for `key` (`ctrl+x` → `("c-x",)`, `alt+enter` → `("escape", "enter")`,
    `shift+enter` → `("c-j",)`: terminals that report it send what `keys.teach_shift_enter` maps there)."""
    *mods, name = key.strip().lower().split("+")
    base = _NAMED.get(name, name if len(name) == 1 else None)
    if base is None or any(m not in ("ctrl", "alt", "shift") for m in mods):
        return None
    if "shift" in mods:
        shifted = {"tab": "s-tab", "enter": "c-j"}.get(base)
        if shifted is None or "ctrl" in mods:
            return None
        base = shifted
    if "ctrl" in mods:
        if not (len(base) == 1 and base.isalpha()):
            return None
        base = f"c-{base}"
    return ("escape", base) if "alt" in mods else (base,)
