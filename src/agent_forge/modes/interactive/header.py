"""The start-up header: name and version, the main keys, and the loaded resources collapsed to one line of
counts (`loaded: 1 context file · 2 skills · 1 plugin (ctrl+o lists them)`); the expand key prints the
list itself (`resource_list`), one line per kind."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .keymap import key_hint
from .render import clean

if TYPE_CHECKING:  # rich loads with the first block rendered, after the first paint
    from rich.console import Group

    from ...coding.agent_session import AgentSession

Resources = list[tuple[str, list[str]]]
"""(kind, names) pairs: kinds `context`, `skills`, `templates`, `plugins`."""

_NOUNS = {"context": ("context file", "context files"), "skills": ("skill", "skills"),
          "templates": ("template", "templates"), "plugins": ("plugin", "plugins")}


_HINTED = (("app.interrupt", "interrupt"), ("app.clear", "clear"), ("app.exit", "exit"))
"""The actions the header names, with the key the keymap gives each (an unbound one is left out)."""


def header(version: str, resources: Resources, expand_key: str | None) -> Group:
    """The header lines; the counts line only when something is loaded, naming `expand_key` when bound."""
    from rich.console import Group
    from rich.text import Text

    hints = [*(key_hint(action, f"{{}} {what}") for action, what in _HINTED if key_hint(action)),
             "/ commands", "! bash", "/hotkeys keys"]
    lines = [Text.assemble(("agent-forge", "bold"), f" v{version}"), Hints(hints)]
    counts = resource_counts(resources)
    if counts:
        hint = f" ({expand_key} lists them)" if expand_key else ""
        lines.append(Text.assemble(("loaded: ", "yellow"), (counts + hint, "grey62")))
    return Group(*lines, Text(""))


class Hints:
    """`a · b · c` in grey, wrapped between items (never inside one: `/hotkeys` and its `keys` stay together) at
    the width it is rendered at; an item wider than the line is wrapped by rich as usual."""

    def __init__(self, items: list[str]) -> None:
        self.items = items

    def __rich_console__(self, console: object, options: object):
        from rich.cells import cell_len
        from rich.text import Text

        rows: list[str] = []
        for item in self.items:
            joined = f"{rows[-1]} · {item}" if rows else item
            if rows and cell_len(joined) <= options.max_width:  # type: ignore[attr-defined]
                rows[-1] = joined
            else:
                rows.append(item)
        yield from (Text(row, style="grey62") for row in rows)


def resource_counts(resources: Resources) -> str:
    """`1 context file · 2 skills` for the kinds with something loaded ("" when none has)."""
    parts = []
    for kind, names in resources:
        if names:
            one, many = _NOUNS.get(kind, (kind, kind))
            parts.append(f"{len(names)} {one if len(names) == 1 else many}")
    return " · ".join(parts)


def resource_list(resources: Resources) -> Group | None:
    """`[kind] name, name` for each kind with something loaded; None when nothing is."""
    from rich.console import Group
    from rich.text import Text

    lines = [Text.assemble((f"[{kind}] ", "yellow"), (clean(", ".join(names)), "grey62"))
             for kind, names in resources if names]
    return Group(*lines) if lines else None


def session_resources(session: AgentSession) -> Resources:
    """What `session` loaded, for the header and its list: context files, skills, templates, plugins."""
    resources = session.resources
    plugins = [getattr(p, "id", "?") for p in getattr(session.hooks, "plugins", [])]
    return [("context", [clean(getattr(f, "path", f)) for f in resources.context_files]),
            ("skills", [s.name for s in resources.skills]),
            ("templates", [f"/{t.name}" for t in resources.templates]), ("plugins", plugins)]
