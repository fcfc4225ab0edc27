"""End to end: one live session moves Anthropic → OpenAI Responses → Gemini → Anthropic, with tool calls on each.

All three APIs are served by the loopback fake server. Its Responses and Gemini routes answer 400 to any
request their real API would reject (`support/fake_responses.py`, `support/fake_gemini.py`); Anthropic requests
are checked here with `anthropic_problems`. So every turn getting an answer means the history, rewritten for
each API (`ai/transform.py`), stayed valid for it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_forge.ai.providers.google_generative_ai import FOREIGN_CALL_SIGNATURE
from agent_forge.modes.rpc.client import RpcClient

_TOOL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def entry(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "reasoning": True, "input": ["text", "image"], "contextWindow": 200_000,
            "maxTokens": 8192, "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}


def add_providers(env: dict[str, str], fake_llm) -> None:
    """Next to the `fa` Anthropic provider: `fr` (OpenAI Responses) and `fg` (Gemini) on the same server."""
    path = Path(env["AGENT_FORGE_DIR"]) / "models.json"
    config = json.loads(path.read_text())
    config["providers"]["fr"] = {"baseUrl": fake_llm.base_url_openai, "api": "openai-responses", "apiKey": "k-r",
                                 "models": [entry("gpt-fake")]}
    config["providers"]["fg"] = {"baseUrl": fake_llm.base_url_gemini, "api": "google-generative-ai",
                                 "apiKey": "k-g", "models": [entry("gemini-3-fake")]}
    path.write_text(json.dumps(config))


def anthropic_problems(body: dict[str, Any]) -> list[str]:
    """What the Messages API would reject: roles must alternate from `user`, tool_use ids match its pattern and
    are answered by tool_result blocks first in the next user turn, thinking is signed, text is not blank."""
    problems, messages = [], body["messages"]
    for index, message in enumerate(messages):
        expected = "user" if index % 2 == 0 else "assistant"
        if message["role"] != expected:
            problems.append(f"messages[{index}] should be {expected}")
        for block in message["content"]:
            if block["type"] == "text" and not block["text"].strip():
                problems.append(f"messages[{index}] has a blank text block")
            if block["type"] == "thinking" and not block.get("signature"):
                problems.append(f"messages[{index}] has unsigned thinking")
        ids = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        problems += [f"bad tool_use id {i!r}" for i in ids if not _TOOL_ID.match(i)]
        answer = messages[index + 1]["content"] if index + 1 < len(messages) else []
        answered = [b["tool_use_id"] for b in answer[: len(ids)] if b["type"] == "tool_result"]
        if ids and answered != ids:
            problems.append(f"tool_use {ids} answered by {answered}")
    return problems


async def ok(client: RpcClient, command: dict[str, Any]) -> Any:
    reply = await client.send(command)
    assert reply["success"] is True, reply
    return reply.get("data")


SCRIPT = [
    # 1-2 Anthropic: signed thinking and a read
    {"thinking": "Look at the notes first.", "tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}]},
    {"text": "The notes say hello."},
    # 3-4 OpenAI Responses: reasoning item and a bash call with chunked arguments
    {"thinking": "Run a command.", "text": "Running it.", "args_chunk_chars": 4,
     "tool_calls": [{"name": "bash", "arguments": {"command": "echo from-bash"}}],
     "usage": {"input": 400, "output": 60, "cache_read": 1000, "reasoning": 25}},
    {"text": "It printed from-bash."},
    # 5-6 Gemini: signed thoughts and a write
    {"thinking": "Write a file.", "tool_calls": [{"name": "write", "arguments": {"path": "out.txt", "content": "x"}}]},
    {"text": "Written."},
    # 7 back on Anthropic
    {"text": "All done."},
]


async def test_a_session_moves_across_three_apis_with_tools_on_each(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(api="anthropic-messages", provider="fa", model_id="claude-fake")
    add_providers(env, fake_llm)
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("hello\n")
    fake_llm.set_script(SCRIPT)
    async with await RpcClient.start([], cwd=str(project), env=env) as client:
        session_id = (await ok(client, {"type": "get_state"}))["sessionId"]
        await client.prompt_and_wait("Read the notes.")
        await ok(client, {"type": "set_model", "provider": "fr", "modelId": "gpt-fake"})
        responses_end = await client.prompt_and_wait("Now run a command.")
        await ok(client, {"type": "set_model", "provider": "fg", "modelId": "gemini-3-fake"})
        await client.prompt_and_wait("Write a file.")
        await ok(client, {"type": "set_model", "provider": "fa", "modelId": "claude-fake"})
        await client.prompt_and_wait("Wrap up.")
        messages = (await ok(client, {"type": "get_messages"}))["messages"]

    requests = fake_llm.requests
    assert [(r["api"], r["outcome"]) for r in requests] == [
        ("anthropic", "ok"), ("anthropic", "ok"), ("responses", "ok"), ("responses", "ok"),
        ("gemini", "ok"), ("gemini", "ok"), ("anthropic", "ok")]
    for request in (requests[0], requests[1], requests[6]):
        assert anthropic_problems(request["body"]) == []
    assert (project / "out.txt").read_text() == "x"
    assert messages[-1]["content"][0]["text"] == "All done."

    # Responses: Anthropic thinking arrives as plain text, its tool call without an item id; caching by session
    responses_body = requests[2]["body"]
    assert responses_body["prompt_cache_key"] == session_id
    assert {"role": "assistant", "content": "Look at the notes first."} in responses_body["input"]
    calls = [i for i in responses_body["input"] if i.get("type") == "function_call"]
    assert calls == [{"type": "function_call", "call_id": "toolu_fake_1_0", "name": "read",
                      "arguments": '{"path":"notes.txt"}'}]
    assert not [i for i in responses_body["input"] if i.get("type") == "reasoning"]
    # ...and its own reasoning item comes back encrypted on the next turn, with the bash output
    replay = requests[3]["body"]["input"]
    assert [i["encrypted_content"] for i in replay if i.get("type") == "reasoning"] == ["enc_fake_3"]
    assert any(i.get("type") == "function_call_output" and "from-bash" in i["output"] for i in replay)
    usage = [e for e in responses_end if e["type"] == "message_end"][1]["message"]["usage"]
    assert (usage["input"], usage["cacheRead"], usage["output"]) == (400, 1000, 60)
    assert usage["cost"]["cacheRead"] == 1000 * 0.3 / 1e6

    # Gemini: foreign thinking as text, foreign calls with the documented skip signature, own signatures kept
    gemini_first = requests[4]["body"]["contents"]
    model_parts = [p for c in gemini_first if c["role"] == "model" for p in c["parts"]]
    assert {"text": "Run a command."} in model_parts and not any(p.get("thought") for p in model_parts)
    foreign_calls = [p for p in model_parts if "functionCall" in p]
    assert [p["thoughtSignature"] for p in foreign_calls] == [FOREIGN_CALL_SIGNATURE] * 2
    own_turn = requests[5]["body"]["contents"][-2]["parts"]
    assert own_turn[0]["thoughtSignature"] == "sig_fake_5" and own_turn[-1]["thoughtSignature"] == "sig_call_fake_5"

    # Back on Anthropic: its own thinking still signed, everyone else's ids and thoughts made valid
    final = requests[6]["body"]["messages"]
    blocks = [b for m in final if m["role"] == "assistant" for b in m["content"]]
    assert [b["signature"] for b in blocks if b["type"] == "thinking"] == ["sig_fake_1"]
    assert {"type": "text", "text": "Write a file."} in blocks
    tool_ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    assert len(tool_ids) == 3 and tool_ids[1] == "call_fake_3_0"


README = Path(__file__).resolve().parents[2] / "README.md"


def readme_local_config() -> tuple[dict[str, Any], int]:
    """The models.json of the README's "Providers and local models" section, and its line count."""
    section = README.read_text().split("## Providers and local models", 1)[1]
    block = section.split("```json\n", 1)[1].split("```", 1)[0]
    return json.loads(block), len(block.strip().splitlines())


@pytest.mark.parametrize("provider", ["ollama", "vllm"])
def test_the_readme_local_model_config_works_as_written(agent_env, fake_llm, tmp_path, provider):
    config, lines = readme_local_config()
    assert lines == 5
    entry = config["providers"].pop("ollama")
    entry["baseUrl"] = fake_llm.base_url_openai  # the only change: where the local server listens
    config["providers"][provider] = entry
    (Path(agent_env["AGENT_FORGE_DIR"]) / "models.json").write_text(json.dumps(config))
    (Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json").write_text("{}")
    fake_llm.set_script([{"text": "Local answer."}])
    model = f"{provider}/{entry['models'][0]['id']}"
    result = subprocess.run([sys.executable, "-m", "agent_forge", "--model", model, "-p", "hi"], cwd=tmp_path,
                            env=agent_env, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"Local answer.\n"
    request = fake_llm.requests[0]
    assert request["path"] == "/v1/chat/completions" and "authorization" not in request["headers"]
    assert request["body"]["model"] == "qwen2.5-coder:7b" and request["body"]["max_tokens"] > 0
    assert "store" not in request["body"]
