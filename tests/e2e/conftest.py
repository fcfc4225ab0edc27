"""End-to-end tests run the agent in-process by default.

- RPC: `RpcClient.start` becomes `agent_forge.testing.rpc.start_in_process` (same arguments, cwd and env,
  isolated per client); a second agent started while an in-process one runs is a process too.
- ACP: `AcpClient.start` (tests/support/acp_client.py) becomes `AcpClient.start_in_process`, by the same rules.
- The command line: `subprocess.run([sys.executable, "-m", "agent_forge", *argv], ...)` becomes
  `agent_forge.testing.cli.run_cli` (same exit code, stdout and stderr) when the call only passes `cwd`,
  `env`, `input` (or `stdin=DEVNULL`), `capture_output`, `text` and `timeout`, and is not `--mode rpc` (the
  RPC framing tests read a real stdin). Any other call (a pipe or a full file as stdout, `preexec_fn`, a
  `Popen` to signal) is the real process it asks for.

Tests that need a real process anyway (signals, stdout/stdin claiming, writes to descriptor 1 by plugins or
children, start-up imports, crash safety, kill -9, a full disk, `client.process`) are marked
`@pytest.mark.real_process`."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from support.acp_client import AcpClient
from support import tui

from agent_forge.modes.rpc.client import RpcClient
from agent_forge.testing import rpc as in_process
from agent_forge.testing.cli import run_cli

terminal = tui.terminal  # the terminal UI in tmux: a fixture every e2e test may take
_spawn = RpcClient.start.__func__  # type: ignore[attr-defined]
_spawn_acp = AcpClient.start.__func__  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def rpc_in_process(request, monkeypatch):
    """`RpcClient.start` and `AcpClient.start` in-process unless the test is marked `real_process`."""
    if request.node.get_closest_marker("real_process") is not None:
        yield
        return

    async def start(cls, args=(), *, cwd=None, env=None, command=None):
        if command is not None or in_process.busy():
            return await _spawn(cls, args, cwd=cwd, env=env, command=command)
        return await in_process.start_in_process(args, cwd=cwd, env=env)

    async def start_acp(cls, args=(), *, cwd, env):
        if in_process.busy():
            return await _spawn_acp(cls, args, cwd=cwd, env=env)
        return await cls.start_in_process(args, cwd=cwd, env=env)

    monkeypatch.setattr(RpcClient, "start", classmethod(start))
    monkeypatch.setattr(AcpClient, "start", classmethod(start_acp))
    yield
    assert not in_process.busy(), "an in-process agent was left running: close its client"


_CLI = [sys.executable, "-m", "agent_forge"]
_EMULATED = frozenset({"cwd", "env", "input", "capture_output", "timeout", "stdin", "text"})
_real_run = subprocess.run


@pytest.fixture(autouse=True)
def cli_in_process(request, monkeypatch):
    """`subprocess.run` of the CLI in-process (`run_cli`) unless the test is marked `real_process`."""
    if request.node.get_closest_marker("real_process") is None:
        monkeypatch.setattr(subprocess, "run", _run)


def _run(args, **options):
    if not _emulated(args, options):
        return _real_run(args, **options)
    cwd = options.get("cwd")
    done = run_cli(list(args[len(_CLI):]), cwd=None if cwd is None else str(cwd), env=options.get("env"),
                   input=_bytes(options.get("input")), timeout=options.get("timeout"))
    done.args = list(args)
    if options.get("text"):
        done.stdout, done.stderr = done.stdout.decode(), done.stderr.decode()
    return done


def _bytes(data) -> bytes:
    return data.encode() if isinstance(data, str) else data or b""


def _emulated(args, options) -> bool:
    """Whether `subprocess.run(args, **options)` is a CLI run `run_cli` reproduces (module docstring)."""
    if not isinstance(args, (list, tuple)) or list(args[:len(_CLI)]) != _CLI or not set(options) <= _EMULATED:
        return False
    argv = [str(arg) for arg in args[len(_CLI):]]
    if "--mode=rpc" in argv or any(pair == ("--mode", "rpc") for pair in zip(argv, argv[1:])):
        return False
    if not options.get("capture_output") or options.get("stdin", subprocess.DEVNULL) != subprocess.DEVNULL:
        return False
    if in_process.busy():
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False  # an async test: the CLI's event loop cannot run inside the test's


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory (`<tmp>/project`) to run the agent in, beside the test's other files."""
    path = tmp_path / "project"
    path.mkdir()
    return path
