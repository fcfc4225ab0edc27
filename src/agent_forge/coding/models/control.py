"""Model, thinking-level and context-window changes of one session: switching, cycling, scoping and logout.

`ModelControl` is the collaborator behind `AgentSession.model_control`; the RPC commands `set_model`,
`cycle_model`, `get_available_models`, `logout_provider`, `*_thinking_level*` and `*_context_window*` call it.
Every change is recorded in the session file (`model_change`, `thinking_level_change`, `context_window_change`
entries) and none is written to `settings.json` (SPEC-NOTES: RPC setting commands change the running session).

Context windows (seed 003): the active model dict is a copy of the catalogue model whose `contextWindow` is the
selected budget. A model becoming active gets, in order, the budget last selected for it on the session's
branch, settings `defaultContextWindows["provider/id"]`, or its default (`ai.catalogue.default_context_window`).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Callable

from ...ai.catalogue import clamp_thinking_level, context_windows_for, default_context_window, thinking_levels_for
from ...ai.options import THINKING_LEVELS
from ...lazy_re import LazyPattern
from ..errors import CommandError
from .scope import ScopedModel, resolve_scope, split_patterns
from .selection import require_provider, supported_level
from ..paths import path_text

if TYPE_CHECKING:
    from ...ai.types import Model
    from ..settings import Settings
    from ...agent.agent import Agent
    from .registry import ModelRegistry
    from ..session.context import SessionContext
    from ..session.store import SessionStore

_COMPACT_SIZE = LazyPattern(r"([0-9]+(?:\.[0-9]+)?)\s*([km]?)", re.IGNORECASE)  # ASCII digits: not `٤٠٠k`
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


class ModelControl:
    """Model, thinking level and context window of one `AgentSession` (see the module docstring).

    Methods raise `CommandError` with a message meant for the client; nothing changes when they do.
    """

    def __init__(self, *, agent: Agent, store: Callable[[], SessionStore], registry: ModelRegistry, settings: Settings,
                 warnings: list[str], emit: Callable[[dict[str, Any]], None],
                 warn: Callable[[str], None] | None = None, changed: Callable[[], None] | None = None) -> None:
        """`store()`: the current store (read at each use); `emit` sends `context_window_changed`; `warn(text)`
        reports a thinking level the model does not support (default: appended to `warnings`); `changed()` is
        called after the thinking level may have changed (the session announces it: `announcer.py`)."""
        self._agent, self._store, self._registry, self._settings = agent, store, registry, settings
        self._warnings, self._emit = warnings, emit  # the session's start-up warnings; its event sink
        self._warn = warn or warnings.append
        self._changed = changed or _nothing
        self.scope: list[ScopedModel] = []
        """Models `cycle_model` walks through when non-empty (`--models`, else settings `enabledModels`)."""

    @property
    def _model(self) -> Model | None:
        return self._agent.model

    # -- start-up ------------------------------------------------------------------------------------

    def configure_scope(self, patterns: str | list[str] | None) -> None:
        """Resolve `--models` patterns (a comma-separated string or a list), or else settings `enabledModels`.

        Problems (no match, a pattern offered by several providers) go to the session's warnings.
        """
        source = "--models"
        if patterns is None:
            patterns, source = self._settings.get("enabledModels"), "enabledModels"
        if patterns is None:
            return
        items = split_patterns(patterns)
        if items is None:
            self._warnings.append(f"{source} must be a list of model patterns; ignored")
            return
        self.scope, warnings = resolve_scope(self._registry, items, source)
        self._warnings.extend(warnings)

    def start(self, context_window: str | int | float | None = None) -> None:
        """Give the start-up model its context window, then apply `--context-window` if given.

        Raises `CommandError` for a window the model does not support or when there is no model.
        """
        model = self._model
        if model is not None:
            self.activate(model)
        if context_window is not None:
            self.set_context_window(context_window)

    # -- models --------------------------------------------------------------------------------------

    def available_models(self) -> list[Model]:
        """Models with usable credentials, in catalogue order (`get_available_models`)."""
        return self._registry.available_models()

    def set_model(self, provider: str, model_id: str) -> Model:
        """Switch to `provider/model_id`: a `model_change` entry, the thinking level clamped to the model.

        Any id of a host without built-in models (Groq, OpenRouter, Ollama, ...) is accepted with default
        limits (`ModelRegistry.host_model`). Returns the active model dict. Raises `CommandError` (wrong
        argument types, `Model not found: <provider>/<id>`, or the registry's missing-key message for a model
        without credentials).
        """
        _require_str(provider=provider, model_id=model_id)
        model = self._registry.find(provider, model_id) or self._registry.host_model(provider, model_id)
        if model is None:
            raise CommandError(self._registry.explain_missing(f"Model not found: {path_text(provider)}/{path_text(model_id)}"))
        if not self._registry.has_auth(model):
            raise CommandError(self._registry.auth_error_message(model))
        return self.switch(model, None)

    def cycle_model(self) -> dict[str, Any] | None:
        """Switch to the model after the current one in the scope (or among available models), wrapping.

        Returns `{model, thinkingLevel, isScoped}`, or None when there is at most one model to cycle through.
        The scope's pinned level applies; otherwise the current level, clamped to the new model.
        """
        candidates = self._live_scope() if self.scope else [ScopedModel(m) for m in self.available_models()]
        if len(candidates) <= 1:
            return None
        chosen = candidates[(self._position(candidates) + 1) % len(candidates)]
        model = self.switch(chosen.model, chosen.thinking_level)
        return {"model": model, "thinkingLevel": self._agent.thinking_level, "isScoped": bool(self.scope)}

    def _live_scope(self) -> list[ScopedModel]:
        """The scope as the registry sees it now: fresh model dicts, logged-out providers left out."""
        live = []
        for scoped in self.scope:
            model = self._registry.find(scoped.model["provider"], scoped.model["id"])
            if model is not None and self._registry.has_auth(model):
                live.append(ScopedModel(model, scoped.thinking_level))
        return live

    def _position(self, candidates: list[ScopedModel]) -> int:
        current = self._model
        keys = [(c.model["provider"], c.model["id"]) for c in candidates]
        key = (current["provider"], current["id"]) if current else None
        return keys.index(key) if key in keys else -1

    def switch(self, model: Model, level: str | None = None) -> Model:
        """Make `model` active and record it (`model_change`); the thinking level becomes `level` or else stays,
        clamped to the model either way, and is recorded when it changed. Returns the active model dict."""
        active = self.activate(model)
        self._store().append_model_change(model["provider"], model["id"])
        self.record_level(self._supported(active, level) if level else
                          clamp_thinking_level(active, self._agent.thinking_level))  # carried over: no warning
        return active

    def restore(self, context: SessionContext, *, announce: bool = False) -> bool:
        """Take the configuration of a branch (`context`, e.g. `store.build_context()` after a resume, a session
        switch, a fork or a tree move): the model of its latest `model_change` (the current one stays when it
        names none or the registry no longer knows it), its latest thinking level (the current one when it
        names none), clamped to the model, and the context window last selected for the model on the branch.
        Records nothing. `announce`: emit `context_window_changed` when the budget changes (seed 003, in-place
        tree navigation). Returns True when the branch's model was found and is now active."""
        previous = self._model
        named = self._lookup(*context.model) if context.model else None
        model = named or (self._registry.find(previous["provider"], previous["id"]) or previous if previous else None)
        if model is None:
            return False
        active = self.activate(model)
        agent = self._agent
        recorded = context.thinking_level
        agent.thinking_level = (self._supported(active, recorded) if recorded else
                                clamp_thinking_level(active, agent.thinking_level))
        if announce and previous is not None:
            self._announce_window(int(previous["contextWindow"]), active)
        self._changed()
        return named is not None

    def _announce_window(self, previous: int, active: Model) -> None:
        """`context_window_changed` (seed 003) when the active budget is no longer `previous`."""
        tokens = int(active["contextWindow"])
        if tokens != previous:
            from ..events import ContextWindowChanged  # the event table: not needed before a tree move

            self._emit(ContextWindowChanged(type="context_window_changed", contextWindow=tokens,
                                            previousContextWindow=previous, provider=active["provider"],
                                            modelId=active["id"]))

    def record_configuration(self, store: SessionStore | None = None) -> None:
        """Record the current model, thinking level and, when it is not the one the model would start with on
        this branch, the context window in the session's store (or `store`, a copy being made): a session
        started from this one (`new_session`, a fork of a branch naming no model) resumes as it runs."""
        model, store = self._model, store if store is not None else self._store()
        if model is None:
            return
        store.append_model_change(model["provider"], model["id"])
        store.append_thinking_level_change(self._agent.thinking_level)
        tokens = int(model["contextWindow"])
        if tokens != self._initial_window(model):
            store.append_context_window_change(model["provider"], model["id"], tokens)

    def _lookup(self, provider: str, model_id: str) -> Model | None:
        return self._registry.find(provider, model_id) or self._registry.host_model(provider, model_id)

    def activate(self, model: Model) -> Model:
        """Make `model` the agent's model with the context window this session selects for it; returns the
        active copy (the registry's dict is never changed). Records nothing."""
        active = with_context_window(model, self._initial_window(model))
        self._agent.model = active
        return active

    def logout_provider(self, provider: str) -> dict[str, Any]:
        """Remove `provider`'s `auth.json` credential and refresh the catalogue (seed 003 `logout_provider`).

        Returns `{provider, authStatus, models, scopedModels?}`: `authStatus` as `ModelRegistry.auth_status`,
        `models` the available models afterwards, `scopedModels` (only when a scope is configured) the scoped
        models still available. Idempotent for a known provider; raises `CommandError` for an unknown one or
        an `auth.json` that cannot be read or written.
        """
        from .auth_file import AuthFileError

        _require_str(provider=provider)
        registry = self._registry
        if provider not in registry.auth.providers():  # a stored one is logged out whatever its name
            provider = require_provider(registry, provider)
        try:
            registry.logout(provider)
        except (AuthFileError, OSError) as exc:
            raise CommandError(f"Cannot log out of {path_text(provider)}: {exc}") from exc
        result: dict[str, Any] = {"provider": provider, "authStatus": registry.auth_status(provider),
                                  "models": registry.available_models()}
        if self.scope:
            result["scopedModels"] = [scoped.model for scoped in self._live_scope()]
        return result

    # -- thinking levels -----------------------------------------------------------------------------

    def available_thinking_levels(self) -> list[str]:
        """Levels the current model supports, in cycle order; `["off"]` without a reasoning model."""
        model = self._model
        return thinking_levels_for(model) if model else ["off"]

    def set_thinking_level(self, level: str) -> None:
        """Set the level (a `thinking_level_change` entry when it changes).

        Raises `CommandError` for a level that is not one of `THINKING_LEVELS` or that the current model does
        not support (`xhigh`/`max` exist only where the model's capabilities map them): never a silent change.
        """
        levels = self.available_thinking_levels()
        if level not in THINKING_LEVELS:
            supported = f" ({self._model_name()} supports {', '.join(levels)})" if self._model else ""
            raise CommandError(f"Invalid thinking level: {path_text(level)}. Valid levels: {', '.join(THINKING_LEVELS)}"
                               f"{supported}")
        if level not in levels:
            raise CommandError(f'Thinking level "{level}" is not supported by {self._model_name()}. '
                               f"Supported levels: {', '.join(levels)}")
        self.record_level(level)

    def cycle_thinking_level(self) -> dict[str, str] | None:
        """Move to the next supported level, wrapping: `{level}`, or None when the model cannot think."""
        levels = self.available_thinking_levels()
        if len(levels) <= 1:
            return None
        current = self._agent.thinking_level
        index = levels.index(current) if current in levels else -1
        self.record_level(levels[(index + 1) % len(levels)])
        return {"level": self._agent.thinking_level}

    def request_level(self, level: str) -> None:
        """Set a level a flag asked for (`--thinking` on a resumed session), clamped to the model with the
        warning of `selection.supported_level` when it is not supported; recorded as `record_level` does."""
        model = self._model
        self.record_level(self._supported(model, level) if model is not None else level)

    def _supported(self, model: Model, level: str) -> str:
        """`level` clamped to `model`; a level it does not support is reported through `warn`, once per request."""
        supported, warning = supported_level(model, level)
        if warning:
            self._warn(warning)
        return supported

    def record_level(self, level: str) -> None:
        """Make `level` the thinking level; a `thinking_level_change` entry only when it changes."""
        agent = self._agent
        if level != agent.thinking_level:
            agent.thinking_level = level
            self._store().append_thinking_level_change(level)
            self._changed()

    # -- context windows -----------------------------------------------------------------------------

    def available_context_windows(self) -> dict[str, Any]:
        """`{contextWindows (ascending), currentContextWindow?, supportsSelection}` for the current model;
        `currentContextWindow` is left out when no model is selected (seed 003)."""
        model = self._model
        if model is None:
            return {"contextWindows": [], "supportsSelection": False}
        windows = context_windows_for(model)
        return {"contextWindows": windows, "currentContextWindow": int(model["contextWindow"]),
                "supportsSelection": len(windows) > 1}

    def set_context_window(self, value: str | int | float) -> None:
        """Select a budget for the current model: a token count or a compact size (`"400k"`, `"1m"`).

        When it changes: a `context_window_change` entry `{provider, modelId, contextWindow}` and a
        `context_window_changed` event `{contextWindow, previousContextWindow, provider, modelId}`. Never
        writes settings. Raises `CommandError` for a malformed value, a budget the model does not offer
        (`Context window 2m is not supported by p/id. Supported values: 400k, 1m.`) or no model.
        """
        model = self._model
        if model is None:
            raise CommandError("No model is selected: a context window needs a model")
        tokens = parse_context_window(value)
        windows = context_windows_for(model)
        if tokens not in windows:
            raise CommandError(f"Context window {format_context_window(tokens)} is not supported by "
                               f"{self._model_name()}. Supported values: "
                               f"{', '.join(format_context_window(w) for w in windows)}.")
        previous = int(model["contextWindow"])
        if tokens == previous:
            return
        active = self._agent.model = with_context_window(model, tokens)
        self._store().append_context_window_change(model["provider"], model["id"], tokens)
        self._announce_window(previous, active)

    def _initial_window(self, model: Model) -> int:
        windows = context_windows_for(model)
        for candidate in (self._recorded_window(model), self._settings_window(model)):
            if candidate in windows:
                return candidate
        return default_context_window(model)

    def _recorded_window(self, model: Model) -> int | None:
        """The budget last selected for `model` on the session's active branch."""
        store = self._store()
        if "context_window_change" not in store.branch_types():  # the usual branch: no walk of it
            return None
        for entry in reversed(store.branch()):
            if (entry["type"] == "context_window_change" and entry.get("provider") == model["provider"]
                    and entry.get("modelId") == model["id"]):
                value = entry.get("contextWindow")
                return value if isinstance(value, int) else None
        return None

    def _settings_window(self, model: Model) -> int | None:
        defaults = self._settings.get("defaultContextWindows")
        value = defaults.get(f"{model['provider']}/{model['id']}") if isinstance(defaults, dict) else None
        try:
            return parse_context_window(value) if value is not None else None
        except CommandError:
            return None  # a bad settings value falls back to the model default

    def _model_name(self) -> str:
        model = self._model
        return f"{model['provider']}/{model['id']}" if model else "the session (no model is selected)"


