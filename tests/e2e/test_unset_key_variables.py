"""End to end: a `$VAR` key value whose variable is unset (models.json `apiKey` and `headers`, auth.json `key`)
is named in the error through the real CLI, as a failing `!command` key is: not a bare "No API key"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient

from .test_key_commands import assistant_errors, configure


def run_print(env, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", "-p", "hello"], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


def test_an_unset_variable_as_api_key_is_named(agent_env, fake_llm, tmp_path):
    models = configure(agent_env, "$NOPE_UNSET")
    done = run_print(agent_env, tmp_path)
    assert done.returncode == 1 and fake_llm.requests == []
    assert (f'No API key for provider "fake": {models} apiKey: "$NOPE_UNSET" reads the environment variable '
            "NOPE_UNSET, which is not set. Set") in done.stderr.decode(), done.stderr


def test_an_unset_variable_in_auth_json_is_named(agent_env, fake_llm, tmp_path):
    models = configure(agent_env, "${NOPE_EMPTY}")
    auth = Path(agent_env["AGENT_FORGE_DIR"]) / "auth.json"
    auth.write_text(json.dumps({"fake": {"type": "api_key", "key": "$NOPE_AUTH"}}))
    auth.chmod(0o600)
    done = run_print({**agent_env, "NOPE_EMPTY": ""}, tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 1 and fake_llm.requests == []
    assert (f'{auth}: "$NOPE_AUTH" reads the environment variable NOPE_AUTH, which is not set; {models} apiKey: '
            '"${NOPE_EMPTY}" reads the environment variable NOPE_EMPTY, which is empty.') in stderr, stderr


async def test_an_unset_variable_in_a_header_fails_the_request_naming_it(agent_env, fake_llm, tmp_path):
    models = configure(agent_env, "fake-key", headers={"X-Token": "Bearer ${NOPE_TOKEN}"})
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("hello", timeout=60)
    assert assistant_errors(events) == [
        f"{models}: the value of header 'X-Token' for provider \"fake\" cannot be resolved: \"${{NOPE_TOKEN}}\" "
        "reads the environment variable NOPE_TOKEN, which is not set, so the request was not sent"]
    assert fake_llm.requests == []  # not sent without the header the server wants
