"""MCP server configuration: `<agent dir>/mcp.json` and, in a trusted project, `<cwd>/.agent-forge/agent/mcp.json`,
in the common `mcpServers` format (`docs/mcp.md`).

Each entry is stdio (`command`, `args`, `env`, `cwd`) or streamable HTTP (`url`, `headers`); both take `enabled`,
`description`, `includeTools` / `excludeTools` (MCP tool names, `*` patterns) and `startupTimeoutMs`. `${VAR}`
in `args`, `env` and `headers` values is replaced by the environment variable. A project entry replaces the user
entry of the same name; a project entry with only `enabled` / `includeTools` / `excludeTools` changes those
fields of the user entry. Problems never stop the session: each is a warning naming the file and the entry.
Reading stays cheap (no SDK import): this module runs on the start-up path.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

from ..config_values import is_number
from ..errors import ConfigFileError
from ..paths import path_text, project_dir, same_file
from ..safe_read import examine, read_json_document

FILE_NAME = "mcp.json"
DEFAULT_STARTUP_TIMEOUT_S = 10.0
"""How long a prompt waits for a server still starting, and how long `initialize` may take."""
NAME_RULE = re.compile(r"[A-Za-z0-9_-]{1,64}")
OVERRIDE_KEYS = frozenset({"enabled", "includeTools", "excludeTools"})
_KNOWN_KEYS = frozenset({"type", "command", "args", "env", "cwd", "url", "headers", "enabled", "description",
                         "includeTools", "excludeTools", "startupTimeoutMs", "toolTimeoutMs"}) | OVERRIDE_KEYS
_TRANSPORTS = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http"}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class McpServerConfig:
    """One server. `scope` is `"user"`, `"project"` or `"sdk"`; `transport` `"stdio"` or `"http"`; `source` the
    file it came from (None from the SDK). Tool lists hold MCP tool names or `*` patterns; None = every tool."""

    name: str
    transport: str
    scope: str = "user"
    source: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    description: str | None = None
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S
    tool_timeout_s: float | None = None
    """`toolTimeoutMs`: how long one tool call (or resource read) may run; None: the session's default."""

    def admits(self, tool_name: str) -> bool:
        """Whether the server's tool `tool_name` (its MCP name) is offered, by `includeTools` / `excludeTools`."""
        import fnmatch

        if any(fnmatch.fnmatchcase(tool_name, p) for p in self.exclude_tools):
            return False
        return self.include_tools is None or any(fnmatch.fnmatchcase(tool_name, p) for p in self.include_tools)


class EntryProblem(ValueError):
    """An entry that cannot be used; `str()` says why."""


def load_mcp_config(cwd: str, agent_dir: str | os.PathLike[str], *, project_allowed: bool,
                    environ: Mapping[str, str] | None = None) -> tuple[list[McpServerConfig], list[str]]:
    """`(servers, warnings)`: the user file, then the project file when `project_allowed` (the project is used
    and trusted). Servers keep their file order, project-only servers last; disabled ones are included."""
    environ = os.environ if environ is None else environ
    warnings: list[str] = []
    user_path = Path(agent_dir) / FILE_NAME
    servers = {s.name: s for s in _read_file(user_path, "user", cwd, environ, warnings)}
    project_path = project_dir(cwd) / FILE_NAME
    if project_allowed and not same_file(project_path, user_path):  # in the home directory they are one file
        raw, text = _read_entries(project_path, warnings)
        for name, entry in raw.items():
            _merge_project_entry(servers, name, entry, project_path, cwd, environ, warnings, text)
    return list(servers.values()), warnings


def project_file(cwd: str) -> Path:
    """Where a project's MCP configuration lives."""
    return project_dir(cwd) / FILE_NAME


def has_project_file(cwd: str, agent_dir: str | os.PathLike[str]) -> bool:
    """Whether the project has an `mcp.json` of its own: one that exists and is not the agent dir's (in the home
    directory, `<cwd>/.agent-forge/agent` is the agent dir)."""
    path = project_file(cwd)
    return examine(path) is not None and not same_file(path, Path(agent_dir) / FILE_NAME)  # a link loop is a file too

def parse_servers(data: object, *, scope: str = "sdk", source: str | None = None, cwd: str = ".",
                  environ: Mapping[str, str] | None = None) -> tuple[list[McpServerConfig], list[str]]:
    """Servers from `{"mcpServers": {...}}` or the inner `{name: entry}` mapping (the SDK's `mcp_servers`)."""
    environ = os.environ if environ is None else environ
    warnings: list[str] = []
    label = source or "mcp_servers"
    entries = _entries_of(data.get("mcpServers", data) if isinstance(data, dict) else data, label, warnings)
    servers = []
    for name, entry in entries.items():
        server = _checked(name, entry, scope, source, label, cwd, environ, warnings)
        if server is not None:
            servers.append(server)
    return servers, warnings


MAX_SERVER_DESCRIPTION_CHARS = 200
"""An entry's `description`, as listed in the system prompt: one line, control characters escaped, cut here."""


