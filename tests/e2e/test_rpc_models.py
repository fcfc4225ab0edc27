"""End to end: models, thinking levels, context windows and logout through the real CLI in RPC mode."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from agent_forge.ai.providers.anthropic_messages import THINKING_BUDGETS
from agent_forge.modes.rpc.client import RpcClient
from support.model_entries import model_entry


THREE = [model_entry("alpha"), model_entry("beta", reasoning=False), model_entry("gamma")]
WIDE = {**model_entry("wide", context_window=400_000), "contextWindowOptions": [400_000, 1_000_000]}
DEEP = {**model_entry("deep"), "thinkingLevels": ["off", "low", "medium", "high", "xhigh"]}


async def start(env: dict[str, str], cwd: Path, *args: str) -> RpcClient:
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


async def data(client: RpcClient, command: dict[str, Any]) -> Any:
    reply = await client.send(command)
    assert reply["success"] is True, reply
    return reply.get("data")


async def error(client: RpcClient, command: dict[str, Any]) -> str:
    reply = await client.send(command)
    assert reply["success"] is False, reply
    return reply["error"]


def key(model: dict[str, Any]) -> str:
    return f"{model['provider']}/{model['id']}"


def agent_dir(env: dict[str, str]) -> Path:
    return Path(env["AGENT_FORGE_DIR"])


def session_entries(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()][1:]


# -- models -------------------------------------------------------------------------------------------------


async def test_cycle_model_walks_every_available_model(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(model_id="alpha", models=THREE)
    fake_llm.set_script([{"text": "from beta"}])
    async with await start(env, tmp_path) as client:
        assert [key(m) for m in (await data(client, {"type": "get_available_models"}))["models"]] == [
            "fake/alpha", "fake/beta", "fake/gamma"]
        first = await data(client, {"type": "cycle_model"})
        assert (key(first["model"]), first["thinkingLevel"], first["isScoped"]) == ("fake/beta", "off", False)
        await client.prompt_and_wait("hello")
        rest = [await data(client, {"type": "cycle_model"}) for _ in range(2)]
        state = await data(client, {"type": "get_state"})
    assert [key(r["model"]) for r in rest] == ["fake/gamma", "fake/alpha"]
    assert key(state["model"]) == "fake/alpha" and state["thinkingLevel"] == "off"
    assert fake_llm.requests[0]["body"]["model"] == "beta"
    changes = [e["modelId"] for e in session_entries(state["sessionFile"]) if e["type"] == "model_change"]
    assert changes == ["alpha", "beta", "gamma", "alpha"]


async def test_models_flag_scopes_start_up_and_cycling(agent_env_factory, tmp_path):
    env = agent_env_factory(model_id="alpha", models=THREE)
    async with await start(env, tmp_path, "--models", "fake/gamma:high, BETA") as client:
        state = await data(client, {"type": "get_state"})
        cycled = [await data(client, {"type": "cycle_model"}) for _ in range(2)]
    assert (key(state["model"]), state["thinkingLevel"]) == ("fake/gamma", "high")
    assert [(key(c["model"]), c["thinkingLevel"], c["isScoped"]) for c in cycled] == [
        ("fake/beta", "off", True), ("fake/gamma", "high", True)]


async def test_one_model_cycles_to_null_and_unknown_models_are_refused(agent_env, tmp_path):
    async with await start(agent_env, tmp_path) as client:
        reply = await client.send({"type": "cycle_model"})
        message = await error(client, {"type": "set_model", "provider": "nope", "modelId": "missing"})
        state = await data(client, {"type": "get_state"})
    assert reply["success"] is True and "data" in reply and reply["data"] is None
    assert message == "Model not found: nope/missing"
    assert key(state["model"]) == "fake/fake-model"


# -- thinking levels ----------------------------------------------------------------------------------------


async def test_thinking_levels_on_reasoning_and_plain_models(agent_env_factory, tmp_path):
    env = agent_env_factory(model_id="alpha", models=[*THREE, DEEP])
    async with await start(env, tmp_path) as client:
        levels = (await data(client, {"type": "get_available_thinking_levels"}))["levels"]
        await data(client, {"type": "set_thinking_level", "level": "high"})
        cycled = [(await data(client, {"type": "cycle_thinking_level"}))["level"] for _ in range(2)]
        refused = await error(client, {"type": "set_thinking_level", "level": "xhigh"})
        invalid = await error(client, {"type": "set_thinking_level", "level": "bogus"})
        after_refusals = (await data(client, {"type": "get_state"}))["thinkingLevel"]
        await data(client, {"type": "set_model", "provider": "fake", "modelId": "deep"})
        await data(client, {"type": "set_thinking_level", "level": "xhigh"})
        deep_level = (await data(client, {"type": "get_state"}))["thinkingLevel"]
        await data(client, {"type": "set_model", "provider": "fake", "modelId": "beta"})
        plain_cycle = await client.send({"type": "cycle_thinking_level"})
        plain_levels = (await data(client, {"type": "get_available_thinking_levels"}))["levels"]
        plain_level = (await data(client, {"type": "get_state"}))["thinkingLevel"]
        plain_invalid = await error(client, {"type": "set_thinking_level", "level": "bogus"})
    assert levels == ["off", "minimal", "low", "medium", "high"]
    assert cycled == ["off", "minimal"]
    assert refused == ('Thinking level "xhigh" is not supported by fake/alpha. '
                       "Supported levels: off, minimal, low, medium, high")
    assert invalid == ("Invalid thinking level: bogus. Valid levels: off, minimal, low, medium, high, xhigh, max "
                       "(fake/alpha supports off, minimal, low, medium, high)")
    assert plain_invalid.endswith("(fake/beta supports off)")  # not a list of levels it would then refuse
    assert after_refusals == "minimal" and deep_level == "xhigh"
    assert plain_cycle["success"] is True and "data" in plain_cycle and plain_cycle["data"] is None
    assert plain_levels == ["off"] and plain_level == "off"


async def _efforts(client: RpcClient, levels: list[str]) -> None:
    for level in levels:
        await data(client, {"type": "set_thinking_level", "level": level})
        await client.prompt_and_wait(f"think {level}")


async def test_openai_requests_carry_the_reasoning_effort(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "a"}, {"text": "b"}, {"text": "c"}])
    async with await start(agent_env, tmp_path) as client:
        await _efforts(client, ["low", "high", "off"])
    bodies = [r["body"] for r in fake_llm.requests]
    assert [b.get("reasoning_effort") for b in bodies] == ["low", "high", None]


async def test_anthropic_requests_carry_the_thinking_budget(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(api="anthropic-messages", max_tokens=64000)
    fake_llm.set_script([{"text": "a"}, {"text": "b"}, {"text": "c"}])
    async with await start(env, tmp_path) as client:
        await _efforts(client, ["low", "high", "off"])
    bodies = [r["body"] for r in fake_llm.requests]
    assert [b.get("thinking") for b in bodies] == [
        {"type": "enabled", "budget_tokens": THINKING_BUDGETS["low"]},
        {"type": "enabled", "budget_tokens": THINKING_BUDGETS["high"]}, None]
    assert THINKING_BUDGETS["low"] < THINKING_BUDGETS["high"] < bodies[1]["max_tokens"]


# -- context windows ----------------------------------------------------------------------------------------


async def test_context_window_selection(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(model_id="wide", models=[WIDE, model_entry("narrow")])
    fake_llm.set_script([{"text": "ok"}])
    async with await start(env, tmp_path) as client:
        windows = await data(client, {"type": "get_available_context_windows"})
        await data(client, {"type": "set_context_window", "contextWindow": "1m"})
        events = [r for r in client.records if r.get("type") == "context_window_changed"]
        unsupported = await error(client, {"type": "set_context_window", "contextWindow": "2m"})
        malformed = await error(client, {"type": "set_context_window", "contextWindow": "lots"})
        state = await data(client, {"type": "get_state"})
        await data(client, {"type": "set_model", "provider": "fake", "modelId": "narrow"})
        narrow = await data(client, {"type": "get_available_context_windows"})
        await client.prompt_and_wait("save the session")
    assert windows == {"contextWindows": [400000, 1000000], "currentContextWindow": 400000,
                       "supportsSelection": True}
    assert events == [{"type": "context_window_changed", "contextWindow": 1000000,
                       "previousContextWindow": 400000, "provider": "fake", "modelId": "wide"}]
    assert unsupported == "Context window 2m is not supported by fake/wide. Supported values: 400k, 1m."
    assert malformed.startswith("Invalid context window: lots.")
    assert state["model"]["contextWindow"] == 1000000 and state["model"]["defaultContextWindow"] == 400000
    assert narrow == {"contextWindows": [128000], "currentContextWindow": 128000, "supportsSelection": False}
    recorded = [e for e in session_entries(state["sessionFile"]) if e["type"] == "context_window_change"]
    assert [(e["provider"], e["modelId"], e["contextWindow"]) for e in recorded] == [("fake", "wide", 1000000)]


async def test_a_selected_window_below_max_tokens_lowers_the_requested_output(agent_env_factory, fake_llm,
                                                                               tmp_path):
    small = {**model_entry("small", context_window=32768), "contextWindowOptions": [4096, 32768]}
    env = agent_env_factory(model_id="small", models=[small])
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    async with await start(env, tmp_path, "--no-session") as client:
        await client.prompt_and_wait("at the full window")
        await data(client, {"type": "set_context_window", "contextWindow": 4096})
        await client.prompt_and_wait("at 4k")
        state = await data(client, {"type": "get_state"})
    assert [r["body"]["max_completion_tokens"] for r in fake_llm.requests] == [16384, 4096]
    assert state["model"]["maxTokens"] == 16384  # kept: selecting 32k again gives it back


async def test_huge_context_windows_are_refused_exactly(agent_env_factory, tmp_path):
    env = agent_env_factory(model_id="wide", models=[WIDE])
    huge = 10 ** 400  # a valid JSON integer that no float can hold
    async with await start(env, tmp_path) as client:
        too_big = await error(client, {"type": "set_context_window", "contextWindow": huge})
        compact = await error(client, {"type": "set_context_window", "contextWindow": "99999999999999999999m"})
        empty_path = await error(client, {"type": "switch_session", "sessionPath": ""})
        state = await data(client, {"type": "get_state"})
    assert too_big.startswith(f"Context window {10 ** 394}m is not supported by fake/wide.")
    assert compact.startswith("Context window 99999999999999999999m is not supported")  # no float rounding
    assert empty_path == "The session path is empty: give the path of a session file"
    assert state["model"]["contextWindow"] == 400000


async def test_context_window_flag_at_start_up(agent_env_factory, tmp_path):
    env = agent_env_factory(model_id="wide", models=[WIDE])
    async with await start(env, tmp_path, "--context-window", "1M") as client:
        state = await data(client, {"type": "get_state"})
    assert state["model"]["contextWindow"] == 1000000
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent_forge", "--mode", "rpc", "--context-window", "3m", cwd=str(tmp_path), env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 1 and out == b""
    assert "Context window 3m is not supported by fake/wide. Supported values: 400k, 1m." in err.decode()


# -- logout -------------------------------------------------------------------------------------------------


def add_logged_in_groq(env: dict[str, str], fake_llm) -> Path:
    """A `groq` provider on the fake server whose only key is in auth.json (written 0600, like the agent does)."""
    models_path = agent_dir(env) / "models.json"
    config = json.loads(models_path.read_text())
    config["providers"]["groq"] = {"baseUrl": fake_llm.base_url_openai, "api": "openai-completions",
                                   "models": [model_entry("g1")]}
    models_path.write_text(json.dumps(config))
    auth_path = agent_dir(env) / "auth.json"
    auth_path.write_text(json.dumps({"groq": {"type": "api_key", "key": "gsk-stored"},
                                     "openrouter": {"type": "api_key", "key": "or-kept"}}))
    os.chmod(auth_path, 0o600)
    return auth_path


async def test_logout_provider_removes_the_stored_key(agent_env, fake_llm, tmp_path):
    auth_path = add_logged_in_groq(agent_env, fake_llm)
    async with await start(agent_env, tmp_path) as client:
        await data(client, {"type": "set_model", "provider": "groq", "modelId": "g1"})
        result = await data(client, {"type": "logout_provider", "provider": "groq"})
        rejected = await client.send({"type": "prompt", "message": "hi"})
        unknown = await error(client, {"type": "logout_provider", "provider": "nobody"})
    assert result["provider"] == "groq" and result["authStatus"] == {"configured": False}
    assert [key(m) for m in result["models"]] == ["fake/fake-model"]
    assert "scopedModels" not in result
    assert json.loads(auth_path.read_text()) == {"openrouter": {"type": "api_key", "key": "or-kept"}}
    assert stat.S_IMODE(auth_path.stat().st_mode) == 0o600
    assert rejected["success"] is False and "GROQ_API_KEY" in rejected["error"]
    assert unknown.startswith('Unknown provider "nobody"')
    assert fake_llm.requests == []


async def test_logout_provider_reports_a_remaining_environment_key(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(extra_env={"GROQ_API_KEY": "gsk-env"})
    add_logged_in_groq(env, fake_llm)
    async with await start(env, tmp_path, "--models", "g1,fake-model") as client:
        result = await data(client, {"type": "logout_provider", "provider": "groq"})
    assert result["authStatus"] == {"configured": True, "source": "environment", "label": "GROQ_API_KEY"}
    assert [key(m) for m in result["models"]] == ["fake/fake-model", "groq/g1"]
    assert [key(m) for m in result["scopedModels"]] == ["groq/g1", "fake/fake-model"]


# -- settings.json ------------------------------------------------------------------------------------------


async def test_model_commands_never_rewrite_settings(agent_env_factory, tmp_path):
    env = agent_env_factory(model_id="wide", models=[WIDE, *THREE], settings={"defaultThinkingLevel": "low"})
    path = agent_dir(env) / "settings.json"
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    async with await start(env, tmp_path) as client:
        for command in ({"type": "set_context_window", "contextWindow": 1000000},
                        {"type": "set_thinking_level", "level": "high"}, {"type": "cycle_thinking_level"},
                        {"type": "cycle_model"}, {"type": "set_model", "provider": "fake", "modelId": "gamma"},
                        {"type": "logout_provider", "provider": "fake"}):
            await data(client, command)
        state = await data(client, {"type": "get_state"})
    assert key(state["model"]) == "fake/gamma"
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert not (tmp_path / ".agent-forge").exists()


# -- API keys -----------------------------------------------------------------------------------------------


async def test_a_models_json_key_command_runs_once_per_model_request(agent_env, fake_llm, tmp_path):
    """Issue 10 point 9: the loop built the stream options twice per request, running `!command` twice."""
    counter = tmp_path / "key-runs"
    models_path = agent_dir(agent_env) / "models.json"
    config = json.loads(models_path.read_text())
    config["providers"]["fake"]["apiKey"] = f"!echo run >> {counter}; echo sk-from-command"
    models_path.write_text(json.dumps(config))
    fake_llm.set_script([{"text": "hello"}])
    async with await start(agent_env, tmp_path) as client:
        await client.prompt_and_wait("hi")
    assert counter.read_text().splitlines() == ["run"]
    assert len(fake_llm.requests) == 1
    assert fake_llm.requests[0]["headers"].get("authorization") == "Bearer sk-from-command"
