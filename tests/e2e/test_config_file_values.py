"""End to end: values in `settings.json` and `models.json` that the agent cannot use (numbers out of range, a
value of the wrong type or range for any documented setting, an empty or BOM-prefixed file, a bad `baseUrl`)
are reported on stderr as `<path>:<line>: ...` and replaced by the default; start-up never fails (issue 10)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_forge.modes.rpc.client import RpcClient

ROOT = Path(__file__).resolve().parents[2]
HUGE_INT = "9" * 5000  # past Python's 4300-digit limit of int(): json.loads raises ValueError on it
OUT_OF_RANGE = "number out of range"


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


async def rpc_start(env, cwd) -> tuple[dict[str, Any], str]:
    """Start `--mode rpc`, return the `get_state` response and everything the agent wrote to stderr."""
    client = await RpcClient.start(["--mode", "rpc", "--no-session"], cwd=str(cwd), env=env)
    async with client:
        state = await client.send({"type": "get_state"})
    return state, client.stderr.decode()


def agent_dir(env) -> Path:
    return Path(env["AGENT_FORGE_DIR"])


def replace_value(path: Path, key: str, literal: str, occurrence: int = 0) -> int:
    """Set the `occurrence`-th `"key": <value>` of the file to `literal` (raw JSON text); returns its line."""
    lines = path.read_text().splitlines()
    hits = [i for i, line in enumerate(lines) if f'"{key}":' in line]
    index = hits[occurrence]
    lines[index] = re.sub(rf'("{key}": )[^,}}\]]+', lambda m: m[1] + literal, lines[index])
    path.write_text("\n".join(lines) + "\n")
    return index + 1


def write_settings(env, data: dict[str, Any]) -> Path:
    path = agent_dir(env) / "settings.json"
    current = json.loads(path.read_text())
    path.write_text(json.dumps({**current, **data}, indent=2) + "\n")
    return path


# -- 1. numbers out of range -------------------------------------------------------------------------------

def out_of_range_files(env) -> list[str]:
    """settings.json and models.json with numbers Python's json reads as infinity or cannot read at all;
    returns the `path:line: key: number out of range` texts the report must contain."""
    settings = write_settings(env, {"httpIdleTimeoutMs": 1, "retry": {"maxRetries": 1},
                                    "compaction": {"reserveTokens": 1}, "pluginSetupTimeoutMs": 1})
    expected = [f"{settings}:{replace_value(settings, key, literal)}: {dotted}: {OUT_OF_RANGE}"
                for key, dotted, literal in [("httpIdleTimeoutMs", "httpIdleTimeoutMs", "1e400"),
                                             ("maxRetries", "retry.maxRetries", "1e400"),
                                             ("reserveTokens", "compaction.reserveTokens", "-1e400"),
                                             ("pluginSetupTimeoutMs", "pluginSetupTimeoutMs", HUGE_INT)]]
    models = agent_dir(env) / "models.json"
    for key, literal in [("contextWindow", "1e400"), ("maxTokens", HUGE_INT)]:
        line = replace_value(models, key, literal)
        expected.append(f"{models}:{line}: providers.fake.models[0].{key}: {OUT_OF_RANGE}")
    return expected


async def test_out_of_range_numbers_are_reported_and_rpc_starts_with_the_defaults(agent_env, tmp_path):
    expected = out_of_range_files(agent_env)
    state, stderr = await rpc_start(agent_env, tmp_path)
    assert "Traceback" not in stderr
    for text in expected:
        assert f"Warning: {text}" in stderr
    model = state["data"]["model"]
    assert (model["id"], model["contextWindow"], model["maxTokens"]) == ("fake-model", 128000, 16384)


def test_out_of_range_numbers_do_not_stop_print_mode(agent_env, fake_llm, tmp_path):
    expected = out_of_range_files(agent_env)
    fake_llm.set_script([{"text": "fine"}])
    result = run(agent_env, tmp_path, "-p", "--no-session", "hi")
    stderr = result.stderr.decode()
    assert result.returncode == 0 and result.stdout == b"fine\n", stderr
    assert all(text in stderr for text in expected)
    assert fake_llm.requests[0]["body"]["max_completion_tokens"] == 16384  # the default, not infinity


# -- 2. every documented setting is checked ------------------------------------------------------------------

# One bad value per documented key (nested keys dotted); the message must name the key.
BAD_SETTINGS: dict[str, Any] = {
    "defaultProvider": 5, "defaultModel": [], "defaultThinkingLevel": "maximal", "enabledModels": 7,
    "steeringMode": "some", "followUpMode": 1, "shellPath": "", "shellCommandPrefix": 3,
    "httpIdleTimeoutMs": -5, "modelThinkingLevels": "high", "defaultContextWindows": [],
    "retry.enabled": "yes", "retry.maxRetries": 1.5, "retry.baseDelayMs": -1, "retry.maxAgentDelayMs": "1s",
    "compaction.enabled": 0, "compaction.reserveTokens": -2, "compaction.keepRecentTokens": "many",
    "compaction.strategy": "lossy", "compaction.preserveRecent": -3, "compaction.compressionRatio": 7,
    "compaction.modelOverrides": "x", "enableSkillCommands": "no",
    "projectResources": "off", "defaultProjectTrust": "sometimes", "pluginSetupTimeoutMs": 0,
    "pluginHandlerTimeoutMs": "10s", "skills": "dir",
    "prompts": {}, "defaultTools": 3, "plugins": "p", "approvals": "sometimes", "approvalTimeoutMs": 0,
    "theme": 5, "hideThinkingBlock": "false", "quietStartup": "true",
}


def nested(flat: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for dotted, value in flat.items():
        *parents, leaf = dotted.split(".")
        node = data
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return data


def documented_settings() -> set[str]:
    """Every settings key the docs name: the settings tables of docs/compaction.md and docs/resources.md, the
    README's settings list (outside its parentheses), and keys the docs introduce as "settings `<key>`" / "(settings <key>, ...)"."""
    keys: set[str] = set()
    for doc in ("docs/compaction.md", "docs/resources.md"):
        text = (ROOT / doc).read_text()
        section = text[text.index("## Settings"):]
        section = section[:section.index("\n## ", 4)] if "\n## " in section[4:] else section
        for row in re.findall(r"^\| (`[^|]+)\|", section, re.M):
            keys.update(re.findall(r"`([\w.]+)`", row))
    readme = (ROOT / "README.md").read_text()
    bullet = readme[readme.index("- `settings.json` (agent dir"):readme.index("over RPC never rewrite it")]
    keys.update(re.findall(r"`([\w.]+)`", re.sub(r"\([^()]*\)", "", bullet)))  # not the explanations
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        for group in re.findall(r"\(settings ([^)]*)\)", text):
            keys.update(re.findall(r"`([\w.]+)`", group))
        keys.update(re.findall(r"settings `?([a-z]+[A-Z][\w.]*[A-Za-z])`?", text))
    return {k for k in keys if re.fullmatch(r"[a-z][A-Za-z]*(\.[a-z][A-Za-z]*)?", k) and not k.endswith(".json")}


