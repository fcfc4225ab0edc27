"""End to end: a key or header value that an HTTP header cannot carry (a line break, a non-ASCII character)
fails the request with one clear line naming where it came from (`--api-key`, `auth.json`, the environment
variable, `models.json` `apiKey` or its `!command`, a `models.json` header), never the value, and no request
is sent. Print mode and RPC share the path, so both are driven."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient

from .test_key_commands import assistant_errors, configure

SECRET = "SECRETTAIL"


def run_print(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args, "-p", "hi"], cwd=cwd, env=env,
                          input=b"", capture_output=True, timeout=60)


async def rpc_errors(env, cwd) -> tuple[list[str | None], str]:
    async with await RpcClient.start([], cwd=str(cwd), env=env) as client:
        events = await client.prompt_and_wait("hello", timeout=60)
    return assistant_errors(events), json.dumps(client.records) + client.stderr.decode("utf-8", "replace")


def test_a_non_ascii_api_key_flag_is_named_in_print_mode(agent_env, fake_llm, tmp_path):
    result = run_print(agent_env, tmp_path, "--api-key", f"sk-漢{SECRET}")
    stderr = result.stderr.decode()
    assert result.returncode == 1
    assert ('The API key for provider "fake" from --api-key cannot be sent: it holds a non-ASCII character '
            "(character 4), which an HTTP header cannot carry (the key is not shown)") in stderr
    assert "Traceback" not in stderr and "UnicodeEncodeError" not in stderr and SECRET not in stderr
    assert fake_llm.requests == []


async def test_an_auth_json_key_with_a_line_break_names_the_file(agent_env, fake_llm, tmp_path):
    auth = Path(agent_env["AGENT_FORGE_DIR"]) / "auth.json"
    auth.write_text(json.dumps({"fake": {"type": "api_key", "key": f"abc\ndef{SECRET}"}}))
    errors, written = await rpc_errors(agent_env, tmp_path)
    assert errors == [f'The API key for provider "fake" from {auth} cannot be sent: it holds a line break or '
                      "another control character, which an HTTP header cannot carry (the key is not shown). "
                      "Correct it there (or /login again)."]
    assert SECRET not in written and fake_llm.requests == []


async def test_an_environment_key_is_named_by_its_variable(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(provider="openai", extra_env={"OPENAI_API_KEY": f"sk-é{SECRET}"})
    errors, written = await rpc_errors(env, tmp_path)
    assert errors[0].startswith('The API key for provider "openai" from OPENAI_API_KEY cannot be sent: it holds '
                                "a non-ASCII character (character 4)")
    assert SECRET not in written and fake_llm.requests == []


async def test_a_key_command_printing_non_ascii_names_models_json(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory()
    models = configure(env, f"!printf 'sk-漢{SECRET}'")
    errors, written = await rpc_errors(env, tmp_path)
    assert errors[0].startswith(f'The API key for provider "fake" from {models} apiKey cannot be sent: it holds a '
                                "non-ASCII character (character 4)")
    assert SECRET not in written and fake_llm.requests == []


async def test_a_non_ascii_header_value_names_models_json_and_the_header(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory()
    models = configure(env, "fake-key", headers={"X-Token": f"漢{SECRET}"})
    errors, written = await rpc_errors(env, tmp_path)
    assert errors == [f"{models}: the value of header 'X-Token' for provider \"fake\" holds a non-ASCII character "
                      "(character 1), so the request was not sent (the value is not shown)"]
    assert SECRET not in written and fake_llm.requests == []
