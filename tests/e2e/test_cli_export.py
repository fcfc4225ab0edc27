"""End to end: `agent-forge --export SESSION [OUT]` takes what `--session` takes (a file, a full or partial id of
this directory) and `-` as OUT writes the page to stdout."""

from __future__ import annotations

import json
import subprocess
import sys

CLI = [sys.executable, "-m", "agent_forge"]


def one_session(agent_env, fake_llm, project):
    """Run one `-p` prompt in `project`; the session's id from `--list-sessions --json`."""
    fake_llm.set_script([{"text": "the answer is 42"}])
    done = subprocess.run([*CLI, "-p", "question"], cwd=project, env=agent_env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    listed = subprocess.run([*CLI, "--list-sessions", "--json"], cwd=project, env=agent_env, capture_output=True,
                            timeout=60)
    (info,) = json.loads(listed.stdout)
    return info


def test_export_by_full_and_partial_id(agent_env, fake_llm, tmp_path):
    info = one_session(agent_env, fake_llm, tmp_path)
    for reference, out in ((info["id"], "full.html"), (info["id"][:8], "partial.html")):
        done = subprocess.run([*CLI, "--export", reference, out], cwd=tmp_path, env=agent_env, capture_output=True,
                              text=True, timeout=60)
        assert (done.returncode, done.stdout, done.stderr) == (0, f"{tmp_path / out}\n", "")
        assert "the answer is 42" in (tmp_path / out).read_text()


def test_export_to_stdout_with_a_dash(agent_env, fake_llm, tmp_path):
    info = one_session(agent_env, fake_llm, tmp_path)
    done = subprocess.run([*CLI, "--export", info["path"], "-"], cwd=tmp_path, env=agent_env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("<!DOCTYPE html>") and "the answer is 42" in done.stdout
    assert not (tmp_path / "-").exists()


def test_export_of_an_unknown_id_says_so(agent_env, fake_llm, tmp_path):
    one_session(agent_env, fake_llm, tmp_path)
    done = subprocess.run([*CLI, "--export", "zzzz-no-such", "-"], cwd=tmp_path, env=agent_env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("agent-forge: No session found matching 'zzzz-no-such'")
