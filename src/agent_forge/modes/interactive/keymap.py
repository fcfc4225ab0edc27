"""Named actions and their keys: the defaults, overridden by `<agent dir>/keybindings.json` (`{"app.exit":
"ctrl+q", "app.model.cycle": ["ctrl+p", "f2"], "app.thinking.toggle": []}`: one key or a list, `[]` unbinds).

Key syntax: `ctrl+<letter>`, `alt+<key>`, `shift+tab`, `shift+enter`, `enter`, `escape`, `tab`, `space`,
`backspace`, `delete`, `home`, `end`, `pageUp`, `pageDown`, `up`, `down`, `left`, `right`, `f1`-`f12`, and
single characters after `alt+`. Unknown actions and keys are reported as warnings and ignored: an entry whose keys are all
unknown leaves the action its default keys, one with some valid keys keeps those. So are a key that types text
(`a`, `shift+a`, `space`: bound, it could not be typed) and a conflict: one key does one action (the file's
binding over another action's default, the first of two bindings in the file; the editing keys, `FIXED_KEYS`,
stay the editor's)."""

from __future__ import annotations

import re
from pathlib import Path

from ...coding.config_keys import shown as _shown
from ...coding.config_keys import unknown_key
from ...coding.paths import path_text
from ...coding.errors import ConfigFileError
from ...coding.safe_read import MAX_REPORTED_PROBLEMS, read_json_document

