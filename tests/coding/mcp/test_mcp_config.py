"""mcp.json: the entry shapes, `${VAR}` expansion, user and project files, overrides and the reported problems."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_forge.coding.mcp.config import DEFAULT_STARTUP_TIMEOUT_S, load_mcp_config, parse_servers


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def dirs(tmp_path):
    return tmp_path / "project", tmp_path / "agent"


def load(dirs, project_allowed=True, environ=None):
    cwd, agent = dirs
    return load_mcp_config(str(cwd), agent, project_allowed=project_allowed, environ=environ or {})


def test_stdio_and_http_entries_with_variables(dirs):
    cwd, agent = dirs
    write(agent / "mcp.json", {"mcpServers": {
        "fs": {"command": "~/bin/fs", "args": ["--root", "${ROOT}"], "env": {"TOKEN": "t-${KEY}"}, "cwd": "sub",
               "description": "files", "startupTimeoutMs": 2500, "includeTools": ["read*"], "excludeTools": ["readme"]},
        "docs": {"type": "streamable-http", "url": "https://example.com/mcp",
                 "headers": {"Authorization": "Bearer ${KEY}"}, "enabled": False}}})
    servers, warnings = load(dirs, environ={"ROOT": "/r", "KEY": "k"})
    fs, docs = servers
    assert warnings == []
    assert (fs.transport, fs.command, fs.args, dict(fs.env), fs.cwd) == ("stdio", "~/bin/fs", ("--root", "/r"),
                                                                          {"TOKEN": "t-k"}, str(cwd / "sub"))
    assert (fs.description, fs.startup_timeout_s, fs.scope, fs.source) == ("files", 2.5, "user",
                                                                          str(agent / "mcp.json"))
    assert fs.admits("read_file") and not fs.admits("readme") and not fs.admits("write")
    assert (docs.transport, docs.url, dict(docs.headers), docs.enabled) == ("http", "https://example.com/mcp",
                                                                          {"Authorization": "Bearer k"}, False)
    assert docs.startup_timeout_s == DEFAULT_STARTUP_TIMEOUT_S and docs.admits("anything")


def test_project_entries_replace_or_override_user_entries_only_when_allowed(dirs):
    cwd, agent = dirs
    write(agent / "mcp.json", {"mcpServers": {"a": {"command": "a", "env": {"K": "v"}}, "b": {"command": "b"}}})
    write(cwd / ".agent-forge" / "agent" / "mcp.json", {"mcpServers": {
        "a": {"enabled": False, "excludeTools": ["x"]}, "b": {"url": "http://127.0.0.1:1/mcp"},
        "c": {"command": "c"}, "ghost": {"enabled": True}}})
    servers, warnings = load(dirs)
    by_name = {s.name: s for s in servers}
    assert [s.name for s in servers] == ["a", "b", "c"]
    assert by_name["a"].enabled is False and by_name["a"].exclude_tools == ("x",)
    assert dict(by_name["a"].env) == {"K": "v"}  # the override keeps the rest of the user entry
    assert by_name["a"].scope == "user" and by_name["b"].scope == "project" and by_name["b"].transport == "http"
    assert len(warnings) == 1 and "mcpServers.ghost: only overrides enabled, but no user server" in warnings[0]
    untrusted, _ = load(dirs, project_allowed=False)
    assert [(s.name, s.enabled, s.transport) for s in untrusted] == [("a", True, "stdio"), ("b", True, "stdio")]


@pytest.mark.parametrize("entry, problem", [
    ({"args": []}, 'needs "command" (a stdio server) or "url"'),
    ({"command": "x", "url": "http://h"}, "not both"),
    ({"type": "sse", "url": "http://h/sse"}, "SSE transport is not supported"),
    ({"type": "stdio", "url": "http://h"}, "does not match url"),
    ({"command": "x", "args": "--flag"}, "args must be a list of strings"),
    ({"command": "x", "env": {"A": 1}}, "env must be an object of string values"),
    ({"url": "ftp://h"}, "url must start with http:// or https://"),
    ({"url": "http://h:99999/mcp"}, "url 'http://h:99999/mcp' is not a valid URL (Port out of range"),
    ({"url": "http://:80/"}, "url 'http://:80/' has no host"),
    ({"url": "http://h:0/"}, "port 0 is not a port a server listens on"),
    ({"url": "http://h /x"}, "contains whitespace or control characters"),
    ({"command": "x", "enabled": "yes"}, "enabled must be true or false"),
    ({"command": "x", "startupTimeoutMs": 1e400}, "startupTimeoutMs must be a positive number"),
    ({"command": ""}, "command must be a non-empty string"),
    ("npx server", "an entry must be an object"),
])
def test_bad_entries_are_skipped_with_the_file_the_name_and_the_problem(dirs, entry, problem):
    _, agent = dirs
    path = write(agent / "mcp.json", {"mcpServers": {"bad": entry, "good": {"command": "g"}}})
    servers, warnings = load(dirs)
    assert [s.name for s in servers] == ["good"]
    assert len(warnings) == 1 and warnings[0].startswith(f"{path}:1: mcpServers.bad: ") and problem in warnings[0]
    assert warnings[0].endswith("; skipped")


@pytest.mark.parametrize("text, problem", [
    ("{not json", "invalid JSON"), ("[1, 2]", 'expected a JSON object with "mcpServers"'),
    ('{"mcpServers": []}', '"mcpServers" must be an object'),
])
def test_bad_files_are_reported_with_their_path(dirs, text, problem):
    _, agent = dirs
    path = write(agent / "mcp.json", text)
    servers, warnings = load(dirs)
    assert servers == [] and len(warnings) == 1 and warnings[0].startswith(str(path)) and problem in warnings[0]


def test_names_unknown_fields_and_unset_variables(dirs):
    _, agent = dirs
    write(agent / "mcp.json", {"mcpServers": {"has space": {"command": "x"}, "ok": {"command": "x", "typo": 1,
                                                                                   "args": ["${NOPE}"]}}})
    servers, warnings = load(dirs)
    assert [s.name for s in servers] == ["ok"] and servers[0].args == ("",)
    assert any("mcpServers.has space: a server name has 1 to 64 letters" in w for w in warnings)
    assert any("unknown field(s) typo ignored" in w for w in warnings)
    assert any("environment variable(s) NOPE not set" in w for w in warnings)


def test_sdk_servers_take_either_form():
    inner, warnings = parse_servers({"s": {"command": "x"}})
    outer, _ = parse_servers({"mcpServers": {"s": {"url": "http://127.0.0.1:9/mcp"}}})
    assert warnings == [] and inner[0].scope == "sdk" and inner[0].transport == "stdio"
    assert outer[0].transport == "http" and outer[0].source is None


def test_a_server_written_twice_is_a_warning_and_the_last_entry_counts(dirs):
    cwd, agent = dirs
    user = write(agent / "mcp.json", '{"mcpServers": {\n "fs": {"command": "old"},\n "fs": {"command": "new"}}}')
    project = write(cwd / ".agent-forge" / "agent" / "mcp.json",
                    '{"mcpServers": {"git": {"command": "g", "args": ["a"], "args": ["b"]}}}')
    servers, warnings = load(dirs)
    assert [(s.name, s.command, s.args) for s in servers] == [("fs", "new", ()), ("git", "g", ("b",))]
    assert warnings == [
        f'{user}:3: mcpServers: duplicate key "fs" (lines 2 and 3); only the last one (line 3) is used, the earlier '
        "one ignored",
        f'{project}:1: mcpServers.git: duplicate key "args" (line 1 column 41 and line 1 column 56); only the last '
        "one (line 1 column 56) is used, the earlier one ignored"]


def test_an_entry_problem_names_the_line_of_the_entry(dirs):
    _, agent = dirs
    path = write(agent / "mcp.json", json.dumps({"mcpServers": {"good": {"command": "g"}, "web": {
        "url": "http://127.0.0.1:99999/mcp"}, "odd": {"command": "x", "colour": 1}}}, indent=2))
    servers, warnings = load(dirs)
    assert [s.name for s in servers] == ["good", "odd"]
    assert warnings[0].startswith(f"{path}:6: mcpServers.web: url 'http://127.0.0.1:99999/mcp' is not a valid URL")
    assert warnings[1] == f"{path}:9: mcpServers.odd: unknown field(s) colour ignored"
