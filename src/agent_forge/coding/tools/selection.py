"""Which tools a session starts with: the `defaultTools` setting, then `--tools`, `--no-builtin-tools` and
`--no-tools` (the reference agent's `settings.md` and `cli.md`, "Tools").

Lists: plain names replace the selection; a list of only `+name` / `-name` entries changes the inherited
one. `defaultTools` of the project applies on top of the agent dir's. `--tools` with plain names is an
allowlist over built-in, plugin and MCP tools alike (`*` matches any characters); with `+`/`-` entries it changes
the resolved `defaultTools`. `--no-builtin-tools` drops the built-in tools and keeps plugin tools;
`--no-tools` drops every tool; `--exclude-tools` patterns disable tools last, plugin tools included.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Sequence

from ...ai.types import JsonValue
from . import CODING_TOOL_NAMES, TOOL_FACTORIES
from ..errors import ToolSelectionError
from ..paths import path_text


@dataclass(frozen=True)
class ToolSelection:
    """The resolved selection. `builtin` are the built-in tool names, in the order offered to the model.
    `allow` (None = all) and `deny` filter tools that come from elsewhere (plugins); see `admits`."""

    builtin: tuple[str, ...] = CODING_TOOL_NAMES
    allow: tuple[str, ...] | None = None
    deny: frozenset[str] = frozenset()
    no_tools: bool = False
    exclude: tuple[str, ...] = ()
    """`--exclude-tools` patterns: applied after everything else, to built-in and plugin tools alike."""

    def admits(self, name: str) -> bool:
        """Whether a non-built-in tool (a plugin's) named `name` is active."""
        if self.no_tools or name in self.deny or _matches(name, self.exclude):
            return False
        return self.allow is None or any(fnmatch.fnmatchcase(name, pattern) for pattern in self.allow)


def resolve_tool_selection(*, global_setting: JsonValue = None, project_setting: JsonValue = None,
                           cli_entries: Sequence[str] | None = None, no_builtin_tools: bool = False,
                           no_tools: bool = False, exclude: Sequence[str] = (),
                           warnings: list[str] | None = None) -> ToolSelection:
    """Apply the layers in order. Unknown built-in names in `defaultTools` and an invalid setting value go to
    `warnings` (and are ignored); so do `--tools` names that are not built in (kept: a plugin may provide
    them). Names are case-sensitive (`READ` is not `read`; the warning suggests it). A bad `--tools` list
    raises `ToolSelectionError`."""
    warnings = warnings if warnings is not None else []
    selected = list(CODING_TOOL_NAMES)
    for label, value in (("agent-dir", global_setting), ("project", project_setting)):
        if value is not None:
            selected = _apply_setting(selected, value, f"defaultTools ({label} settings)", warnings)
    allow: tuple[str, ...] | None = None
    deny: frozenset[str] = frozenset()
    if cli_entries is not None:
        entries = check_cli_entries(cli_entries)
        _warn_unknown_cli(entries, warnings, "--tools")
        if _is_delta(entries):
            selected = _apply_delta(selected, entries)
            deny = frozenset(e[1:] for e in entries if e.startswith("-"))
        else:
            allow = tuple(entries)
            selected = [name for name in TOOL_FACTORIES if any(fnmatch.fnmatchcase(name, p) for p in entries)]
            selected.sort(key=lambda name: _first_match(name, entries))
    if no_builtin_tools or no_tools:
        selected = []
    _warn_unknown_cli(exclude, warnings, "--exclude-tools")
    selected = [name for name in selected if not _matches(name, exclude)]
    return ToolSelection(builtin=tuple(selected), allow=allow, deny=deny, no_tools=no_tools, exclude=tuple(exclude))


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _apply_setting(selected: list[str], value: JsonValue, label: str, warnings: list[str]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(e, str) and e.strip() for e in value):
        warnings.append(f"{label} must be a list of tool names; ignored")
        return selected
    entries = [e.strip() for e in value]
    unknown = [e for e in entries if _name(e) not in TOOL_FACTORIES]
    if unknown:
        warnings.append(f"{label}: unknown tool(s) {_listed(unknown)} ignored; known: {', '.join(TOOL_FACTORIES)}")
    entries = [e for e in entries if e not in unknown]
    if _is_delta(entries):
        return _apply_delta(selected, entries)
    plain = [e for e in entries if e[0] not in "+-"]  # in one list, plain names form the base, +/- then apply
    return _apply_delta(plain, [e for e in entries if e[0] in "+-"])


def _warn_unknown_cli(entries: Sequence[str], warnings: list[str], flag: str) -> None:
    """Names in `--tools` or `--exclude-tools` (`flag`) that no built-in tool has, and `*` patterns matching none
    (`zz*`, `a[`): a typo, a wrong case, or a plugin's or MCP server's tool (those load later, so they cannot be
    checked here). Silence would leave a mistyped exclusion looking as if it applied."""
    unknown = [e for e in entries if _name(e) not in TOOL_FACTORIES and not _is_pattern(_name(e))]
    unmatched = [e for e in entries if _is_pattern(_name(e)) and not _matches_builtin(_name(e))]
    builtin = f"built-in tools: {', '.join(TOOL_FACTORIES)}"
    if unknown:
        warnings.append(f"{flag}: unknown tool(s) {_listed(unknown)} (not built in; a plugin or MCP server may "
                        f"provide it); {builtin}")
    if unmatched:
        warnings.append(f"{flag}: pattern(s) {', '.join(path_text(e) for e in unmatched)} match no built-in tool "
                        f"(a plugin or MCP server may provide one); {builtin}")


def _matches_builtin(pattern: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for name in TOOL_FACTORIES)


def _listed(entries: Sequence[str]) -> str:
    """`nope, READ (tool names are case-sensitive: did you mean "read"?)`."""
    return ", ".join(f'{e} (tool names are case-sensitive: did you mean "{_name(e).lower()}"?)'
                     if _name(e).lower() in TOOL_FACTORIES else path_text(e) for e in entries)


def _name(entry: str) -> str:
    return entry[1:] if entry[:1] in ("+", "-") else entry


def _is_pattern(name: str) -> bool:
    return any(c in name for c in "*?[")


def check_cli_entries(entries: Sequence[str]) -> list[str]:
    """The `--tools` entries stripped. Raises `ToolSelectionError` for an empty entry, or plain names mixed
    with +name/-name changes."""
    cleaned = [e.strip() for e in entries]
    if any(not e or e in ("+", "-") for e in cleaned):
        raise ToolSelectionError("--tools: empty tool name in the list")
    signed = [e for e in cleaned if e[0] in "+-"]
    if signed and len(signed) != len(cleaned):
        raise ToolSelectionError("--tools: use either plain names (an allowlist) or only +name/-name entries "
                                 "(changes to the default tools), not both")
    return cleaned


def _is_delta(entries: Sequence[str]) -> bool:
    return bool(entries) and all(e[0] in "+-" for e in entries)


def _apply_delta(selected: list[str], entries: Sequence[str]) -> list[str]:
    result = list(selected)
    for entry in entries:
        name = entry[1:]
        if entry[0] == "+" and name not in result and name in TOOL_FACTORIES:
            result.append(name)
        elif entry[0] == "-" and name in result:
            result.remove(name)
    return result


def _first_match(name: str, patterns: Sequence[str]) -> int:
    return next(i for i, p in enumerate(patterns) if fnmatch.fnmatchcase(name, p))