def _description(entry: dict[str, object]) -> str | None:
    from .limits import one_line  # only when an entry has a description

    text = _optional_string(entry, "description")
    return one_line(text, MAX_SERVER_DESCRIPTION_CHARS) if text else text


def _read_file(path: Path, scope: str, cwd: str, environ: Mapping[str, str],
               warnings: list[str]) -> list[McpServerConfig]:
    servers = []
    entries, text = _read_entries(path, warnings)
    for name, entry in entries.items():
        server = _checked(name, entry, scope, str(path), str(path), cwd, environ, warnings, text)
        if server is not None:
            servers.append(server)
    return servers


def _read_entries(path: Path, warnings: list[str]) -> tuple[dict[str, object], str]:
    """The `mcpServers` object of `path` ({} when the file is missing or unusable, with a warning for the latter)
    and the file's text (to give problems their line)."""
    try:
        document = read_json_document(path, if_blank={})
    except FileNotFoundError:
        return {}, ""
    except ConfigFileError as exc:
        warnings.append(f"{path_text(path)}: {exc}; its MCP servers are not used")
        return {}, ""
    data = document.data
    warnings.extend(document.duplicate_warnings(path))
    if not isinstance(data, dict):
        warnings.append(f"{path_text(path)}: expected a JSON object with \"mcpServers\"; its MCP servers are not used")
        return {}, ""
    return _entries_of(data.get("mcpServers", {}), str(path), warnings), document.text


def _entries_of(value: object, label: str, warnings: list[str]) -> dict[str, object]:
    if not isinstance(value, dict):
        warnings.append(f"{path_text(label)}: \"mcpServers\" must be an object of server entries; ignored")
        return {}
    return value


def _merge_project_entry(servers: dict[str, McpServerConfig], name: str, entry: object, path: Path, cwd: str,
                         environ: Mapping[str, str], warnings: list[str], text: str = "") -> None:
    if isinstance(entry, dict) and entry and set(entry) <= OVERRIDE_KEYS:
        base = servers.get(name)
        if base is None:
            warnings.append(f"{path_text(path)}: mcpServers.{path_text(name)}: only overrides "
                            f"{', '.join(sorted(entry))}, but no user server has that name; skipped")
            return
        try:
            servers[name] = replace(base, **_override_fields(entry))
        except EntryProblem as exc:
            warnings.append(f"{path_text(path)}: mcpServers.{path_text(name)}: {exc}; the override is skipped")
        return
    server = _checked(name, entry, "project", str(path), str(path), cwd, environ, warnings, text)
    if server is not None:
        servers.pop(name, None)  # the project entry replaces the user one (and takes its place at the end)
        servers[name] = server


def entry_problem(name: str, entry: object) -> str | None:
    """What makes `entry` (an `mcp.json` server entry named `name`) unusable, as `_checked` would report it
    (`command must be a non-empty string`, `url 'x' ...`), or None: for callers that refuse a bad entry
    outright (an ACP editor's `mcpServers`) rather than skip it with a warning."""
    try:
        _parse_entry(name, entry, "sdk", None, ".", {}, [])
    except EntryProblem as exc:
        return str(exc)
    return None


def _checked(name: str, entry: object, scope: str, source: str | None, label: str, cwd: str,
             environ: Mapping[str, str], warnings: list[str], text: str = "") -> McpServerConfig | None:
    """The entry's server, or None with its problem in `warnings` as `<label>[:<line>]: mcpServers.<name>: ...`
    (the line of the entry in `text`, the file's text, when given)."""
    try:
        server = _parse_entry(name, entry, scope, source, cwd, environ, warnings)
    except EntryProblem as exc:
        warnings.append(f"{_at(label, text, name)}: mcpServers.{path_text(name)}: {exc}; skipped")
        return None
    unknown = sorted(set(entry) - _KNOWN_KEYS)
    if unknown:
        warnings.append(f"{_at(label, text, name)}: mcpServers.{path_text(name)}: unknown field(s) "
                        f"{', '.join(map(path_text, unknown))} ignored")
    return server


def _at(label: str, text: str, name: str) -> str:
    """`label:<line>` of entry `name` in `text` (located only when there is a problem to report), else `label`."""
    if not text:
        return path_text(label)
    from ..json_locate import locate

    position = locate(text, ("mcpServers", name))
    return f"{path_text(label)}:{position[0]}" if position else path_text(label)