ACTIONS: dict[str, tuple[list[str], str]] = {
    "app.send": (["enter"], "send; while the agent works: steer (delivered after the current tool calls)"),
    "app.followUp": (["alt+enter"], "queue a follow-up (delivered when the agent would stop)"),
    "editor.newline": (["shift+enter", "ctrl+j"], "new line"),
    "app.interrupt": (["escape"], "abort the run, a compaction or a branch summary; queued messages come back "
                                  "into the editor"),
    "app.queue.restore": (["alt+up"], "take the queued messages back into the editor, without aborting"),
    "app.clear": (["ctrl+c"], "clear the editor; on an empty editor abort{app.interrupt: as {} does}, and press "
                              "twice to exit"),
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
    """`text` with each `{<action>}` replaced by that action's first key (`(unbound)` without one), and each
    `{<action>:<words with {}>}` by those words naming the key (nothing without one: `{app.interrupt: as {}
    does}` → ` as escape does`). Action descriptions (`ACTIONS`) and command descriptions are written so:
    a hint never names a key the keymap gave another action."""
    return _PLACEHOLDER.sub(_filled, text)


_PLACEHOLDER = re.compile(r"\{([a-zA-Z.]+)(?::((?:[^{}]|\{\})*))?\}")


def _filled(match: re.Match[str]) -> str:
    action, words = match.group(1), match.group(2)
    return key_hint(action) or "(unbound)" if words is None else key_hint(action, words)


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
    raw = _read(path, warnings)
    report = _Report(path, warnings)
    chosen = []  # the actions the file binds, in its order: the first to bind a key keeps it
    for action, keys in raw.items():
        if action.startswith("$"):
            continue
        if action not in ACTIONS:
            report.add(unknown_key(action, ACTIONS, what="action"))
            continue
        good = _entry_keys(action, keys, keymap[action], report)
        if good is not None:
            keymap[action] = good
            chosen.append(action)
    _settle_conflicts(keymap, chosen, report)
    report.close()
    return keymap


def _read(path: Path, warnings: list[str]) -> dict[str, object]:
    """The file's object; {} (the default keys) when there is none or it cannot be used, said in `warnings`."""
    try:
        document = read_json_document(path, if_blank={})
    except FileNotFoundError:
        return {}
    except ConfigFileError as exc:
        warnings.append(f"{path_text(path)}: {exc}; the default keys are used")
        return {}
    warnings.extend(document.duplicate_warnings(path))
    if not isinstance(document.data, dict):
        warnings.append(f'{path_text(path)}: expected a JSON object such as {{"app.exit": "ctrl+q"}}; the '
                        "default keys are used")
        return {}
    return document.data


class _Report:
    """The file's problems as `<path>: <problem>` warnings: the first `MAX_REPORTED_PROBLEMS` one by one, the
    rest counted in one line (a file of 50,000 bad entries must not flood the screen)."""

    def __init__(self, path: Path, warnings: list[str]) -> None:
        self.prefix, self.warnings, self.count = path_text(path), warnings, 0

    def add(self, problem: str) -> None:
        self.count += 1
        if self.count <= MAX_REPORTED_PROBLEMS:
            self.warnings.append(f"{self.prefix}: {problem}")

    def close(self) -> None:
        if self.count > MAX_REPORTED_PROBLEMS:
            self.warnings.append(f"{self.prefix}: {self.count - MAX_REPORTED_PROBLEMS:,} more problems not listed "
                                 "(each is ignored, as those above are)")


def _entry_keys(action: str, keys: object, default: list[str], report: _Report) -> list[str] | None:
    """The usable keys of one entry (`[]` unbinds); None when it has none to use (its action keeps `default`).
    An unknown key and one that types text (`a`, `shift+a`, `space`: bound, the character could no longer
    be typed) are reported and left out."""
    keys = [keys] if isinstance(keys, str) else keys
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        report.add(f"{action} needs a key or a list of keys; using {_listed(default)} (the default)")
        return None
    typing = [k for k in keys if types_text(k)]
    unknown = [k for k in keys if not types_text(k) and key_sequence(k) is None]
    good = list(dict.fromkeys(k for k in keys if not types_text(k) and key_sequence(k) is not None))
    using = f"; using {_listed(good or default)}{'' if good else ' (the default)'}"
    if unknown:
        report.add(f"{action}: unknown key{'s' if len(unknown) > 1 else ''} {_keys(unknown)}{using}")
    if typing:
        report.add(f"{action}: {_keys(typing)} type{'s' if len(typing) == 1 else ''} text (bound to an action, "
                   f"{'it' if len(typing) == 1 else 'they'} could no longer be typed); not bound{using}")
    return good if good or not keys else None


def _settle_conflicts(keymap: dict[str, list[str]], chosen: list[str], report: _Report) -> None:
    """One key, one action: a key the file binds twice stays with the first action, Tab stays the editor's,
    and a key the file binds is taken from an action that had it by default. Each is reported, naming both."""
    owners: dict[tuple[str, ...], tuple[str, str]] = {}  # a key → (the action, the key as written)
    defaulted = [action for action in ACTIONS if action not in chosen]
    for action in chosen:
        refused = [(key, why) for key in keymap[action] if (why := _claim(action, key, owners)) is not None]
        claimed = [key for key in keymap[action] if key not in dict(refused)]
        if refused and not claimed:  # as for unknown keys: the action is never left without any key
            keymap[action] = list(ACTIONS[action][0])
            defaulted.append(action)
        else:
            keymap[action] = claimed
        using = "" if claimed else f"; using {_listed(keymap[action])} (the default)"
        for key, why in refused:
            report.add(f"{action}: {_shown(key)} {why}; not bound to {action}{using}")
    for action in defaulted:
        _give_up_taken(action, keymap, owners, report)


def _claim(action: str, key: str, owners: dict[tuple[str, ...], tuple[str, str]]) -> str | None:
    """Record `key` as `action`'s; else why it cannot be (a fixed key, another action's)."""
    same = _same_key(key)
    if same in _FIXED:
        return _fixed_why(key, _FIXED[same])
    owner, _ = owners.setdefault(same, (action, key))
    return None if owner == action else f"is already {owner}'s key (written earlier in the file)"


def _give_up_taken(action: str, keymap: dict[str, list[str]], owners: dict[tuple[str, ...], tuple[str, str]],
                   report: _Report) -> None:
    """Drop the default keys of `action` that the file gave another action, saying so once per key taken
    (`shift+enter` takes both of a new line's keys: to the terminal they are one)."""
    taken = {key: owners[same] for key in keymap[action]
             if (same := _same_key(key)) in owners and owners[same][0] != action}
    keymap[action] = [key for key in keymap[action] if key not in taken]
    left = "" if keymap[action] else f", and {action} has no key left"
    for owner, key in dict.fromkeys(taken.values()):
        report.add(f"{owner}: {_shown(key)} was also {action}'s key (its default); it now does {owner} only{left}")


FIXED_KEYS: dict[str, str] = {
    "tab": "the editor's completion key",
    "backspace": "the editor's key to delete the character before the cursor",
    "delete": "the editor's key to delete the character under the cursor",
    "up": "the editor's key to move up a line or back in the prompt history",
    "down": "the editor's key to move down a line or on in the prompt history",
    "left": "the editor's key to move the cursor left",
    "right": "the editor's key to move the cursor right",
    "home": "the editor's key to move to the start of the line",
    "end": "the editor's key to move to the end of the line",
    "ctrl+a": "the editor's key to move to the start of the line",
    "ctrl+e": "the editor's key to move to the end of the line",
    "alt+b": "the editor's key to move back a word",
    "alt+f": "the editor's key to move on a word",
    "alt+backspace": "the editor's key to delete the word before the cursor",
    "ctrl+w": "the editor's key to delete the word before the cursor",
    "ctrl+k": "the editor's key to delete to the end of the line",
    "ctrl+u": "the editor's key to delete to the start of the line",
    "ctrl+y": "the editor's key to paste what was deleted last",
}
"""The editing keys (key as written → what the editor does with it; its name is its title case, `Ctrl+A`),
kept whatever the file says: the keymap's bindings come first, so one bound here would take the key from the
editor. A key a terminal sends
as the same bytes (`_SAME`: Ctrl+H is Backspace, Ctrl+I is Tab) is refused with it."""
_SAME = {"enter": "c-m", "tab": "c-i", "backspace": "c-h"}
"""Keys a terminal sends as one and the same byte (Ctrl+M is Enter, Ctrl+I is Tab, Ctrl+H is Backspace)."""


def _same_key(key: str) -> tuple[str, ...]:
    """`key_sequence(key)` with the names of one byte made one (`_SAME`): what two bindings conflict on."""
    return tuple(_SAME.get(part, part) for part in key_sequence(key) or ())


def _fixed_why(key: str, fixed: str) -> str:
    """Why `key` (one of `fixed`'s bytes) cannot be bound: `is Backspace to a terminal, the editor's key ...`."""
    name, what = fixed.title(), FIXED_KEYS[fixed]
    alias = "" if key_sequence(key) == key_sequence(fixed) else " to a terminal"
    return f"is {name}{alias}, {what}, which stays fixed"


def types_text(key: str) -> bool:
    """True for a key that types a character (`a`, `A`, `shift+a`, `é`, `space`): no ctrl or alt."""
    *mods, name = key.strip().lower().split("+")
    base = _NAMED.get(name, name if len(name) == 1 else None)
    return base is not None and len(base) == 1 and base.isprintable() and set(mods) <= {"shift"}


def _keys(keys: list[str]) -> str:
    """The first 5 of `keys`, `_shown`, and how many more."""
    more = f" and {len(keys) - 5:,} more" if len(keys) > 5 else ""
    return ", ".join(_shown(k) for k in keys[:5]) + more


def _listed(keys: list[str]) -> str:
    return ", ".join(keys) or "(unbound)"


def key_sequence(key: str) -> tuple[str, ...] | None:
    """prompt_toolkit's key sequence for `key` (`ctrl+x` → `("c-x",)`, `alt+enter` → `("escape", "enter")`,
    `shift+enter` → `("c-j",)`: terminals that report it send what `keys.teach_shift_enter` maps there)."""
    *mods, name = key.strip().lower().split("+")
    base = _NAMED.get(name, name if len(name) == 1 and name.isprintable() else None)
    if base is None or any(m not in ("ctrl", "alt", "shift") for m in mods):
        return None
    if "shift" in mods:
        shifted = {"tab": "s-tab", "enter": "c-j"}.get(base)
        if shifted is None or "ctrl" in mods:
            return None
        base = shifted
    if "ctrl" in mods:
        if not (len(base) == 1 and "a" <= base <= "z"):  # prompt_toolkit knows c-a .. c-z, not c-é
            return None
        base = f"c-{base}"
    return ("escape", base) if "alt" in mods else (base,)


_FIXED = {_same_key(key): key for key in FIXED_KEYS}
"""`FIXED_KEYS` by what a binding conflicts on (`_same_key`)."""
