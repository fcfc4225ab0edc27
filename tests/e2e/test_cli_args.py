"""Command-line flags that cannot work together are refused with exit 2, never silently ignored."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("args, fragment", [
    (["--mode", "rpc", "hello"], "--mode rpc"),
    (["--mode", "rpc", "-p"], "--mode rpc"),
    (["--no-session", "--session", "x.jsonl", "-p", "hi"], "cannot be combined"),
    (["--no-session", "--continue", "-p", "hi"], "cannot be combined"),
    (["--session", "a.jsonl", "--fork", "b.jsonl", "-p", "hi"], "cannot be combined"),
])
def test_conflicting_flags_are_refused(args, fragment, agent_env, tmp_path):
    done = subprocess.run([sys.executable, "-m", "agent_forge", *args], env=agent_env, cwd=tmp_path,
                          capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode in (1, 2)
    assert fragment in done.stderr.decode()


def test_deleted_working_directory_is_a_clear_error(agent_env, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    script = ("import os, sys, subprocess; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
              "sys.exit(subprocess.run([sys.executable, '-m', 'agent_forge', '--mode', 'rpc'], "
              "stdin=subprocess.DEVNULL).returncode)")
    done = subprocess.run([sys.executable, "-c", script, str(gone)], env=agent_env, capture_output=True,
                          timeout=30)
    assert done.returncode == 2
    assert b"current directory no longer exists" in done.stderr
    assert b"Traceback" not in done.stderr
