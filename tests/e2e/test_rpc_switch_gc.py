"""`switch_session` answers before the cyclic collector walks the file it opened (`handlers/tree.py`): once
start-up froze its objects (`cli_gc.py`) the opened entries stay young, and the first collection after the
read would walk them all on the answer's path. It runs once the answer has left."""

from __future__ import annotations

import json
import subprocess
import sys

from agent_forge.coding.session.store import SessionStore

# Runs the real CLI entry point; notes each collection that starts with many young objects (the opened file's)
# and each write to stdout, in order, in the file argv[1].
_CHILD = """
import atexit, gc, json, sys
from agent_forge.modes import stdout_guard
target, events, real = sys.argv[1], [], stdout_guard.write_out
def noted(phase, info):
    if phase == "start":
        young = sum(len(gc.get_objects(generation)) for generation in range(info["generation"] + 1))
        if young > 10000:
            events.append("big collection")
gc.callbacks.append(noted)
def write(stream, data):
    events.append(bytes(data).decode("utf-8", "replace")[:80])
    return real(stream, data)
stdout_guard.write_out = write
atexit.register(lambda: open(target, "w").write(json.dumps(events + [f"collector on: {gc.isenabled()}"])))
sys.argv = ["agent-forge", "--mode", "rpc", "--no-session"]
from agent_forge.console import main
raise SystemExit(main())
"""


def _long_session(tmp_path, messages: int = 5000):
    store = SessionStore.create(tmp_path / "project", tmp_path / "sessions")
    for i in range(messages):
        store.append_message({"role": "user", "content": [{"type": "text", "text": f"message {i}"}],
                              "timestamp": i})
    store.close()
    return store.path


def test_switch_session_answers_before_the_collector_walks_the_opened_file(tmp_path):
    path = _long_session(tmp_path)
    out = tmp_path / "events.json"
    env = {"AGENT_FORGE_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    commands = [{"id": "s", "type": "get_state"}, {"id": "w", "type": "switch_session", "sessionPath": str(path)}]
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(out)], capture_output=True, env=env,
                          cwd=tmp_path, timeout=60,
                          input="".join(json.dumps(command) + "\n" for command in commands).encode())
    assert proc.returncode == 0, proc.stderr.decode()
    answers = {record["id"]: record for record in map(json.loads, proc.stdout.splitlines()) if "id" in record}
    assert answers["w"]["success"] and answers["w"]["data"] == {"cancelled": False, "sessionWarnings": []}
    events = json.loads(out.read_text())
    switched = next(i for i, event in enumerate(events) if '"id":"w"' in event)
    assert "big collection" not in events[:switched], events[:switched]
    assert events[-1] == "collector on: True"  # the pause ended with the answer
