"""End to end: a context file reached twice (the working directory is the agent dir, or a link leads to it) is
read and reported once: its warning was printed twice when `-p` ran in the agent dir."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "agent_forge"]


def big_agents_md(directory: Path) -> None:
    (directory / "AGENTS.md").write_text("Be brief.\n" + "x" * (300 * 1024))


@pytest.mark.parametrize("how", ["agent dir", "link to it"])
def test_the_warning_of_a_context_file_reached_twice_is_said_once(how, agent_env, fake_llm, tmp_path):
    agent = Path(agent_env["AGENT_FORGE_DIR"])
    big_agents_md(agent)
    cwd = agent
    if how == "link to it":
        cwd = tmp_path / "linked"
        os.symlink(agent, cwd)
    fake_llm.set_script([{"text": "ok"}])
    done = subprocess.run([*CLI, "-p", "hi"], cwd=cwd, env=agent_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "context file is larger than 256 KB" in line]
    assert len(warned) == 1, done.stderr
    system = fake_llm.requests[0]["body"]["messages"][0]["content"]
    assert system.count("Be brief.") == 1


@pytest.mark.parametrize("trust", [[], ["-a"]])
def test_in_the_home_directory_the_agent_dir_mcp_json_is_no_project_file(trust, agent_env, fake_llm, tmp_path):
    """In the home directory `<cwd>/.agent-forge/agent` is the agent dir: its mcp.json is read once (its problem
    said once) and is not reported as an untrusted project's file."""
    agent = Path(agent_env["AGENT_FORGE_DIR"])
    (agent / "mcp.json").write_text('{"mcpServers": {"d": {"command": "/nonexist"}}, }')
    fake_llm.set_script([{"text": "ok"}])
    done = subprocess.run([*CLI, *trust, "-p", "hi"], cwd=agent.parent.parent, env=agent_env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("mcp.json: invalid JSON at line 1") == 1, done.stderr
    assert "project MCP servers" not in done.stderr