def _parse_entry(name: str, entry: object, scope: str, source: str | None, cwd: str, environ: Mapping[str, str],
                 warnings: list[str]) -> McpServerConfig:
    if not NAME_RULE.fullmatch(name):
        raise EntryProblem("a server name has 1 to 64 letters, digits, '_' or '-'")
    if not isinstance(entry, dict):
        raise EntryProblem("an entry must be an object")
    transport = _transport(entry)
    missing: list[str] = []
    expand = lambda value: _expand(value, environ, missing)  # noqa: E731
    common = dict(name=name, transport=transport, scope=scope, source=source,
                  description=_description(entry),
                  startup_timeout_s=_timeout(entry, "startupTimeoutMs") or DEFAULT_STARTUP_TIMEOUT_S,
                  tool_timeout_s=_timeout(entry, "toolTimeoutMs"), **_override_fields(entry))
    if transport == "stdio":
        server = McpServerConfig(command=_string(entry, "command"),
                                 args=tuple(expand(a) for a in _strings(entry, "args")),
                                 env={k: expand(v) for k, v in _string_map(entry, "env").items()},
                                 cwd=_resolve_cwd(_optional_string(entry, "cwd"), cwd), **common)
    else:
        headers = {k: expand(v) for k, v in _string_map(entry, "headers").items()}
        server = McpServerConfig(url=_url(entry), headers=headers, **common)
    if missing:
        warnings.append(f"{path_text(source or 'mcp_servers')}: mcpServers.{path_text(name)}: environment variable(s) "
                        f"{', '.join(sorted(set(missing)))} not set (replaced by empty text)")
    return server


def _transport(entry: dict[str, object]) -> str:
    kind = entry.get("type")
    if kind is not None:
        if kind == "sse":
            raise EntryProblem("the SSE transport is not supported; use the server's streamable HTTP endpoint")
        if kind not in _TRANSPORTS:
            raise EntryProblem(f"type must be \"stdio\" or \"http\", got {kind!r}")
        kind = _TRANSPORTS[kind]
    has_command, has_url = "command" in entry, "url" in entry
    if has_command and has_url:
        raise EntryProblem("give either \"command\" (stdio) or \"url\" (HTTP), not both")
    if not (has_command or has_url):
        raise EntryProblem("needs \"command\" (a stdio server) or \"url\" (an HTTP server)")
    implied = "stdio" if has_command else "http"
    if kind is not None and kind != implied:
        raise EntryProblem(f"type {entry['type']!r} does not match {'command' if has_command else 'url'}")
    return implied


def _override_fields(entry: dict[str, object]) -> dict[str, object]:
    fields: dict[str, object] = {}
    if "enabled" in entry:
        if not isinstance(entry["enabled"], bool):
            raise EntryProblem("enabled must be true or false")
        fields["enabled"] = entry["enabled"]
    if "includeTools" in entry:
        fields["include_tools"] = tuple(_strings(entry, "includeTools"))
    if "excludeTools" in entry:
        fields["exclude_tools"] = tuple(_strings(entry, "excludeTools"))
    return fields


def _string(entry: dict[str, object], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise EntryProblem(f"{key} must be a non-empty string")
    return _without_nul(value, key)


def _without_nul(value: str, key: str) -> str:
    """`value`, unless it holds a NUL, which no command line, environment or header can carry (the start would
    fail as a bare "embedded null byte", again at every restart)."""
    if "\0" in value:
        raise EntryProblem(f"{key} holds a NUL character, which a command line, environment or header cannot carry")
    return value


def _optional_string(entry: dict[str, object], key: str) -> str | None:
    return _string(entry, key) if entry.get(key) is not None else None


def _strings(entry: dict[str, object], key: str) -> list[str]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise EntryProblem(f"{key} must be a list of strings")
    return [_without_nul(v, key) for v in value]


def _string_map(entry: dict[str, object], key: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise EntryProblem(f"{key} must be an object of string values")
    return {_without_nul(str(k), f"{key} name"): _without_nul(v, key) for k, v in value.items()}


def _url(entry: dict[str, object]) -> str:
    """The entry's `url`, checked as the HTTP client would: scheme http/https, a host, a port in 1-65535
    (a bad one would otherwise fail every connection attempt with a message naming neither)."""
    from urllib.parse import urlsplit

    url = _string(entry, "url")
    if not url.startswith(("http://", "https://")):
        raise EntryProblem(f"url must start with http:// or https://, got {url[:200]!r}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # a port that is not a number or out of range, a bad IPv6 literal
        raise EntryProblem(f"url {url[:200]!r} is not a valid URL ({exc})") from None
    if not parts.hostname:
        raise EntryProblem(f"url {url[:200]!r} has no host")
    if port == 0:
        raise EntryProblem(f"url {url[:200]!r}: port 0 is not a port a server listens on")
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise EntryProblem(f"url {url[:200]!r} contains whitespace or control characters")
    return url


def _timeout(entry: dict[str, object], key: str) -> float | None:
    """`entry[key]` milliseconds in seconds (None when absent)."""
    value = entry.get(key)
    if value is None:
        return None
    if not is_number(value) or value <= 0:
        raise EntryProblem(f"{key} must be a positive number of milliseconds")
    return value / 1000


def _resolve_cwd(value: str | None, base: str) -> str | None:
    if value is None:
        return None
    return str(Path(base, os.path.expanduser(value)))


def _expand(value: str, environ: Mapping[str, str], missing: list[str]) -> str:
    """`${VAR}` → the variable's value ('' and recorded in `missing` when unset)."""
    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            missing.append(name)
        return environ.get(name, "")

    return _VAR.sub(substitute, value)
