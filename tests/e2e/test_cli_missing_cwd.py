"""End to end: every command of the CLI in a current directory that was deleted under it (`mkdir d; cd d;
rmdir ../d`): one `agent-forge: the current directory no longer exists` line and exit code 2 where the
command needs the directory, and a normal run where it does not (`--version`, `--help`, `mcp add` to the agent
dir, `--export` with absolute paths)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.real_process  # a process whose cwd is gone: an in-process run cannot chdir there

GONE = "agent-forge: the current directory no longer exists\n"


def run_in_deleted_dir(args, env, tmp_path):
    """`agent-forge <args>` started in a directory removed just before (the shell's `cd` happened first)."""
    script = 'mkdir gone && cd gone && rmdir ../gone && exec "$@"'
    return subprocess.run(["sh", "-c", script, "sh", sys.executable, "-m", "agent_forge", *args], cwd=tmp_path,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


NEEDS_CWD = [["--list-sessions"], ["--list-sessions", "--json"], ["--list-models"], ["--trust-project"],
             ["--distrust-project"], ["mcp", "list"], ["mcp", "add", "-l", "x", "--", "true"],
             ["mcp", "remove", "-l", "x"], ["-p", "hi"], ["--mode", "json", "hi"], ["--mode", "rpc"],
             ["--mode", "acp"], ["--export", "some-id"], ["--export", "/nowhere.jsonl"],
             ["--export", "/nowhere.jsonl", "out.html"], ["-c", "-p", "hi"]]


@pytest.mark.parametrize("args", NEEDS_CWD, ids=" ".join)
def test_a_command_that_needs_the_directory_says_it_is_gone(args, agent_env, tmp_path):
    done = run_in_deleted_dir(args, agent_env, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", GONE)


def test_commands_that_do_not_need_it_still_work(agent_env, tmp_path):
    version = run_in_deleted_dir(["--version"], agent_env, tmp_path)
    help_text = run_in_deleted_dir(["--help"], agent_env, tmp_path)
    mcp_help = run_in_deleted_dir(["mcp", "--help"], agent_env, tmp_path)
    added = run_in_deleted_dir(["mcp", "add", "x", "--", "true"], agent_env, tmp_path)
    for done in (version, help_text, mcp_help, added):
        assert done.returncode == 0 and done.stderr == "", done
    assert version.stdout == "0.1.0\n" and "--list-sessions" in help_text.stdout
    assert added.stdout.startswith("Added MCP server x in ")


def test_export_with_absolute_paths_needs_no_directory(agent_env, tmp_path):
    session = tmp_path / "s.jsonl"
    out = tmp_path / "page.html"
    session.write_text('{"type":"session","version":3,"id":"abc","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n'
                       '{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01Z",'
                       '"message":{"role":"user","content":"hello there","timestamp":1}}\n')
    done = run_in_deleted_dir(["--export", str(session), str(out)], agent_env, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{out}\n", "")
    assert "hello there" in out.read_text()
