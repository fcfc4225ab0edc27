"""Read-only settings: `<agent dir>/settings.json` merged with `<cwd>/.agent-forge/agent/settings.json`.

Both files keep the reference agent's schema (its `settings.md`). The project file wins; nested objects merge
key by key, any other value (lists included) is replaced. Problems never raise: an unreadable file, one that is
not a regular file or is over 1 MB (`safe_read.py`: the project file comes from an unvetted checkout), invalid
JSON, a non-object or a known key of the wrong type is recorded in `Settings.errors` and the key falls back to
its default. Nothing here writes: RPC setting commands change the running session only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..ai.types import THINKING_LEVELS
from .paths import agent_dir as default_agent_dir
from .paths import project_dir
from .safe_read import ConfigFileError, read_json_file

SETTINGS_FILE = "settings.json"
QUEUE_MODES = ("all", "one-at-a-time")
COMPACTION_STRATEGIES = ("summary", "verbatim-lines")
DEFAULT_HTTP_IDLE_TIMEOUT_MS = 120_000


@dataclass(frozen=True)
class SettingsError:
    """A problem with one settings file; `str()` gives `"<path>: <message>"`."""

    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True, kw_only=True)
class RetrySettings:
    """Agent-level retry of transient provider failures; delays in milliseconds, doubling from `base_delay_ms`."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60000


@dataclass(frozen=True, kw_only=True)
class CompactionSettings:
    """Automatic compaction; token counts. `strategy` is `summary` (seed 000) or `verbatim-lines` (seed 003)."""

    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000
    strategy: str = "summary"


WINDOW_SHARE = 4
"""`reserveTokens` and `keepRecentTokens` are each capped at 1/WINDOW_SHARE of the model's context window (see
`Settings.compaction_for`): with a quarter kept and a quarter reserved, half the window is left for the system
prompt, the tools and the summary, so a compacted context fits below the threshold."""

_MISSING = object()


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 and value == int(value)


