"""Read-only settings: `<agent dir>/settings.json` merged with `<cwd>/.agent-forge/agent/settings.json`.

Both files keep the reference agent's schema (its `settings.md`). The project file wins; nested objects merge
key by key, any other value (lists included) is replaced. Problems never raise: an unreadable file, one that is
not a regular file or is over 1 MB (`safe_read.py`: the project file comes from an unvetted checkout), invalid
JSON, a non-object, a known key of the wrong type or range, or any number out of range (`config_values.py`) is
recorded in `Settings.errors` (as `<path>:<line>: ...` when it is one value's) and the key falls back to its
default. Nothing here writes: RPC setting commands change the running session only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

from ..ai.options import THINKING_LEVELS
from ..records import Record, factory
from .paths import agent_dir as default_agent_dir
from .paths import path_text, project_dir
from .config_values import OUT_OF_RANGE, drop_out_of_range, is_count, is_fraction, is_number, is_positive_int
from .errors import ConfigFileError
from .safe_read import MAX_REPORTED_PROBLEMS, read_json_document

APPROVAL_POLICIES = ("full", "ask", "read-only")
"""The `approvals` setting's values (`coding/approvals.py` applies them; here so that RPC mode's early `get_state`
reads the setting without importing that module)."""


def approval_policy(settings: object, default: str = "full") -> str:
    """The `approvals` setting (the user's settings.json, or a trusted project's: an untrusted project's is
    dropped with the code-running settings, `resources/trust.py`), else `default`. A wrong value was reported
    when the settings loaded (its default is used)."""
    value = settings.get("approvals") if hasattr(settings, "get") else None
    return value if value in APPROVAL_POLICIES else default

SETTINGS_FILE = "settings.json"
QUEUE_MODES = ("all", "one-at-a-time")
COMPACTION_STRATEGIES = ("summary", "verbatim-lines")
DEFAULT_HTTP_IDLE_TIMEOUT_MS = 120_000


class SettingsError(Record, frozen=True):
    """A problem with one settings file; `str()` gives `"<path>:<line>: <message>"` (`"<path>: <message>"` when
    the problem is not one value's, or its line is unknown)."""

    path: Path
    message: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{path_text(self.path)}{'' if self.line is None else f':{self.line}'}: {self.message}"


class RetrySettings(Record, frozen=True, kw_only=True):
    """Agent-level retry of transient provider failures; delays in milliseconds, doubling from `base_delay_ms`."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60000


class CompactionSettings(Record, frozen=True, kw_only=True):
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


def _is_object(value: object) -> bool:
    return isinstance(value, dict)


def _is_bool(value: object) -> bool:
    return isinstance(value, bool)


_is_count = is_count


def _is_patterns(value: object) -> bool:
    """`enabledModels`: a list of patterns, or one comma-separated string of them as `--models` takes."""
    items = value.split(",") if isinstance(value, str) else value
    return isinstance(items, list) and all(isinstance(x, str) for x in items) and any(x.strip() for x in items)


def _is_window(value: object) -> bool:
    """`defaultContextWindows` values: a token count or a compact size (`"400k"`, as `--context-window`)."""
    return is_positive_int(value) or (isinstance(value, str) and re.fullmatch(
        r"\s*\d+(\.\d+)?\s*[kKmM]?\s*", value) is not None)


def _is_str(value: object) -> bool:
    """A non-blank string without a NUL byte (no name, path or pattern can hold one)."""
    return isinstance(value, str) and bool(value.strip()) and "\0" not in value


def _one_of(*choices: str) -> Callable[[object], bool]:
    return lambda value: value in choices


# Dotted key -> (validator, expectation shown in the error): with `_PER_FILE`, every key the product reads by
# name (tests/e2e/test_config_file_values.py checks the source against the two). Keys not listed are passed
# through in `raw`; `*` stands for every key of an object (a "provider/modelId").
_KNOWN: dict[str, tuple[Callable[[object], bool], str]] = {
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
    "compaction.compressionRatio": (is_fraction, "a number between 0 and 1 (exclusive)"),
    "compaction.preserveRecent": (_is_count, "a non-negative integer (messages)"),
    "compaction.modelOverrides": (_is_object, 'an object keyed by "provider/modelId"'),
    "compaction.modelOverrides.*": (_is_object, "an object with reserveTokens and/or keepRecentTokens"),
    "compaction.modelOverrides.*.reserveTokens": (_is_count, "a non-negative integer (tokens)"),
    "compaction.modelOverrides.*.keepRecentTokens": (_is_count, "a non-negative integer (tokens)"),
    "modelThinkingLevels.*": (_one_of(*THINKING_LEVELS), "one of " + ", ".join(THINKING_LEVELS)),
    "enabledModels": (_is_patterns, 'a list of model patterns (or one string of comma-separated patterns)'),
    "defaultContextWindows": (_is_object, 'an object keyed by "provider/modelId"'),
    "defaultContextWindows.*": (_is_window, 'a positive token count or a compact size such as "400k"'),
    "enableSkillCommands": (_is_bool, "true or false"),
    "projectResources": (_is_bool, "true or false"),
    "defaultProjectTrust": (_one_of("ask", "always", "never"), '"ask", "always" or "never"'),
    "approvals": (_one_of(*APPROVAL_POLICIES), '"full", "ask" or "read-only"'),  # coding/approvals.py
    "plugins": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
                "a list of plugin paths or module names"),
    "pluginSetupTimeoutMs": (lambda v: is_number(v) and v > 0, "a positive number (milliseconds)"),
    "pluginHandlerTimeoutMs": (lambda v: is_number(v) and v > 0, "a positive number (milliseconds)"),
    "approvalTimeoutMs": (lambda v: is_number(v) and v > 0, "a positive number (milliseconds)"),
    "shellPath": (_is_str, "a non-empty string (the path of a shell)"),
    "shellCommandPrefix": (lambda value: isinstance(value, str), "a string"),
    "httpIdleTimeoutMs": (lambda v: _is_count(v) or v == "disabled",
                          'a non-negative integer (milliseconds) or "disabled"'),
    # read by the interactive mode (modes/interactive/app.py, theme_files.py)
    "theme": (lambda value: isinstance(value, str), 'a theme name ("dark", "light" or a custom theme\'s)'),
    "hideThinkingBlock": (_is_bool, "true or false"),
    "quietStartup": (_is_bool, "true or false"),
}


def _is_names(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item.strip() for item in value)


_PER_FILE: dict[str, tuple[Callable[[object], bool], str]] = {
    "skills": (_is_names, "a list of paths"),  # resources/loader.py
    "prompts": (_is_names, "a list of paths"),
    "defaultTools": (_is_names, "a list of tool names"),  # tools/selection.py
}
"""Keys whose value is read from each file on its own (`global_raw`, `project_raw`: the two lists combine, the
project's does not replace the agent dir's), so each file's value is checked, and removed when wrong."""


class Settings(Record):
    """Merged settings with typed accessors; `raw` is the merged dict for everything else.

    `global_raw` and `project_raw` keep each file's own dict for callers that combine lists (resources).
    """

    raw: dict[str, Any] = factory(dict)
    global_raw: dict[str, Any] = factory(dict)
    project_raw: dict[str, Any] = factory(dict)
    errors: list[SettingsError] = factory(list)
    invalid_keys: set[str] = factory(set)

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


def load_settings(cwd: str | Path, agent_dir: str | Path | None = None, *, include_project: bool = True,
                  project_filter: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> Settings:
    """Load and merge the agent-dir and project settings files. Never raises; see `Settings.errors`.
    `include_project=False` leaves the project file unread; `project_filter` returns the part of the project
    file to apply (project trust: `resources/trust.py`)."""
    global_dir = Path(agent_dir) if agent_dir is not None else default_agent_dir()
    errors: list[SettingsError] = []
    texts: dict[Path, str] = {}
    global_path = global_dir / SETTINGS_FILE
    project_path = project_dir(cwd) / SETTINGS_FILE
    global_raw = _read_settings_file(global_path, errors, texts)
    same_file = _same_path(global_path, project_path) or not include_project
    project_raw = {} if same_file else _read_settings_file(project_path, errors, texts)
    if project_filter is not None and project_raw:
        project_raw = project_filter(project_raw)
    settings = Settings(raw=deep_merge(global_raw, project_raw), global_raw=global_raw,
                        project_raw=project_raw, errors=errors)
    _validate(settings, (project_path, global_path), texts)
    errors[:] = _capped(errors)
    return settings


def _capped(errors: list[SettingsError]) -> list[SettingsError]:
    """At most `MAX_REPORTED_PROBLEMS` errors per file, then one saying how many more there are."""
    kept: list[SettingsError] = []
    listed: dict[Path, int] = {}
    unlisted: dict[Path, int] = {}
    for error in errors:
        if listed.get(error.path, 0) < MAX_REPORTED_PROBLEMS:
            kept.append(error)
            listed[error.path] = listed.get(error.path, 0) + 1
        else:
            unlisted[error.path] = unlisted.get(error.path, 0) + 1
    kept += [SettingsError(path, f"{count} more problems not listed (their keys use the default)")
             for path, count in unlisted.items()]
    return kept


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """A new dict: `override` over `base`, recursing where both values are objects."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _read_settings_file(path: Path, errors: list[SettingsError], texts: dict[Path, str]) -> dict[str, Any]:
    """The file's object (`{}` when absent or unusable); its text goes to `texts` for line numbers. Numbers out
    of range are reported and removed, so their keys take the default."""
    try:
        document = read_json_document(path, if_blank={})
    except FileNotFoundError:
        return {}
    except ConfigFileError as exc:
        errors.append(SettingsError(path, f"{exc}; file ignored"))
        return {}
    data, texts[path] = document.data, document.text
    errors.extend(SettingsError(path, note, line) for line, note in document.duplicate_notes())
    if not isinstance(data, dict):
        errors.append(SettingsError(path, f"expected a JSON object, got {_json_type(data)}; file ignored"))
        return {}
    for count, where in enumerate(drop_out_of_range(data)):  # lines only for those `_capped` keeps
        line = _line(texts[path], where) if count < MAX_REPORTED_PROBLEMS else None
        errors.append(SettingsError(path, f"{_dotted(where)}: {OUT_OF_RANGE}; using the default", line))
    for key, (valid, expected) in _PER_FILE.items():
        if key in data and not valid(data[key]):
            errors.append(SettingsError(path, f"{key} must be {expected}, got {json.dumps(data.pop(key))[:80]}; "
                                        "using the default", _line(texts[path], (key,))))
    from .config_keys import unknown_dotted_keys  # a key the tables do not name: a warning (a plugin may own it)

    errors.extend(SettingsError(path, f"{unknown}; ignored", _line(texts[path], where))
                  for where, unknown in unknown_dotted_keys(data, (*_KNOWN, *_PER_FILE)))
    return data


def _validate(settings: Settings, paths: tuple[Path, Path], texts: dict[Path, str]) -> None:
    """Record known keys of the wrong type (naming the file and line that set them) so accessors use defaults.
    `paths` is `(project file, agent-dir file)`: a merged value comes from the project file when it has one."""
    raws = (settings.project_raw, settings.global_raw)
    for pattern, (valid, expected) in _KNOWN.items():
        for where in _expand(settings.raw, tuple(pattern.split("."))):
            value = _lookup_path(settings.raw, where)
            if valid(value):
                continue
            dotted = ".".join(where)
            settings.invalid_keys.add(dotted)
            path = next((p for p, raw in zip(paths, raws) if _lookup_path(raw, where) is not _MISSING), paths[1])
            settings.errors.append(SettingsError(
                path, f"{dotted} must be {expected}, got {json.dumps(value)[:80]}; using the default",
                _line(texts.get(path, ""), where)))


def _expand(data: object, pattern: tuple[str, ...], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The key paths present in `data` that match `pattern` (`*` matches every key of an object)."""
    if not pattern:
        return [prefix]
    if not isinstance(data, dict):
        return []
    head, rest = pattern[0], pattern[1:]
    keys = list(data) if head == "*" else [head] if head in data else []
    return [found for key in keys for found in _expand(data[key], rest, (*prefix, key))]


def _lookup_path(data: object, where: tuple[str, ...]) -> object:
    for part in where:
        if not isinstance(data, dict) or part not in data:
            return _MISSING
        data = data[part]
    return data


def _line(text: str, where: tuple[str | int, ...]) -> int | None:
    """Line of the key at `where` in a settings file's text (None without text)."""
    if not text:
        return None
    from .json_locate import locate  # only when there is something to report

    position = locate(text, where)
    return position[0] if position else None


def _dotted(where: tuple[str | int, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(where))


def _lookup(data: dict[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _same_path(a: Path, b: Path) -> bool:
    """Whether `a` and `b` name one place (resolved), whether or not a file is there yet (`paths.same_file`
    asks about an existing file)."""
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symbolic link loop (Python 3.11's resolve)
        return False


def _json_type(value: object) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")
