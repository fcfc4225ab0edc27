"""End to end: the search tools walk a project holding a FIFO (a dev container's pipe, a test fixture) and a
`.gitignore` that is one: they skip them instead of waiting for a writer for ever (round 4: the agent could then
not even be stopped)."""

from __future__ import annotations

import json
import os

from e2e.test_print_mode import run


def tool_result_texts(fake_llm) -> list[str]:
    tools = [m for m in fake_llm.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in tools]


def test_grep_skips_fifos_and_a_fifo_gitignore(agent_env, fake_llm, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "sub" / ".gitignore")
    (tmp_path / "a.txt").write_text("hello there\n")
    (tmp_path / "sub" / "b.txt").write_text("hello again\n")
    fake_llm.set_script([{"tool_calls": [{"name": "grep", "arguments": {"pattern": "hello"}}]}, {"text": "fin"}])
    result = run(agent_env, tmp_path, "-p", "--tools", "grep", "find hello", timeout=60)
    assert result.returncode == 0, result.stderr
    [found] = tool_result_texts(fake_llm)
    assert "a.txt:1: hello there" in found and "b.txt:1: hello again" in found, found


STUCK_THREAD = r"""
import asyncio, os, sys
from agent_forge.cli_loop import leave_stuck_threads, run_loop

async def mode():
    blocked = asyncio.ensure_future(asyncio.to_thread(open, sys.argv[1], "rb"))  # a FIFO: waits for a writer
    await asyncio.wait({blocked}, timeout=0.2)  # the mode ends (a signal, say) with the thread still blocked
    print("mode done", flush=True)
    return 3

code = run_loop(mode())
leave_stuck_threads(code)
raise SystemExit(code)
"""


def test_a_worker_thread_blocked_in_the_kernel_does_not_keep_the_process(tmp_path):
    """Round 4: the interpreter joined a tool thread blocked on a FIFO at exit, for ever (SIGTERM, SIGINT and
    stdin EOF all ended the mode, and the process stayed)."""
    import subprocess
    import sys

    os.mkfifo(tmp_path / "pipe")
    env = {**os.environ, "AGENT_FORGE_CANCEL_GRACE_MS": "100"}  # the exit's wait for the thread: not under test
    result = subprocess.run([sys.executable, "-c", STUCK_THREAD, str(tmp_path / "pipe")], capture_output=True,
                            env=env, timeout=30)
    assert result.returncode == 3 and result.stdout == b"mode done\n", result.stderr