def _is_str(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _one_of(*choices: str) -> Callable[[Any], bool]:
    return lambda value: value in choices


# Dotted key -> (validator, expectation shown in the error). Keys not listed are passed through in `raw`.
_KNOWN: dict[str, tuple[Callable[[Any], bool], str]] = {
    "defaultProvider": (_is_str, "a non-empty string"),
    "defaultModel": (_is_str, "a non-empty string"),
    "defaultThinkingLevel": (_one_of(*THINKING_LEVELS), "one of " + ", ".join(THINKING_LEVELS)),
    "steeringMode": (_one_of(*QUEUE_MODES), '"all" or "one-at-a-time"'),
    "followUpMode": (_one_of(*QUEUE_MODES), '"all" or "one-at-a-time"'),
    "retry": (_is_object, "an object"),
    "compaction": (_is_object, "an object"),
    "rpc": (_is_object, "an object"),
    "modelThinkingLevels": (_is_object, 'an object keyed by "provider/modelId"'),
    "retry.enabled": (_is_bool, "true or false"),
    "retry.maxRetries": (_is_count, "a non-negative integer"),
    "retry.baseDelayMs": (_is_count, "a non-negative integer (milliseconds)"),
    "retry.maxAgentDelayMs": (_is_count, "a non-negative integer (milliseconds)"),
    "compaction.enabled": (_is_bool, "true or false"),
    "compaction.reserveTokens": (_is_count, "a non-negative integer (tokens)"),
    "compaction.keepRecentTokens": (_is_count, "a non-negative integer (tokens)"),
    "compaction.strategy": (_one_of(*COMPACTION_STRATEGIES), '"summary" or "verbatim-lines"'),
    "rpc.partialMessages": (_is_bool, "true or false"),
    "shellPath": (_is_str, "a non-empty string (the path of a shell)"),
    "shellCommandPrefix": (lambda value: isinstance(value, str), "a string"),
    "httpIdleTimeoutMs": (lambda v: _is_count(v) or v == "disabled",
                          'a non-negative integer (milliseconds) or "disabled"'),
}


@dataclass
class Settings:
    """Merged settings with typed accessors; `raw` is the merged dict for everything else.

    `global_raw` and `project_raw` keep each file's own dict for callers that combine lists (resources).
    """

    raw: dict[str, Any] = field(default_factory=dict)
    global_raw: dict[str, Any] = field(default_factory=dict)
    project_raw: dict[str, Any] = field(default_factory=dict)
    errors: list[SettingsError] = field(default_factory=list)
    invalid_keys: set[str] = field(default_factory=set)

    def get(self, dotted: str, default: Any = None) -> Any:
        """The merged value at a dotted key (`"retry.maxRetries"`), or `default` when absent or invalid."""
        if dotted in self.invalid_keys:
            return default
        value = _lookup(self.raw, dotted)
        return default if value is _MISSING else value

    @property
    def default_provider(self) -> str | None:
        return self.get("defaultProvider")

    @property
    def default_model(self) -> str | None:
        return self.get("defaultModel")

    @property
    def default_thinking_level(self) -> str | None:
        """The configured start-up level, or None when unset (the model decides: see `initial_model`)."""
        return self.get("defaultThinkingLevel")

    def model_thinking_level(self, provider: str, model_id: str) -> str | None:
        """`modelThinkingLevels["<provider>/<id>"]` when it is a valid level."""
        levels = self.get("modelThinkingLevels")
        level = levels.get(f"{provider}/{model_id}") if isinstance(levels, dict) else None
        return level if level in THINKING_LEVELS else None

    @property
    def steering_mode(self) -> str:
        return self.get("steeringMode", "one-at-a-time")

    @property
    def follow_up_mode(self) -> str:
        return self.get("followUpMode", "one-at-a-time")

    @property
    def retry(self) -> RetrySettings:
        d = RetrySettings()
        return RetrySettings(enabled=self.get("retry.enabled", d.enabled),
                             max_retries=int(self.get("retry.maxRetries", d.max_retries)),
                             base_delay_ms=int(self.get("retry.baseDelayMs", d.base_delay_ms)),
                             max_delay_ms=int(self.get("retry.maxAgentDelayMs", d.max_delay_ms)))

    @property
    def compaction(self) -> CompactionSettings:
        return self.compaction_for()

    def compaction_for(self, provider: str | None = None, model_id: str | None = None,
                       context_window: int = 0) -> CompactionSettings:
        """Compaction settings, with `compaction.modelOverrides["<provider>/<id>"]` token values applied.

        With a `context_window` (tokens), `reserveTokens` and `keepRecentTokens` that do not come from the
        model's override are capped at `context_window // WINDOW_SHARE`: the defaults (16,384 and 20,000) are
        sized for 128k-token windows, and on an 8k-token local model they would keep everything and reserve
        more than the window, so nothing could ever be compacted. Override values are used as given.
        """
        d = CompactionSettings()
        override = self.get("compaction.modelOverrides", {})
        override = override.get(f"{provider}/{model_id}") if isinstance(override, dict) else None
        override = override if isinstance(override, dict) else {}
        cap = context_window // WINDOW_SHARE if context_window > 0 else None

        def tokens(key: str, fallback: int) -> int:
            value = override.get(key)
            if _is_count(value):
                return int(value)
            value = int(self.get(f"compaction.{key}", fallback))
            return value if cap is None else min(value, cap)

        return CompactionSettings(enabled=self.get("compaction.enabled", d.enabled),
                                  reserve_tokens=tokens("reserveTokens", d.reserve_tokens),
                                  keep_recent_tokens=tokens("keepRecentTokens", d.keep_recent_tokens),
                                  strategy=self.get("compaction.strategy", d.strategy))

    @property
    def shell_path(self) -> str | None:
        """`shellPath`: the shell that runs commands (`<path> -c <command>`); None: bash from PATH, else sh.
        A project sets it only when trusted (`resources/trust.py` `CODE_SETTINGS`)."""
        return self.get("shellPath")

    @property
    def shell_command_prefix(self) -> str | None:
        """`shellCommandPrefix`: text run before every command, joined to it by a newline; None when unset or
        empty. A project sets it only when trusted."""
        return self.get("shellCommandPrefix") or None

    @property
    def http_idle_timeout_s(self) -> float | None:
        """`httpIdleTimeoutMs` in seconds (default 120 s): the longest wait for a provider's next bytes; None when
        set to 0 or "disabled" (the reference agent's setting; its default is 300 s)."""
        value = self.get("httpIdleTimeoutMs", DEFAULT_HTTP_IDLE_TIMEOUT_MS)
        return None if value in (0, "disabled") else value / 1000

    @property
    def rpc_partial_messages(self) -> bool:
        """`rpc.partialMessages`: add `message`/`partial` to `message_update` (SPEC-NOTES, seed 003 shape)."""
        return self.get("rpc.partialMessages", False)


def load_settings(cwd: str | Path, agent_dir: str | Path | None = None, *, include_project: bool = True,
                  project_filter: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> Settings:
    """Load and merge the agent-dir and project settings files. Never raises; see `Settings.errors`.
    `include_project=False` leaves the project file unread; `project_filter` returns the part of the project
    file to apply (project trust: `resources/trust.py`)."""
    global_dir = Path(agent_dir) if agent_dir is not None else default_agent_dir()
    errors: list[SettingsError] = []
    global_path = global_dir / SETTINGS_FILE
    project_path = project_dir(cwd) / SETTINGS_FILE
    global_raw = _read_settings_file(global_path, errors)
    same_file = _same_file(global_path, project_path) or not include_project
    project_raw = {} if same_file else _read_settings_file(project_path, errors)
    if project_filter is not None and project_raw:
        project_raw = project_filter(project_raw)
    settings = Settings(raw=deep_merge(global_raw, project_raw), global_raw=global_raw,
                        project_raw=project_raw, errors=errors)
    _validate(settings, global_path, project_path)
    return settings


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """A new dict: `override` over `base`, recursing where both values are objects."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _read_settings_file(path: Path, errors: list[SettingsError]) -> dict[str, Any]:
    try:
        data = read_json_file(path, if_blank={})
    except FileNotFoundError:
        return {}
    except ConfigFileError as exc:
        errors.append(SettingsError(path, f"{exc}; file ignored"))
        return {}
    if not isinstance(data, dict):
        errors.append(SettingsError(path, f"expected a JSON object, got {_json_type(data)}; file ignored"))
        return {}
    return data


def _validate(settings: Settings, global_path: Path, project_path: Path) -> None:
    """Record known keys of the wrong type (naming the file that set them) so accessors use defaults."""
    for dotted, (valid, expected) in _KNOWN.items():
        value = settings.get(dotted, _MISSING)
        if value is _MISSING or valid(value):
            continue
        settings.invalid_keys.add(dotted)
        path = project_path if _lookup(settings.project_raw, dotted) is not _MISSING else global_path
        settings.errors.append(SettingsError(path, f"{dotted} must be {expected}, got {json.dumps(value)}; "
                                                   "using the default"))



def _lookup(data: dict[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symbolic link loop (Python 3.11's resolve)
        return False


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")
