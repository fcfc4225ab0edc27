"""`thinking_level_changed` and `session_info_changed`: the session's active thinking level and name, announced
whenever they differ from what listeners were last told, whatever changed them.

Paths that change them (docs/rpc.md, "Events"): `set_thinking_level`, `cycle_thinking_level`, a model change that
clamps the level (`set_model`, `cycle_model`), `set_session_name` (the CLI, plugins, the terminal UI and ACP
included), and a move to another branch or file whose level or name differs (`new_session`, `switch_session`,
`fork`, `clone`, a tree move). Comparing with the last announced values, rather than announcing each write,
means a command that restates the current value (the same level twice, a switch to a session with the same
name) announces nothing, and a change made inside another one (a plugin naming the session while it is being
switched) is announced once.
"""

from __future__ import annotations

from typing import Callable

from .events import Emit, SessionInfoChanged, ThinkingLevelChanged


class StateAnnouncer:
    """Announces changes of `level()` (the agent's thinking level) and `name()` (the active branch's session name,
    None when unset or cleared) through `emit`. Call `announce()` after anything that may change them."""

    def __init__(self, level: Callable[[], str], name: Callable[[], str | None], emit: Emit) -> None:
        self._level, self._name, self._emit = level, name, emit
        self._known = (level(), name())

    def reset(self) -> None:
        """Take the current values as known without an event (the end of start-up: clients read them with
        `get_state`)."""
        self._known = (self._level(), self._name())

    def announce(self) -> None:
        """One event for each value that differs from the last announced one: the name first (`name` left out
        when it was cleared), then the level, as a session change does (its new store, then its branch's
        level). Events go out in the caller's turn, so before its response."""
        level, name = self._level(), self._name()
        known_level, known_name = self._known
        self._known = (level, name)  # before emitting: a listener that changes them again is announced after
        if name != known_name:
            self._emit(SessionInfoChanged(type="session_info_changed", name=name) if name is not None
                       else SessionInfoChanged(type="session_info_changed"))
        if level != known_level:
            self._emit(ThinkingLevelChanged(type="thinking_level_changed", level=level))