def key_line(text: str, dotted: str | tuple[str, ...]) -> int:
    """Line of the last key of `dotted` (or of a tuple of keys) in indented JSON text: each key is searched for
    after its parent's line."""
    lines, start = text.splitlines(), 0
    for part in dotted.split(".") if isinstance(dotted, str) else dotted:
        start = next(i for i in range(start, len(lines)) if lines[i].lstrip().startswith(f'"{part}":'))
    return start + 1


def settings_read_in_the_source() -> set[str]:
    """Every settings key the product reads by name: `Settings`' own accessors (`self.get("key")`), reads of a
    settings object or of one file's dict elsewhere (`settings.get("key")`, `global_raw.get("key")`), and the
    keys `/settings` offers."""
    from agent_forge.modes.interactive.config_commands import SETTINGS

    own = re.compile(r'self\.get\("([a-z][\w.]*)"')
    read = re.compile(r'(?:settings|_raw|\{\}\))(?:\(\))?\.get\("([a-z][\w.]*)"')
    keys = set(SETTINGS)
    for path in (ROOT / "src" / "agent_forge").rglob("*.py"):
        for line in path.read_text().splitlines():
            keys.update(own.findall(line) if path.name == "settings.py" else [])
            keys.update(read.findall(line) if "settings" in line or "_raw" in line else [])
    return keys


