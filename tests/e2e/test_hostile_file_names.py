"""End to end: a file or directory name holding an escape sequence and a newline never reaches the terminal raw.
Every warning and error naming a path (settings.json of the agent dir and the project, models.json, auth.json,
a plugin, a skill, a prompt template, a context file, mcp.json, a session file) writes it with `path_text`: the
escape as `\\x1b`, the newline as `\\n`, so each message stays one line and nothing after the newline can pass
for a message of its own (print mode's stderr; the terminal UI's start-up warnings: test_interactive_config.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from e2e.test_cli_sessions import write_session

EVIL = "x\x1b[31mRED\nFORGED "
"""A name part: a colour escape, then a newline and the start of what would read as a line of its own."""
SHOWN = "x\\x1b[31mRED\\nFORGED "


def hostile_agent_dir(env: dict[str, str], root: Path) -> Path:
    """The agent dir moved to a name holding `EVIL`, with every configuration file it reads broken somehow."""
    agent = root / f"agent-{EVIL}dir"
    Path(env["AGENT_FORGE_DIR"]).rename(agent)
    env["AGENT_FORGE_DIR"] = str(agent)
    models = json.loads((agent / "models.json").read_text())
    models["providers"][f"bro{EVIL}ken"] = {"api": "openai-completions"}  # no baseUrl, no models: a problem
    (agent / "models.json").write_text(json.dumps(models))
    settings = json.loads((agent / "settings.json").read_text())
    (agent / "settings.json").write_text(json.dumps({**settings, "retry": {"enabled": "yes"}}))
    for name in ("auth.json", "mcp.json", "keybindings.json"):
        (agent / name).write_text("{broken")
    (agent / "prompts").mkdir()
    (agent / "prompts" / "two words.md").write_text("not a command name")
    (agent / "skills" / "sk").mkdir(parents=True)
    (agent / "skills" / "sk" / "SKILL.md").write_text("---\nname: Not A Name\n---\nbody\n")
    (agent / "plugins").mkdir()
    (agent / "plugins" / "broken.py").write_text("raise RuntimeError('plugin boom')\n")
    (agent / "AGENTS.md").mkdir()  # a context file that is a directory
    return agent


def hostile_project(root: Path) -> Path:
    project = root / f"proj-{EVIL}dir"
    (project / ".agent-forge" / "agent").mkdir(parents=True)
    (project / ".agent-forge" / "agent" / "settings.json").write_text("{broken")
    return project


def run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


def warning_lines(stderr: bytes) -> list[str]:
    lines = stderr.decode().splitlines()
    assert "\x1b" not in stderr.decode(), "a raw escape reached the terminal"
    strays = [line for line in lines if line.startswith("FORGED")]
    assert not strays, f"a path's newline split a message: {strays}"
    return lines


def test_every_configuration_warning_writes_a_hostile_path_on_one_line(fake_llm, agent_env, tmp_path):
    agent = hostile_agent_dir(agent_env, tmp_path)
    project = hostile_project(tmp_path)
    fake_llm.set_script([{"text": "still answered"}])
    result = run(agent_env, project, "-p", "hi")
    assert result.returncode == 0 and b"still answered" in result.stdout, result.stderr.decode()
    lines = warning_lines(result.stderr)
    shown_agent = str(agent).replace(EVIL, SHOWN)
    shown_project = str(project).replace(EVIL, SHOWN)
    expected = {  # one warning line per file, each naming the whole path as `path_text` writes it
        "project settings.json": f"{shown_project}/.agent-forge/agent/settings.json: invalid JSON",
        "settings.json": f"{shown_agent}/settings.json:1: retry.enabled must be",
        "models.json": f"{shown_agent}/models.json",
        "a models.json key": f"providers.bro{SHOWN}ken",
        "auth.json": f"{shown_agent}/auth.json: invalid JSON",
        "mcp.json": f"{shown_agent}/mcp.json: invalid JSON",
        "a prompt template": f"{shown_agent}/prompts/two words.md: prompt template not loaded",
        "a skill": f"{shown_agent}/skills/sk/SKILL.md: skill not loaded",
        "a plugin": f"{shown_agent}/plugins/broken.py: RuntimeError: plugin boom",
        "a context file": f"{shown_agent}/AGENTS.md: context file not loaded",
    }
    missing = {what: text for what, text in expected.items()
               if not any(line.startswith("Warning: ") and text in line for line in lines)}
    assert not missing, f"{missing}\nstderr:\n" + "\n".join(lines)


def test_a_damaged_session_file_in_a_hostile_directory_is_named_on_one_line(fake_llm, agent_env, tmp_path):
    directory = tmp_path / f"sessions-{EVIL}dir"
    path = write_session(directory, "aaaa0000-0000-4000-8000-000000000001", ["q1", "a1"], mtime=1_000_000,
                         cwd=str(tmp_path))
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join([*lines[:3], b"not json", *lines[3:]]))
    fake_llm.set_script([{"text": "resumed"}])
    result = run(agent_env, tmp_path, "--session", str(path), "-p", "again")
    assert result.returncode == 0 and b"resumed" in result.stdout, result.stderr.decode()
    shown = str(path).replace(EVIL, SHOWN)
    lines = warning_lines(result.stderr)
    assert f"Warning: session file {shown}: skipped 1 damaged line ({shown}:4)" in "\n".join(lines), lines


def test_an_unreadable_session_path_is_an_error_on_one_line(agent_env, tmp_path):
    missing = tmp_path / f"gone-{EVIL}.jsonl"
    result = run(agent_env, tmp_path, "--session", str(missing), "-p", "hi")
    assert result.returncode != 0
    lines = warning_lines(result.stderr)
    assert any(SHOWN in line for line in lines), lines


def test_mcp_remove_names_a_hostile_mcp_json_on_one_line(agent_env, tmp_path):
    agent = hostile_agent_dir(agent_env, tmp_path)
    result = run(agent_env, tmp_path, "mcp", "remove", "nosuch")
    assert result.returncode != 0
    (line,) = warning_lines(result.stderr)
    assert f"{agent}/mcp.json".replace(EVIL, SHOWN) in line, line


async def test_tool_results_name_a_hostile_path_on_one_line_without_control_bytes(fake_llm, agent_env, tmp_path):
    """Tool results quoted the path raw: a name's newline split the model's line (`FORGED ...` read as a line of
    its own) and its escape code went to the model and to every client that shows the result."""
    from agent_forge.modes.rpc.client import RpcClient

    (tmp_path / f"dir-{EVIL}").mkdir()
    (tmp_path / f"file-{EVIL}").write_text("plain\n")
    calls = [("read", {"path": f"missing-{EVIL}"}), ("read", {"path": f"dir-{EVIL}"}),
             ("read", {"path": f"nodir-{EVIL}/"}), ("write", {"path": f"file-{EVIL}/inner.txt", "content": "x"}),
             ("write", {"path": f"new-{EVIL}", "content": "x"}), ("edit", {"path": f"gone-{EVIL}", "edits": [
                 {"oldText": "a", "newText": "b"}]}), ("edit", {"path": f"file-{EVIL}", "edits": [
                     {"oldText": "absent", "newText": "b"}]}), ("ls", {"path": f"nodir-{EVIL}"}),
             ("find", {"pattern": "*", "path": f"nodir-{EVIL}"}), ("grep", {"pattern": "x", "path": f"nodir-{EVIL}"})]
    fake_llm.set_script([{"tool_calls": [{"name": name, "arguments": args} for name, args in calls]},
                         {"text": "done"}])
    async with await RpcClient.start(["--no-session", "--tools", "read,write,edit,ls,find,grep"], cwd=str(tmp_path),
                                     env=agent_env) as client:
        events = await client.prompt_and_wait("touch the hostile files")
    ends = {e["toolCallId"]: e["result"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_end"}
    texts = [ends[e["toolCallId"]] for e in events if e["type"] == "tool_execution_start"]  # in call order
    shown = str(tmp_path)
    assert texts == [
        f"File not found: {shown}/missing-{SHOWN}",
        f"{shown}/dir-{SHOWN} is a directory, not a file.",
        f"nodir-{SHOWN}/: no such directory (a path ending in / names a directory; without it, it names a file)",
        f"Not a directory: {shown}/file-{SHOWN} (a file is in the way of {shown}/file-{SHOWN}/inner.txt)",
        f"Successfully wrote 1 byte to new-{SHOWN}",
        f"File not found: {shown}/gone-{SHOWN}",
        texts[6], f"Path not found: {shown}/nodir-{SHOWN}", f"Path not found: {shown}/nodir-{SHOWN}",
        f"Path not found: {shown}/nodir-{SHOWN}"], texts
    assert texts[6].startswith(f"Could not find oldText in file-{SHOWN}. It must match")
    sent = [m["content"] for m in fake_llm.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert len(sent) == len(calls) and not any("\x1b" in str(text) or "\n" in str(text) for text in sent + texts)
