"""End to end: a prompt whose own estimated tokens (chars/4, images at their fixed estimate) exceed the model's
context window is refused before any request is sent, in every way a prompt enters (RPC `prompt`, `steer`,
`follow_up`, `-p`, `--mode json`); nothing is written to the session, which stays usable."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

WINDOW = 2000
HUGE = "word " * 1640  # about 2,050 tokens of chars/4: over the window by itself
REFUSAL = ("The prompt is too large for the context window of fake/fake-model: about 2,050 tokens (estimated) "
           "against a window of 2,000 tokens; shorten it, attach less, or choose a model (or context window) "
           "that fits it. Nothing was sent.")


@pytest.fixture
def env(agent_env_factory):
    return agent_env_factory(context_window=WINDOW, settings={"retry": {"baseDelayMs": 1}})


def _message_entries(directory: Path) -> list[dict]:
    lines = [json.loads(line) for path in directory.rglob("*.jsonl") for line in path.read_text().splitlines()]
    return [entry for entry in lines if entry.get("type") == "message"]


async def test_an_rpc_prompt_over_the_window_is_refused_and_the_session_goes_on(env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "small answer"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        reply = await client.send({"type": "prompt", "message": HUGE})
        assert reply["success"] is False and reply["error"] == REFUSAL
        assert (await client.send({"type": "get_messages"}))["data"]["messages"] == []
        events = await client.prompt_and_wait("a small prompt")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"] and messages[1]["content"][0]["text"] == "small answer"
    assert [e["type"] for e in events].count("agent_start") == 1
    assert len(fake_llm.requests) == 1 and "word word" not in json.dumps(fake_llm.requests[0]["body"])
    sessions = Path(env["AGENT_FORGE_DIR"]) / "sessions"
    assert [e["message"]["role"] for e in _message_entries(sessions)] == ["user", "assistant"]


@pytest.mark.parametrize("command", ["steer", "follow_up"])
async def test_a_queued_message_over_the_window_is_refused_too(env, fake_llm, tmp_path, command):
    fake_llm.set_script([{"text": "held", "hang": True, "hang_ms": 60000}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        assert (await client.send({"type": "prompt", "message": "start"}))["data"]["disposition"] == "started"
        reply = await client.send({"type": command, "message": HUGE})
        queued = await client.send({"type": "prompt", "message": HUGE, "streamingBehavior": "followUp"})
        await asyncio.to_thread(fake_llm.wait_for_requests, 1, 30)  # a release frees streams started so far
        fake_llm.release_hangs()
        await client.wait_for("agent_settled", timeout=60)
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    assert reply["success"] is False and reply["error"] == REFUSAL
    assert queued["success"] is False and queued["error"] == REFUSAL
    assert [m["role"] for m in messages] == ["user", "assistant"] and len(fake_llm.requests) == 1


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json", "-p"]])
def test_a_print_mode_prompt_over_the_window_exits_1_with_one_line(env, fake_llm, tmp_path, mode):
    result = subprocess.run([sys.executable, "-m", "agent_forge", *mode, HUGE], capture_output=True, env=env,
                            cwd=tmp_path, timeout=60)
    assert result.returncode == 1
    assert result.stderr.decode() == f"agent-forge: {REFUSAL}\n"
    assert fake_llm.requests == []
    assert _message_entries(Path(env["AGENT_FORGE_DIR"])) == []