def test_the_table_of_bad_values_covers_every_setting_the_source_reads():
    read = settings_read_in_the_source()
    assert {"hideThinkingBlock", "quietStartup", "theme", "pluginHandlerTimeoutMs", "retry.maxRetries"} <= read
    assert read <= set(BAD_SETTINGS), read - set(BAD_SETTINGS)
    from agent_forge.coding.settings import _KNOWN, _PER_FILE  # the checker's own tables

    assert read <= {*_KNOWN, *_PER_FILE}, read - {*_KNOWN, *_PER_FILE}


def test_the_table_of_bad_values_covers_every_documented_setting():
    documented = documented_settings()
    assert {"compaction.compressionRatio", "enabledModels", "retry.maxAgentDelayMs", "httpIdleTimeoutMs",
            "pluginSetupTimeoutMs", "defaultProjectTrust"} <= documented  # the parsing found them
    assert documented <= set(BAD_SETTINGS), documented - set(BAD_SETTINGS)


async def test_a_bad_value_of_every_documented_setting_is_reported_once_with_its_line(agent_env, tmp_path):
    path = agent_dir(agent_env) / "settings.json"
    path.write_text(json.dumps(nested(BAD_SETTINGS), indent=2) + "\n")
    text = path.read_text()
    state, stderr = await rpc_start(agent_env, tmp_path)
    assert state["success"] is True and "Traceback" not in stderr
    warnings = [line for line in stderr.splitlines() if line.startswith("Warning: ")]
    for dotted in BAD_SETTINGS:
        named = [line for line in warnings if f": {dotted} must be " in line]  # one warning, with its line
        assert len(named) == 1 and named[0].startswith(
            f"Warning: {path}:{key_line(text, dotted)}: {dotted} must be "), (dotted, named)


async def test_bad_values_inside_model_overrides_and_thinking_levels_are_reported(agent_env, tmp_path):
    path = write_settings(agent_env, {
        "compaction": {"modelOverrides": {"fake/ok": {"keepRecentTokens": -1}, "fake/x.y": 4}},
        "modelThinkingLevels": {"fake/fake-model": "extreme"}, "defaultContextWindows": {"fake/fake-model": "big"},
        "enabledModels": "fake-model, fake/*"})  # a comma-separated string, as --models takes: valid
    text = path.read_text()
    _, stderr = await rpc_start(agent_env, tmp_path)
    for where, problem in [
            (("compaction", "modelOverrides", "fake/ok", "keepRecentTokens"), "must be a non-negative integer"),
            (("compaction", "modelOverrides", "fake/x.y"), "must be an object"),
            (("modelThinkingLevels", "fake/fake-model"), "must be one of off, minimal"),
            (("defaultContextWindows", "fake/fake-model"), "must be a positive token count")]:
        assert f"Warning: {path}:{key_line(text, where)}: {'.'.join(where)} {problem}" in stderr
    assert "enabledModels" not in stderr


# -- 3. models.json values ---------------------------------------------------------------------------------------

async def test_models_json_problems_found_at_load(agent_env, fake_llm, tmp_path):
    models = agent_dir(agent_env) / "models.json"
    data = json.loads(models.read_text())
    provider = data["providers"]["fake"]
    provider["baseUrl"] = fake_llm.base_url_openai.rstrip("/") + "/chat/completions"
    base = dict(provider["models"][0])
    provider["models"] = [base, {**base, "id": "hot", "samplingParams": "hot"},
                          {**base, "id": "half", "contextWindow": 1.5},
                          {**base, "id": "port", "baseUrl": "http://127.0.0.1:99999/v1"}]
    models.write_text(json.dumps(data, indent=2) + "\n")
    lines = models.read_text().splitlines()

    def line_of(fragment: str, after: int = 0) -> int:
        return next(i for i, line in enumerate(lines) if i >= after and fragment in line) + 1

    fake_llm.set_script([{"text": "ok"}])
    client = await RpcClient.start(["--mode", "rpc", "--no-session"], cwd=str(tmp_path), env=agent_env)
    async with client:
        available = await client.send({"type": "get_available_models"})
        events = await client.prompt_and_wait("hi")
    stderr = client.stderr.decode()
    where, base_url = "providers.fake", fake_llm.base_url_openai.rstrip("/")
    expected = [
        (line_of('"baseUrl"'), f'{where}: "baseUrl" ends in "/chat/completions", a path the agent appends itself; '
                               f'using "{base_url}"'),
        (line_of('"samplingParams"'), f'{where}.models[1]: "samplingParams" must be an object'),
        (line_of('"contextWindow": 1.5'), f'{where}.models[2]: "contextWindow" must be a positive integer '
                                          "(tokens), got 1.5"),
        (line_of("99999"), f'{where}.models[3]: "baseUrl" must be a URL whose port is a number from 1 to 65535'),
    ]
    for line, text in expected:
        assert f"Warning: {models}:{line}: {text}" in stderr
    ids = [m["id"] for m in available["data"]["models"] if m["provider"] == "fake"]
    assert ids == ["fake-model"]
    assert events[-1]["type"] in ("agent_settled", "agent_end")
    assert fake_llm.requests[0]["path"].endswith("/v1/chat/completions")
    assert "/chat/completions/chat/completions" not in fake_llm.requests[0]["path"]


