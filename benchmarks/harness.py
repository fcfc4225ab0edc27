"""What the benchmarks share: an RPC-mode agent process spoken to over pipes, its memory figures, the
agent dir pointing at the loopback model server, and a realistic session file written through the real store.

`RpcProcess` takes any command line, so the same measurements run against agent-forge and against the
reference agent (`compare_reference.py`).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
HEAD_BYTES = 400
READ_BUFFER = 1 << 20
TESTS = ROOT / "tests"
for _path in (str(TESTS), str(ROOT / "src")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from conftest import write_models_json  # noqa: E402
from support.fake_llm import FakeLLMServer  # noqa: E402

from agent_forge.coding.session.store import SessionStore  # noqa: E402


def agent_command() -> list[str]:
    """agent-forge through the venv's console script (DESIGN.md: the `python3` shim on PATH adds ~70 ms)."""
    script = Path(sys.executable).with_name("agent-forge")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agent_forge"]


def write_agent_dir(agent_dir: Path, server: FakeLLMServer) -> Path:
    """`agent_dir` with models.json naming `server` as provider `fake` and settings.json choosing it (the
    reference agent reads the same two files)."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    write_models_json(agent_dir, server)
    (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "fake", "defaultModel": "fake-model"}))
    return agent_dir


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without provider keys or agent settings, plus `extra`. Without
    PYTHONDONTWRITEBYTECODE too: with it, every start compiles each module whose bytecode is not cached yet
    (an installed package has it; a working tree after an edit does not), which is not what users run."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"
           and not k.endswith("_API_KEY") and not k.startswith(("AGENT_FORGE", "PI_"))}
    env.update(extra)
    return env


class RpcProcess:
    """One RPC-mode agent process: `command + args`, records read line by line from its stdout."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path | str) -> None:
        self.started = time.perf_counter()
        # A 1 MiB read buffer: with the default 8 KiB one, reading a multi-MB answer line is hundreds of reads
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=cwd, bufsize=READ_BUFFER)

    def send(self, command: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command).encode() + b"\n")
        self.proc.stdin.flush()

    def read_line(self) -> bytes:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"agent exited: {self.proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        return line

    def ask(self, command: dict[str, Any], parse: bool = True) -> tuple[dict[str, Any] | None, int]:
        """Send `command` (given an id here) and return its successful response and its line's size in bytes;
        events before it are skipped. `parse=False`: the response is found by its id's text and not parsed
        (None is returned), so that timing a large answer does not time this reader's `json.loads`."""
        request_id = command.setdefault("id", f"b{time.monotonic_ns()}")
        self.send(command)
        marker = json.dumps(request_id).encode()
        while True:
            line = self.read_line()
            if not parse:
                # Both agents write a response's id, type and success before its data: look at the line's head
                # (on the whole 2.4 MB line of a get_messages these checks cost this reader ~1 ms)
                head = line[:HEAD_BYTES] if len(line) > HEAD_BYTES and marker in line[:HEAD_BYTES] else line
                if marker in head and b'"response"' in head:
                    assert b'"success":true' in head.replace(b" ", b""), line[:500]
                    return None, len(line)
                continue
            record = json.loads(line)
            if record.get("type") == "response" and record.get("id") == request_id:
                assert record.get("success"), record
                return record, len(line)

    def read_until(self, done: Callable[[bytes], bool], seen: Callable[[bytes], None] = lambda line: None) -> None:
        """Read lines, passing each to `seen`, up to and including the first for which `done` is true."""
        while True:
            line = self.read_line()
            seen(line)
            if done(line):
                return

    def peak_rss_kib(self) -> int:
        return _status_kib(self.proc.pid, "VmHWM:")

    def rss_kib(self) -> int:
        return _status_kib(self.proc.pid, "VmRSS:")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return -1


def make_session(directory: Path, entries: int, cwd: Path | None = None) -> tuple[Path, list[str]]:
    """A session of `entries` entries (~600 bytes a line: user, assistant with a tool call and tool result
    messages in turn) written through the real store for `cwd` (default `<directory>/project`); returns its
    path and entry ids."""
    rng = random.Random(entries)
    store = SessionStore.create(cwd or directory / "project", directory / "sessions")
    store.append_model_change("fake", "fake-model")
    store.append_thinking_level_change("medium")
    words = "the quick brown fox jumps over a lazy dog while reading session files".split()
    for i in range(entries - 2):
        store.append_message(_message(i, " ".join(rng.choice(words) for _ in range(60))))
    store.close()
    return store.path, [entry["id"] for entry in store.entries]


def _message(i: int, text: str) -> dict[str, Any]:
    kind = i % 3
    if kind == 0:
        return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": i}
    if kind == 1:
        return {"role": "assistant", "content": [
            {"type": "text", "text": text[:200]},
            {"type": "toolCall", "id": f"call_{i}", "name": "read", "arguments": {"path": f"src/f{i}.py"}}],
            "api": "openai-completions", "provider": "fake", "model": "fake-model", "stopReason": "toolUse",
            "usage": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "timestamp": i}
    return {"role": "toolResult", "toolCallId": f"call_{i - 1}", "toolName": "read",
            "content": [{"type": "text", "text": text}], "isError": False, "timestamp": i}
