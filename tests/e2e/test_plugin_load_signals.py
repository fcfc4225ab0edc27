"""End to end: a plugin whose synchronous code blocks while it loads (its `setup(plugin)`, or its module's top level)
does not make the agent deaf to SIGINT, SIGTERM and SIGHUP (`plugins/loader.py` runs that code in a worker thread
the event loop awaits). Each stop ends the mode as README "Stopping" says: exit code 128 + N, one line on stderr,
no lock file left. The blocking plugin writes the agent's pid to a marker file before it blocks: the tests wait
for that file (polled within a deadline), never for a length of time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.tmux_terminal import TmuxTerminal
from support.tui import flat, needs_tmux, started

pytestmark = pytest.mark.real_process

STARTED = '''
import os
import time
from pathlib import Path


def started():
    """The agent's pid in the marker file, whole once it is there."""
    Path(MARK + ".tmp").write_text(str(os.getpid()))
    os.replace(MARK + ".tmp", MARK)
'''

BLOCKS_IN_SETUP = '''
def setup(plugin):
    started()
    time.sleep(3600)
'''

BLOCKS_IN_IMPORT = '''
started()
time.sleep(3600)


def setup(plugin):
    pass
'''

PLUGINS = {"setup": BLOCKS_IN_SETUP, "import": BLOCKS_IN_IMPORT}
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
DEADLINE_S = 30.0
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


def blocking_plugin(tmp_path: Path, where: str, mode: str = "") -> tuple[Path, Path]:
    """(the plugin file, the marker file it writes the agent's pid to before it blocks)."""
    mark = tmp_path / f"started-{where}{mode}"
    plugin = tmp_path / f"blocks_in_{where}.py"
    plugin.write_text(f"MARK = {str(mark)!r}\n" + STARTED + PLUGINS[where])
    return plugin, mark


def wait_for_start(mark: Path, proc: subprocess.Popen | None = None) -> int:
    """The agent's pid, once the plugin wrote it (it blocks from then on); fails past `DEADLINE_S`."""
    end = time.monotonic() + DEADLINE_S
    while not mark.exists():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the agent exited ({proc.returncode}) before the plugin started: "
                        f"{proc.stderr.read().decode() if proc.stderr else ''}")
        if time.monotonic() > end:
            pytest.fail(f"the plugin did not start within {DEADLINE_S} s")
        time.sleep(0.01)  # polling the file, not waiting for the agent's progress
    return int(mark.read_text())


def no_lock_files(env: dict) -> list[Path]:
    return list(Path(env["HOME"]).rglob("*.lock"))


MODES = {"rpc": ["--mode", "rpc"], "print": ["-p", "hi"], "json": ["--mode", "json", "-p", "hi"],
         "acp": ["--mode", "acp"]}
SERVED_LINE = {"acp": "Stopped by {}."}  # ACP serves from its `initialize` answer; the others are starting up


def spawn(env: dict, cwd: Path, mode: str, plugin: Path) -> subprocess.Popen:
    """The agent in `mode`; RPC's and ACP's stdin stays open: the end of input is not what stops them."""
    proc = subprocess.Popen([sys.executable, "-m", "agent_forge", *MODES[mode], "-e", str(plugin)],
                            stdin=subprocess.PIPE if mode in ("rpc", "acp") else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    if mode == "acp":  # plugins load with a session
        new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(cwd), "mcpServers": []}}
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in (INITIALIZE, new)))
        proc.stdin.flush()
    return proc


# every mode with both plugins, every signal in both places and in three modes (one path for them all:
# the loop's own stop handling, free while the plugin's code runs in its thread; suite time is issue 11's)
CASES = [(where, mode, SIGNALS[(n + (where == "import")) % len(SIGNALS)])
         for where in sorted(PLUGINS) for n, mode in enumerate(sorted(MODES))]


@pytest.mark.parametrize("where,mode,signum", CASES,
                         ids=[f"{w}-{m}-{signal.Signals(s).name}" for w, m, s in CASES])
def test_a_stop_signal_ends_a_mode_whose_plugin_blocks_while_it_loads(agent_env, tmp_path, where, mode, signum):
    project = tmp_path / "project"
    project.mkdir()
    plugin, mark = blocking_plugin(tmp_path, where, mode)
    proc = spawn(agent_env, project, mode, plugin)
    try:
        assert wait_for_start(mark, proc) == proc.pid
        proc.send_signal(signum)
        try:
            out, err = proc.communicate(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{signal.Signals(signum).name} did not end the agent within {DEADLINE_S} s")
    finally:
        proc.kill()
        proc.wait()
    name = signal.Signals(signum).name
    expected = SERVED_LINE.get(mode, "Stopped by {} during start-up.").format(name)
    assert proc.returncode == 128 + signum, err.decode()
    assert err.decode() == f"agent-forge: {expected}\n"
    assert all(json.loads(line) for line in out.splitlines()) or mode == "print", out
    assert not no_lock_files(agent_env)


def test_rpc_mode_with_stdin_at_its_end_hears_a_stop_while_a_setup_blocks(agent_env, tmp_path):
    """The tester's command line: `--mode rpc -e plugin.py </dev/null`."""
    plugin, mark = blocking_plugin(tmp_path, "setup")
    proc = subprocess.Popen([sys.executable, "-m", "agent_forge", "--mode", "rpc", "-e", str(plugin)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=agent_env,
                            cwd=tmp_path)
    try:
        wait_for_start(mark, proc)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=DEADLINE_S)
    finally:
        proc.kill()
        proc.wait()
    assert (proc.returncode, err) == (143, b"agent-forge: Stopped by SIGTERM during start-up.\n")
    assert not no_lock_files(agent_env)


# -- the interactive mode: the plugins load behind the first paint, and again at `/reload` -------------------

def tui(env: dict, cwd: Path, *args: str) -> TmuxTerminal:
    term = TmuxTerminal(env, cwd, *args)
    term.wait_for("fake-model •")  # painted: the plugins load behind it
    return term


def close(term: TmuxTerminal, mark: Path) -> None:
    """Close the terminal; an agent deaf to the stop (the defect) is killed, not left behind."""
    term.close()
    if mark.exists():
        try:
            os.kill(int(mark.read_text()), signal.SIGKILL)
        except ProcessLookupError:
            pass


@needs_tmux
@pytest.mark.parametrize("where,signum", [("setup", signal.SIGTERM), ("import", signal.SIGHUP)],
                         ids=["setup-SIGTERM", "import-SIGHUP"])
def test_a_stop_signal_ends_the_interactive_mode_while_a_plugin_blocks_at_start_up(agent_env, tmp_path, where,
                                                                                  signum):
    work = tmp_path / "work"
    work.mkdir()
    plugin, mark = blocking_plugin(tmp_path, where)
    term = tui(agent_env, work, "-e", str(plugin))
    try:
        pid = wait_for_start(mark)
        os.kill(pid, signum)
        assert term.exit_code() == 128 + signum
        assert term.scrollback().split() == [f"__EXIT={128 + signum}"]  # the screen restored, no traceback
        assert not no_lock_files(agent_env)
    finally:
        close(term, mark)


RELOADS = '''
def setup(plugin):
    if Path("hold-setup").exists():
        started()
        time.sleep(3600)

    @plugin.command("hello")
    def hello(args, ctx):
        ctx.ui.notify("hello from the plugin")
