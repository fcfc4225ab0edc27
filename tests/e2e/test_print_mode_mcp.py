"""End to end: `-p` shows no events, so an MCP server the prompt runs without is said on stderr, once, in the
words of its `mcp_server_changed` event; the answer still came, so the exit code stays 0 (docs/mcp.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")
CLI = [sys.executable, "-m", "agent_forge"]


def write_mcp(env: dict, servers: dict) -> None:
    (Path(env["AGENT_FORGE_DIR"]) / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_a_server_that_cannot_start_is_said_once_on_stderr(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"d": {"command": "/nonexist"}, "q": {"command": sys.executable, "args": [SERVER, "exit"]}})
    fake_llm.set_script([{"text": "first"}, {"text": "second"}])
    done = subprocess.run([*CLI, "-p", "one", "two"], cwd=tmp_path, env=agent_env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout == "second\n"
    lines = done.stderr.splitlines()
    assert [line for line in lines if "MCP server d" in line] == [
        "agent-forge: MCP server d is not ready (failed: cannot start /nonexist: No such file or directory); "
        "this prompt runs without its tools (print mode does not wait for it to restart)"]
    assert "restarting in" not in done.stderr  # print mode ends without waiting for any restart
    assert len([line for line in lines if line.startswith("agent-forge: MCP server q is not ready (failed")]) == 1


def test_a_server_still_starting_when_the_wait_ends_is_said_without_a_restart(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"mute": {"command": sys.executable, "args": [SERVER, "hang-init"], "startupTimeoutMs": 300}})
    fake_llm.set_script([{"text": "answered"}])
    done = subprocess.run([*CLI, "-p", "hi"], cwd=tmp_path, env=agent_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "answered\n", done.stderr
    (told,) = [line for line in done.stderr.splitlines() if "MCP server mute" in line]
    assert told.startswith("agent-forge: MCP server mute is not ready (starting")
    assert told.endswith("this prompt runs without its tools (print mode does not wait longer for it to start)")


def test_a_server_that_crashes_during_the_run_is_said(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"tools": {"command": sys.executable, "args": [SERVER, "normal"]}})
    fake_llm.set_script([{"tool_calls": [{"name": "tools_crash", "arguments": {}}]}, {"text": "done"}])
    done = subprocess.run([*CLI, "-p", "crash it"], cwd=tmp_path, env=agent_env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout == "done\n"
    told = [line for line in done.stderr.splitlines() if line.startswith("agent-forge: MCP server tools failed: ")]
    assert len(told) == 1 and "the server exited" in told[0]
    assert "restarting in" not in told[0] and told[0].endswith("(print mode does not wait for it to restart)")
    assert "is not ready" not in done.stderr  # it was connected when the run started: nothing said then


def test_json_mode_keeps_it_in_its_events(agent_env, fake_llm, tmp_path):
    write_mcp(agent_env, {"d": {"command": "/nonexist"}})
    fake_llm.set_script([{"text": "ok"}])
    done = subprocess.run([*CLI, "--mode", "json", "hi"], cwd=tmp_path, env=agent_env, capture_output=True,
                          text=True, timeout=60)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and "MCP server" not in done.stderr
    assert any(e["type"] == "mcp_server_changed" and "this prompt runs without its tools" in e.get("message", "")
               for e in events)


def test_a_command_with_a_newline_or_tab_is_written_escaped_on_one_line(agent_env, fake_llm, tmp_path):
    env = agent_env  # one env for add, list and the prompt
    for name, command in (("nl", "tr\nue"), ("tab", "tr\tue")):
        added = subprocess.run([*CLI, "mcp", "add", name, "--", command], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=60)
        assert added.returncode == 0, added.stderr
    listed = subprocess.run([*CLI, "mcp", "list"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    fake_llm.set_script([{"text": "answered"}])
    done = subprocess.run([*CLI, "-p", "hi"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "answered\n", done.stderr
    for name, shown in (("nl", "tr\\nue"), ("tab", "tr\\tue")):
        said = [line for line in done.stderr.splitlines() if line.startswith(f"agent-forge: MCP server {name} ")]
        assert said == [f"agent-forge: MCP server {name} is not ready (failed: cannot start {shown}: No such file or "
                        "directory); this prompt runs without its tools (print mode does not wait for it to restart)"]
        row = next(line for line in listed.stdout.splitlines() if line.startswith(name + " "))
        assert row.endswith(f"cannot start {shown}: No such file or directory"), listed.stdout