@pytest.mark.parametrize("content", [b"", b"  \n"])
async def test_an_empty_models_json_is_reported_as_empty(agent_env, tmp_path, content):
    models = agent_dir(agent_env) / "models.json"
    models.write_bytes(content)
    state, stderr = await rpc_start(agent_env, tmp_path)
    assert f"Warning: {models}: the file is empty" in stderr
    assert state["data"]["model"] is None


# -- 4. a UTF-8 byte order mark ---------------------------------------------------------------------------------

async def test_a_leading_bom_is_accepted_in_every_config_file(agent_env, tmp_path):
    directory = agent_dir(agent_env)
    write_settings(agent_env, {"steeringMode": "all"})
    (directory / "auth.json").write_text(json.dumps({"anthropic": {"type": "api_key", "key": "k"}}))
    (directory / "trust.json").write_text("{}")
    for name in ("settings.json", "models.json", "auth.json", "trust.json"):
        path = directory / name
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    client = await RpcClient.start(["--mode", "rpc", "--no-session"], cwd=str(tmp_path), env=agent_env)
    async with client:
        state = await client.send({"type": "get_state"})
        available = await client.send({"type": "get_available_models"})
    stderr = client.stderr.decode()
    assert "BOM" not in stderr and "invalid JSON" not in stderr, stderr
    assert state["data"]["model"]["id"] == "fake-model"  # models.json and settings.json were read
    assert state["data"]["steeringMode"] == "all"
    assert "anthropic" in {m["provider"] for m in available["data"]["models"]}  # and auth.json


def test_wrong_typed_interface_settings_are_reported_once_in_print_mode(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Fine."}])
    path = write_settings(agent_env, {"hideThinkingBlock": "false", "quietStartup": "true", "theme": 5})
    text = path.read_text()
    result = run(agent_env, tmp_path, "-p", "hi")
    stderr = result.stderr.decode()
    assert result.returncode == 0 and result.stdout.decode().strip() == "Fine.", stderr
    for key, value in (("hideThinkingBlock", '"false"'), ("quietStartup", '"true"'), ("theme", "5")):
        warning = f"Warning: {path}:{key_line(text, key)}: {key} must be "
        assert stderr.count(warning) == 1 and f", got {value}; using the default" in stderr, (key, stderr)


def test_a_wrong_list_in_either_file_is_reported_with_its_file_and_the_other_files_list_still_counts(
        agent_env, fake_llm, tmp_path):
    """`skills`, `prompts` and `defaultTools` are read from each file on its own: the project's wrong value is
    reported against the project file and dropped, while the agent dir's list is still used."""
    fake_llm.set_script([{"text": "Fine."}])
    write_settings(agent_env, {"defaultTools": ["read", "ls"]})
    project = tmp_path / ".agent-forge" / "agent" / "settings.json"
    project.parent.mkdir(parents=True)
    project.write_text(json.dumps({"defaultTools": "bash", "prompts": [""]}, indent=2) + "\n")
    result = run(agent_env, tmp_path, "-p", "hi")
    stderr = result.stderr.decode()
    assert result.returncode == 0, stderr
    assert stderr.count(f"Warning: {project}:2: defaultTools must be a list of tool names, got \"bash\"; "
                        "using the default") == 1, stderr
    assert stderr.count(f"Warning: {project}:3: prompts must be a list of paths, got [\"\"]") == 1, stderr
    assert stderr.count("defaultTools") == 1 and stderr.count("prompts") == 1, stderr
    tools = [tool["function"]["name"] for tool in fake_llm.requests[0]["body"]["tools"]]
    assert tools == ["read", "ls"]
