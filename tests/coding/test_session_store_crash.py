"""Kill -9 at a random moment: the session file reopens with every entry the writer acknowledged.

`crash_once` is reusable: a fault-injection suite can call it many times (or set AGENT_FORGE_CRASH_RUNS).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.coding.session.store import SessionStore, find_most_recent

# The writer: a few non-message entries (held back until the first message), then messages of mixed sizes
# (so some writes are large enough to be torn), acknowledging each entry id on stdout after its append returns.
WRITER = r"""
import random, sys
from agent_forge.coding.session.store import SessionStore
root, cwd, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
store = SessionStore.create(cwd, root)
acked = [store.append_model_change("p", "m"), store.append_thinking_level_change("low")]
print("path", store.path, flush=True)
for i in range(1_000_000):
    size = rng.choice([1, 200, 5_000, 300_000])
    entry = store.append_message({"role": "user", "content": f"{i}:" + "\u00e9\u2028" * size, "timestamp": i})
    for done in acked + [entry]:
        print("ok", done["id"], flush=True)
    acked = []
"""

RUNS = int(os.environ.get("AGENT_FORGE_CRASH_RUNS", "6"))


def crash_once(tmp_path: Path, seed: int) -> tuple[Path | None, list[str]]:
    """Run the writer, SIGKILL it after a random number of acknowledgements, return (file, acknowledged ids)."""
    rng = random.Random(seed)
    cwd = tmp_path / f"proj{seed}"
    cwd.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path / "sessions"), str(cwd), str(seed)],
        stdout=subprocess.PIPE,
    )
    assert child.stdout is not None
    path_line = child.stdout.readline().split(maxsplit=1)
    acked: list[str] = []
    for _ in range(rng.randint(0, 30)):
        acked.append(child.stdout.readline().split()[1].decode())
    child.send_signal(signal.SIGKILL)
    rest = child.stdout.read()  # acknowledgements printed before the kill landed count too
    child.wait()
    assert child.returncode == -signal.SIGKILL
    acked += [line.split()[1].decode() for line in rest.splitlines() if line.startswith(b"ok ")]
    return Path(path_line[1].decode().strip()), acked


def check_recovered(path: Path, acked: list[str]) -> None:
    if not acked and not path.exists():
        return  # killed before the first message reached the disk: no file at all is correct
    store = SessionStore.open(path)
    ids = [entry["id"] for entry in store.entries]
    assert ids[: len(acked)] == acked  # every acknowledged entry, in order, nothing before it lost
    for entry in store.entries[2:]:
        index, _, body = entry["message"]["content"].partition(":")
        assert body == "\u00e9\u2028" * (len(body) // 2) and index.isdigit()
    added = store.append_message({"role": "user", "content": "after", "timestamp": 0})
    store.close()
    reopened = SessionStore.open(path)
    assert reopened.entries[-1] == added and reopened.leaf_id == added["id"]
    assert added["parentId"] == ids[-1]
    reopened.close()


@pytest.mark.parametrize("seed", range(RUNS))
def test_sigkill_at_random_moment_keeps_acknowledged_entries(tmp_path: Path, seed: int) -> None:
    path, acked = crash_once(tmp_path, seed)
    check_recovered(path, acked)
    expected = path if path.exists() else None
    assert find_most_recent(tmp_path / f"proj{seed}", tmp_path / "sessions") == expected
    assert expected is not None or not acked
