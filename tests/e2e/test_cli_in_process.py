"""The in-process command line the end-to-end tests run (`agent_forge.testing.cli.run_cli`, put in place of
`subprocess.run` by tests/e2e/conftest.py): it gives what the process gives, and leaves the test's process as
it found it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.testing.cli import run_cli

pytestmark = pytest.mark.real_process  # `subprocess.run` here is the real one: the reference to compare with


def real(env, cwd, *args, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=stdin,
                          capture_output=True, timeout=60)


CASES = [
    ("answer", ["--no-session", "-p", "hi"], b""),
    ("piped prompt", ["--no-session", "-p", "review this"], b"DIFF\n"),
    ("json events", ["--no-session", "--mode", "json", "hi"], b""),
    ("version", ["--version"], b""),
    ("usage error", ["--mode", "json", "--json", "hi"], b""),
    ("no prompt", ["--no-session", "-p"], b""),
    ("unknown model", ["--no-session", "--model", "nope/none", "-p", "hi"], b""),
    ("list sessions", ["--list-sessions", "--json"], b""),
]


@pytest.mark.parametrize("name, args, stdin", CASES, ids=[case[0] for case in CASES])
def test_in_process_runs_give_what_the_process_gives(name, args, stdin, agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "An answer."}, {"text": "An answer."}])
    expected = real(agent_env, tmp_path, *args, stdin=stdin)
    got = run_cli(args, cwd=str(tmp_path), env=agent_env, input=stdin, timeout=60)
    assert got.returncode == expected.returncode, (got.stderr, expected.stderr)
    assert got.stderr == expected.stderr
    if "json" in args and "--list-sessions" not in args and expected.stdout:
        def shape(stdout: bytes) -> list[str]:
            return [json.loads(line)["type"] for line in stdout.splitlines()]

        assert shape(got.stdout) == shape(expected.stdout)  # ids and timestamps differ
    else:
        assert got.stdout == expected.stdout
    if name == "piped prompt":
        assert [json.dumps(r["body"]["messages"][-1]).count("DIFF\\nreview this") for r in fake_llm.requests] == [1, 1]


def process_state():
    return (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr,
            [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM)])


def test_a_run_leaves_the_environment_cwd_streams_and_signals_as_they_were(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "done"}])
    before = process_state()
    done = run_cli(["-p", "hi"], cwd=str(tmp_path), env={**agent_env, "ONLY_IN_THE_RUN": "1"}, timeout=60)
    assert done.returncode == 0 and done.stdout == b"done\n", done.stderr
    assert process_state() == before and "ONLY_IN_THE_RUN" not in os.environ
    lock_files = list(Path(agent_env["HOME"]).rglob("*.lock"))
    assert lock_files == []  # the session was closed: its lock released, not merely dropped by the harness


def test_a_run_past_its_timeout_raises_and_the_next_run_works(agent_env, fake_llm, tmp_path):
    settings = Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "pluginSetupTimeoutMs": 600000}))
    (tmp_path / "hangs.py").write_text("import asyncio\n\nasync def setup(plugin):\n    await asyncio.Event().wait()\n")
    before = process_state()
    with pytest.raises(subprocess.TimeoutExpired):
        run_cli(["--no-session", "-p", "-e", "hangs.py", "hi"], cwd=str(tmp_path), env=agent_env, timeout=0.5)
    assert process_state() == before
    fake_llm.set_script([{"text": "next"}])
    done = run_cli(["--no-session", "-p", "hi"], cwd=str(tmp_path), env=agent_env, timeout=60)
    assert (done.returncode, done.stdout) == (0, b"next\n"), done.stderr