def _nothing() -> None:
    """No one to tell of a change (the start-up model choice: `prelude.py`)."""


def _require_str(**arguments: object) -> None:
    """Raise `CommandError` naming the first argument (by its Python parameter name) that is not a string: SDK
    callers are not validated by the RPC layer, which words its own field errors (`modes/rpc/validation.py`)."""
    for name, value in arguments.items():
        if not isinstance(value, str):
            raise CommandError(f"{name} must be a string, got {type(value).__name__}")


def with_context_window(model: Model, tokens: int) -> Model:
    """A copy of `model` whose `contextWindow` is `tokens`; a selectable model keeps its default in
    `defaultContextWindow` so the choice can be undone."""
    active: dict[str, Any] = dict(model)
    if active.get("contextWindowOptions") and "defaultContextWindow" not in active:
        active["defaultContextWindow"] = int(model["contextWindow"])
    active["contextWindow"] = tokens
    return active  # type: ignore[return-value]


def parse_context_window(value: Any) -> int:
    """Token count from a number or a compact size (`"400k"` = 400000, `"1m"` = 1000000, `"1.5m"`, `"200000"`;
    case-insensitive). Raises `CommandError` for anything else, including zero, negatives and fractions.
    Arithmetic is exact (no float rounding), so a huge count is reported as typed and never overflows."""
    tokens = _exact_tokens(value)
    if tokens is None or tokens <= 0 or tokens != int(tokens):
        shown = path_text(value) if isinstance(value, str) else repr(value)
        raise CommandError(f"Invalid context window: {shown}. Use a token count (400000) or a compact size "
                           "such as 400k or 1m.")
    return int(tokens)


def _exact_tokens(value: Any) -> Any:
    """`value` as an exact number (int or Decimal), None when it is no finite number or compact size."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    match = _COMPACT_SIZE.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        return None
    from decimal import Decimal  # imported here: only a compact size needs it

    return Decimal(match[1]) * _SCALE[match[2].lower()]


def format_context_window(tokens: int) -> str:
    """`1000000` -> `"1m"`, `400000` -> `"400k"`, other counts as plain digits."""
    if tokens % 1_000_000 == 0:
        return f"{tokens // 1_000_000}m"
    if tokens % 1_000 == 0:
        return f"{tokens // 1_000}k"
    return str(tokens)
