"""Fault injection: writers killed with SIGKILL at random moments, hundreds of times; every entry a writer
acknowledged is in the file, in order and intact, and every file reopens (lock included) and takes appends.

Writers are forked from a zygote process that imported the real store once, so a run costs a fork instead of
an interpreter start (200+ runs fit in well under a minute on two cores). Each run, seeded, is one of:
`new` (create a session, lazily written), `resume` (reopen the previous run's file: a torn tail, a stale lock
file), `migrate` (open a version-2 file: the first append rewrites it). The writer appends entries of every
kind and size (up to 600 KB lines, so writes can be torn), sometimes branches, sometimes fsyncs, and prints
`ok <id>` after each append returns. The test kills it after a random number of acknowledgements (or before
the first), then checks the file. Set AGENT_FORGE_CRASH_RUNS to run more.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from agent_forge.coding.session.store import SessionStore

RUNS = int(os.environ.get("AGENT_FORGE_CRASH_RUNS", "240"))
BODY = "\u00e9\u2028"  # multi-byte and a JSON-significant line separator: a torn line is never valid by luck

ZYGOTE = r"""
import json, os, random, sys
from agent_forge.coding.session.store import SessionStore

BODY = "\u00e9\u2028"

def say(text):
    os.write(1, (text + "\n").encode())

def append_something(store, rng, i):
    kind = rng.random()
    if kind < 0.65 or not store.entry_count:
        size = rng.choice([1, 40, 2_000, 20_000, 300_000] if rng.random() < 0.05 else [1, 40, 2_000])
        role = rng.choice(["user", "assistant", "toolResult"])
        return [store.append_message({"role": role, "content": f"{i}:" + BODY * size, "timestamp": i})]
    if kind < 0.72:
        store.set_leaf(rng.choice(store.entries)["id"])  # branch: nothing written
        return []
    earlier = rng.choice(store.entries)["id"]
    options = [lambda: store.append_label(earlier, f"l{i}"), lambda: store.append_custom("t", [i]),
               lambda: store.append_session_info(f"n{i}"), lambda: store.append_model_change("p", f"m{i}"),
               lambda: store.append_thinking_level_change("high"),
               lambda: store.append_compaction(f"s{i}", earlier, i)]
    return [rng.choice(options)()]

def write_forever(job):
    rng = random.Random(job["seed"])
    if job["mode"] == "new":
        store = SessionStore.create(job["cwd"], job["root"], lock=True, fsync=job["fsync"])
    else:
        store = SessionStore.open(job["path"], lock=True, fsync=job["fsync"])
    say(f"path {store.path}")
    held = []  # entries of a new session wait in memory until its first message creates the file
    for i in range(10**9):
        held += append_something(store, rng, i)
        if store.on_disk:
            for entry in held:
                say(f"ok {entry['id']}")
            held = []

