"""What the editor shows of a session beside its conversation, kept in step with the session whatever changed
it: the title (`session_info_update`) and the config options (`config_option_update`: model and thinking level).

Both are driven from here alone. The title follows `session_info_changed` (`coding/announcer.py`): `/name`, a
plugin's `set_session_name`, a tree move to a branch named otherwise. The options follow
`thinking_level_changed` (a level changed by a plugin, clamped by a model change, restored by a tree move) and
are compared again when each prompt ends (`check`), since a model switch that keeps the level has no event of
its own (`/model`, a tree move to a branch of another model). Each is sent only when it differs from what the
editor was last told, answers included (the `configOptions` of `session/new`, `session/load` and
`session/set_config_option`), so a change is told once and no change is told never.
"""

from __future__ import annotations

from typing import Any, Callable

from .config import config_options

Notify = Callable[[dict[str, Any]], None]


class Shown:
    """Session listener for one AgentSession (`session`); `send` takes a `SessionUpdate` object."""

    def __init__(self, session: Any, send: Notify):
        self.session, self._send = session, send
        self._title: str | None = None  # the title the editor was last given (None: none yet, or cleared)
        self._options: list[dict[str, Any]] | None = None  # the options it was last given
        self._answering = False  # a request whose answer carries the options is being handled

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "session_info_changed":
            self.title(self._title_for(event.get("name")))
        elif kind == "thinking_level_changed":
            self.check()

    def title(self, title: str | None, *, again: bool = False) -> None:
        """Give the editor `title` (None clears it) when it differs from the last one, or `again` (a
        `session/load` of this session: that view has not been told)."""
        if title != self._title or again:
            self._title = title
            self._send({"sessionUpdate": "session_info_update", "title": title})

    def check(self) -> None:
        """A `config_option_update` with every option when any of them differs from what the editor was told."""
        if self._answering:
            return
        options = config_options(self.session)
        if options != self._options:
            self._options = options
            self._send({"sessionUpdate": "config_option_update", "configOptions": options})

    def answered(self, options: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`options` go to the editor in an answer (`configOptions`): they are what it was told. Returns them."""
        self._options = options
        return options

    def answer(self, change: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """Run `change()`, a request whose answer carries every option afterwards (`session/set_config_option`),
        with no `config_option_update` for what it changes; returns its options. Its errors propagate."""
        self._answering = True
        try:
            options = change()
        finally:
            self._answering = False
        return self.answered(options)

    def _title_for(self, name: Any) -> str | None:
        """The title for the session's name `name`, else for the branch's first message of the user."""
        from ...coding.session.listing import message_text

        first = next((m for m in self.session.messages if m.get("role") == "user"), None)
        return title_of(name, message_text(first) if first is not None else "")


def title_of(name: Any, first_text: str = "") -> str | None:
    """The editor's title of a session (`session_info_update`, `session/list`): `name` (its name) when it is a
    string with printable text, else the first line of `first_text` (its first prompt's text); one printable
    line (control characters as spaces) of at most `MAX_SESSION_NAME` (200) characters, what docs/acp.md
    promises; None when neither gives one."""
    from ...coding.state import printable_title  # a name stored by another writer may hold anything

    if isinstance(name, str) and (title := printable_title(name)):
        return title
    return printable_title((first_text.strip().splitlines() or [""])[0]) or None
