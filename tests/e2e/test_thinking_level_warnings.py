"""End to end: a thinking level the model does not support is clamped with one warning on stderr, whichever
path asked for it (flags with and without a session, `-c`, a `:level` suffix, RPC start-up, `switch_session`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support.model_entries import model_entry

MODELS = [model_entry("plain", reasoning=False), model_entry("deep")]  # deep: off..high, no xhigh
LOW_ON_PLAIN = 'Warning: Thinking level "low" is not supported by fake/plain; using "off"'


def cli(env: dict[str, str], cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=stdin.encode(),
                          capture_output=True, timeout=60)


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def levels(path: Path) -> list[str]:
    return [e["thinkingLevel"] for e in entries(path) if e["type"] == "thinking_level_change"]


def one_session(env: dict[str, str], project: Path, *args: str) -> Path:
    """Run one prompt in a new session and return its file."""
    done = cli(env, project, *args, "-p", "first")
    assert done.returncode == 0, done.stderr
    files = list(Path(env["AGENT_FORGE_DIR"], "sessions").rglob("*.jsonl"))
    assert len(files) == 1
    return files[0]


@pytest.fixture
def env(agent_env_factory) -> dict[str, str]:
    return agent_env_factory(model_id="plain", models=MODELS)


@pytest.mark.parametrize("flags", [("--thinking", "low"), ("--model", "fake/plain:low")])
def test_a_level_flag_on_a_resumed_session_warns_once(env, fake_llm, project, flags):
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    path = one_session(env, project)
    done = cli(env, project, "--session", str(path), *flags, "-p", "again")
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().splitlines().count(LOW_ON_PLAIN) == 1, done.stderr
    assert levels(path) == ["off"]  # nothing changed: nothing recorded


def test_a_level_flag_on_a_new_session_warns_once(env, fake_llm, project):
    fake_llm.set_script([{"text": "one"}])
    done = cli(env, project, "--no-session", "--thinking", "low", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().splitlines().count(LOW_ON_PLAIN) == 1, done.stderr


def test_continue_with_a_level_above_the_models_top_warns_and_records_the_top(env, fake_llm, project):
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    path = one_session(env, project, "--model", "fake/deep")
    done = cli(env, project, "-c", "--thinking", "xhigh", "-p", "again")
    assert done.returncode == 0, done.stderr
    warning = 'Warning: Thinking level "xhigh" is not supported by fake/deep; using "high"'
    assert done.stderr.decode().splitlines().count(warning) == 1, done.stderr
    assert levels(path) == ["medium", "high"]
    assert fake_llm.requests[-1]["body"]["reasoning_effort"] == "high"


def test_rpc_start_up_on_a_resumed_session_warns_once(env, fake_llm, project):
    fake_llm.set_script([{"text": "one"}])
    path = one_session(env, project)
    done = cli(env, project, "--mode", "rpc", "--session", str(path), "--thinking", "low",
               stdin='{"id":"a","type":"get_state"}\n')
    state = json.loads(done.stdout.decode().splitlines()[0])
    assert (state["id"], state["data"]["thinkingLevel"]) == ("a", "off")
    assert done.stderr.decode().splitlines().count(LOW_ON_PLAIN) == 1, done.stderr
    assert levels(path) == ["off"]


def test_switching_to_a_session_whose_level_the_model_lost_warns(env, project, tmp_path):
    target = tmp_path / "recorded-high.jsonl"
    header = {"type": "session", "version": 3, "id": "aaaa1111-0000-4000-8000-000000000001",
              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": str(project)}
    model = {"type": "model_change", "id": "e0000001", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
             "provider": "fake", "modelId": "plain"}
    level = {"type": "thinking_level_change", "id": "e0000002", "parentId": "e0000001",
             "timestamp": "2026-01-01T00:00:00.000Z", "thinkingLevel": "high"}  # plain reasoned when it was written
    target.write_text("".join(json.dumps(e) + "\n" for e in (header, model, level)))
    commands = [{"id": "s", "type": "switch_session", "sessionPath": str(target)}, {"id": "g", "type": "get_state"}]
    done = cli(env, project, "--mode", "rpc", "--no-session", stdin="".join(json.dumps(c) + "\n" for c in commands))
    replies = {r["id"]: r for r in map(json.loads, done.stdout.decode().splitlines()) if "id" in r}
    assert replies["s"]["success"] is True, replies
    assert replies["g"]["data"]["thinkingLevel"] == "off"
    warning = 'Warning: Thinking level "high" is not supported by fake/plain; using "off"'
    assert done.stderr.decode().splitlines().count(warning) == 1, done.stderr
