"""Unknown keys of configuration files, in one wording for all of them (`settings.json`, `models.json`,
`auth.json`, theme files, `keybindings.json`): `unknown key 'aprovals' (did you mean 'approvals'?)`.

An unknown key is a warning, never an error: a plugin or a newer version may own it, so the file keeps loading
and the key is ignored. Each file's known keys come from the one place that defines its shape (a table or a
`TypedDict`), never from a second list here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

SCHEMA_KEY = "$schema"
"""An editor's JSON-schema reference: allowed at the top of every file, never unknown."""


def unknown_keys(data: Mapping[str, object], known: Collection[str]) -> list[str]:
    """The keys of `data` that are not in `known` (nor `SCHEMA_KEY`), in the file's order."""
    return [key for key in data if key not in known and key != SCHEMA_KEY]


def unknown_dotted_keys(data: Mapping[str, object], patterns: Collection[str]) -> list[tuple[tuple[str, ...], str]]:
    """`(key path, unknown_key message)` of each key of `data` that no dotted pattern names (`"retry.maxRetries"`,
    `"compaction.modelOverrides.*.reserveTokens"`: `*` is any key), checked only in objects whose keys the
    patterns list (the top level, `retry`, ...); an object with no pattern below it (`"rpc"`) or a `*` map is
    open."""
    found: list[tuple[tuple[str, ...], str]] = []
    _walk(data, [tuple(pattern.split(".")) for pattern in patterns], (), found)
    return found


def _walk(data: Mapping[str, object], patterns: list[tuple[str, ...]], prefix: tuple[str, ...],
          found: list[tuple[tuple[str, ...], str]]) -> None:
    """`unknown_dotted_keys` of the object `data` at `prefix`; `patterns`: those that reach below it."""
    depth = len(prefix)
    known = list(dict.fromkeys(parts[depth] for parts in patterns))
    for key, value in data.items():
        if key in known or "*" in known or (not prefix and key == SCHEMA_KEY):
            below = [parts for parts in patterns if len(parts) > depth + 1 and parts[depth] in ("*", key)]
            if below and isinstance(value, dict):
                _walk(value, below, (*prefix, key), found)
        else:
            found.append(((*prefix, key), unknown_key(key, known, prefix="".join(f"{p}." for p in prefix))))


def unknown_key(key: str, known: Iterable[str], *, what: str = "key", prefix: str = "",
                list_known: bool = False) -> str:
    """`unknown <what> '<prefix><key>'`, then `(did you mean '<prefix><match>'?)` for a close known key
    (`difflib.get_close_matches`, case-insensitive), else `(known: a, b)` when `list_known`. Names are quoted
    as `repr` shows them (escapes visible), the key cut at 40 characters."""
    import difflib  # only when a key is unknown: never on a clean start

    names = [name for name in known if name != "*"]
    by_lower = {name.lower(): name for name in names}
    close = difflib.get_close_matches(key.lower(), list(by_lower), n=1, cutoff=0.6)
    if close:
        hint = f" (did you mean {repr(prefix + by_lower[close[0]])}?)"
    else:
        hint = f" (known: {', '.join(names)})" if list_known and names else ""
    return f"unknown {what} {repr(prefix + _cut(key))}{hint}"


def shown(text: str) -> str:
    """`text` quoted for a warning, escapes visible, cut at 40 characters (a key name 10 MB long is a mistake)."""
    return repr(_cut(text))


def _cut(text: str) -> str:
    return text if len(text) <= 40 else text[:40] + "…"