'''


@needs_tmux
def test_escape_stops_a_reload_whose_sync_setup_blocks_and_sigterm_ends_one(agent_env, tmp_path):
    """`/reload` runs the setups anew: one that blocks can be stopped by Escape (the old plugin stays) and does
    not make the agent deaf to SIGTERM."""
    work = tmp_path / "work"
    work.mkdir()
    mark = tmp_path / "started"
    plugin = tmp_path / "holding.py"
    plugin.write_text(f"MARK = {str(mark)!r}\n" + STARTED + RELOADS)
    term = tui(agent_env, work, "-e", str(plugin))
    try:
        started(term)
        (work / "hold-setup").touch()
        term.type("/reload")
        term.press("Enter")
        pid = wait_for_start(mark)
        term.press("Escape")
        term.wait_until(lambda: "the setup of holding was stopped, the plugins stay as they were" in flat(term),
                        "the reload's notice")
        term.type("/hello")
        term.press("Enter")
        term.wait_for("hello from the plugin")  # the plugin running before answers
        mark.unlink()
        term.type("/reload")
        term.press("Enter")
        assert wait_for_start(mark) == pid
        os.kill(pid, signal.SIGTERM)
        assert term.exit_code() == 143
        assert not no_lock_files(agent_env)
    finally:
        close(term, mark)