for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:  # the writer: it must never return into this loop, whatever happens
        try:
            say(f"pid {os.getpid()}")
            write_forever(job)
        except BaseException as exc:
            try:
                say(f"error {exc!r}")
            except BaseException:
                pass
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    say(f"exit {os.WTERMSIG(status) if os.WIFSIGNALED(status) else -os.WEXITSTATUS(status)}")
"""


def v2_template(path: Path) -> list[str]:
    """Write a small version-2 session file; returns its entry ids (kept by the migration)."""
    lines = [{"type": "session", "version": 2, "id": "old-v2", "timestamp": "2024-01-01T00:00:00.000Z",
              "cwd": str(path.parent)}]
    for i in range(1, 6):
        lines.append({"type": "message", "id": f"0000000{i}", "parentId": f"0000000{i - 1}" if i > 1 else None,
                      "timestamp": "2024-01-01T00:00:00.000Z",
                      "message": {"role": "hookMessage" if i == 5 else "user", "content": f"v2:{BODY}", "timestamp": i}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return [line["id"] for line in lines[1:]]


class Zygote:
    """The forking writer server (see module docstring); `run` performs one killed write."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", ZYGOTE], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)

    def run(self, job: dict, kill_after: int) -> tuple[Path | None, list[str]]:
        """Start a writer, SIGKILL it after `kill_after` acknowledgements (-1: before it reports its file),
        return (its file, every acknowledged id, including those printed before the kill landed)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write((json.dumps(job) + "\n").encode())
        self.process.stdin.flush()
        pid = int(self._line("pid"))
        path: Path | None = None
        acked: list[str] = []
        if kill_after >= 0:
            path = Path(self._line("path"))
            acked = [self._line("ok") for _ in range(kill_after)]
        os.kill(pid, signal.SIGKILL)
        while True:
            kind, _, rest = self.process.stdout.readline().decode().rstrip("\n").partition(" ")
            if kind == "exit":
                assert rest == str(int(signal.SIGKILL)), f"writer did not die by SIGKILL: exit {rest}"
                return path, acked
            assert kind in ("ok", "path"), f"writer failed: {kind} {rest}"
            if kind == "ok":
                acked.append(rest)
            else:
                path = Path(rest)

    def _line(self, kind: str) -> str:
        assert self.process.stdout is not None
        got, _, rest = self.process.stdout.readline().decode().rstrip("\n").partition(" ")
        assert got == kind, f"expected {kind!r} from the writer, got {got!r} {rest}"
        return rest

    def close(self) -> None:
        """End the zygote; a writer still running (a failed run) dies of EPIPE once stdout is closed."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.stdout.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def check_recovered(path: Path, before: list[str], acked: list[str]) -> SessionStore:
    """The file reopens under the lock; it holds `before` then `acked` (then at most a few written but not yet
    acknowledged entries); every message is intact; an append after recovery lands on a line of its own."""
    store = SessionStore.open(path, lock=True)  # the dead writer's lock is gone with it
    ids = [entry["id"] for entry in store.entries]
    assert ids[: len(before) + len(acked)] == before + acked
    assert len(ids) - len(before) - len(acked) <= 3
    for entry in store.entries:
        content = entry.get("message", {}).get("content")
        if isinstance(content, str) and not content.startswith("v2:"):
            index, _, body = content.partition(":")
            assert index.isdigit() and body == BODY * (len(body) // 2), f"damaged message {entry['id']}"
    added = store.append_message({"role": "user", "content": "0:" + BODY, "timestamp": 0})
    store.close()
    reopened = SessionStore.open(path)
    assert [e["id"] for e in reopened.entries] == ids + [added["id"]]
    assert added["parentId"] == store.entries[-2]["id"] if len(store.entries) > 1 else added["parentId"] is None
    return reopened


def test_sigkill_at_random_moments_never_loses_an_acknowledged_entry(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    zygote = Zygote()
    previous: Path | None = None
    outcomes = {"no file": 0, "recovered": 0}
    try:
        for run in range(RUNS):
            job, before = _job(rng, run, tmp_path, previous)
            path, acked = zygote.run(job, kill_after=rng.choice([-1, 0, 1, 2, 3, 5, 8, 13, 21]))
            path = path or (Path(job["path"]) if "path" in job else None)
            if path is None or not path.exists():
                assert job["mode"] == "new" and not acked, f"run {run}: acknowledged entries but no file"
                outcomes["no file"] += 1
                continue
            recovered = check_recovered(path, before, acked)
            outcomes["recovered"] += 1
            previous = path if path.stat().st_size < 4_000_000 and recovered.header["version"] == 3 else None
    finally:
        zygote.close()
    assert outcomes["recovered"] > RUNS // 2 and outcomes["no file"] > 0, outcomes


def _job(rng: random.Random, run: int, tmp_path: Path, previous: Path | None) -> tuple[dict, list[str]]:
    """The next run's job and the ids its file holds before the writer starts."""
    job = {"seed": run, "root": str(tmp_path / "sessions"), "cwd": str(tmp_path / "project"),
           "fsync": rng.random() < 0.1}
    roll = rng.random()
    if roll < 0.15:
        path = tmp_path / "old" / f"v2-{run}.jsonl"
        path.parent.mkdir(exist_ok=True)
        return {**job, "mode": "migrate", "path": str(path)}, v2_template(path)
    if roll < 0.45 and previous is not None:
        return {**job, "mode": "resume", "path": str(previous)}, [e["id"] for e in SessionStore.open(previous).entries]
    return {**job, "mode": "new"}, []
