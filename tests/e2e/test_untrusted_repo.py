"""End to end: a repository the user merely opened cannot stop, stall or starve the agent at start-up. Its
text resources load without trust, so link loops, links to devices and to standard input, FIFOs and absurdly
nested JSON must each end in a warning naming the file, and the session must serve the client as usual."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

DEEP_JSON = "[" * 100_000 + "]" * 100_000


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def make_project(tmp_path: Path) -> Path:
    project = tmp_path / "work" / "project"
    (project / ".agent-forge" / "agent").mkdir(parents=True)
    return project


def project_file(project: Path, *parts: str) -> Path:
    path = project.joinpath(".agent-forge", "agent", *parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


async def start(env: dict[str, str], cwd: Path) -> RpcClient:
    return await RpcClient.start([], cwd=str(cwd), env=env)


async def answers_a_prompt(client: RpcClient) -> dict:
    """get_state answers, and a prompt runs to the end against the fake server."""
    state = await client.send({"type": "get_state"})
    events = await client.prompt_and_wait("hi")
    assert state["success"] is True and state["data"]["model"]["id"] == "fake-model"
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    return state


async def test_skill_link_loop_and_link_to_usr_do_not_stop_start_up(agent_env, fake_llm, tmp_path):
    project = make_project(tmp_path)
    skills = project_file(project, "skills")
    write(skills / "real-skill" / "SKILL.md", "---\nname: real-skill\ndescription: A real one\n---\nDo it.\n")
    (skills / "a").mkdir()
    (skills / "a" / "up").symlink_to("..")
    if Path("/usr").is_dir():
        (skills / "usr").symlink_to("/usr")
    fake_llm.set_script([{"text": "Fine."}])
    async with await start(agent_env, project) as client:
        commands = (await client.send({"type": "get_commands"}))["data"]["commands"]
        await answers_a_prompt(client)
    stderr = client.stderr.decode()
    assert "Traceback" not in stderr and "Too many levels" not in stderr
    assert f"{skills / 'a' / 'up'}: not searched again" in stderr and "symbolic link loop" in stderr
    assert "skill:real-skill" in [c["name"] for c in commands]


async def test_settings_linked_to_stdin_leave_the_clients_commands_alone(agent_env, fake_llm, tmp_path):
    project = make_project(tmp_path)
    settings = project_file(project, "settings.json")
    settings.symlink_to("/dev/stdin")
    fake_llm.set_script([{"text": "Fine."}])
    async with await start(agent_env, project) as client:
        await answers_a_prompt(client)
    stderr = client.stderr.decode()
    # the mode claims stdin before settings load, so /dev/stdin is the null device by then (never the client's pipe)
    assert f"Warning: {settings}: not a regular file but a character device" in stderr


@pytest.mark.parametrize("content, expected", [
    (None, "not a regular file but a character device"),
    (DEEP_JSON, "invalid JSON: arrays and objects nested more than"),
    (json.dumps({"theme": "x" * (1024 * 1024)}), "larger than 1 MB (the limit for configuration files)"),
])
async def test_unusable_project_settings_are_a_warning(agent_env, fake_llm, tmp_path, content, expected):
    project = make_project(tmp_path)
    settings = project_file(project, "settings.json")
    if content is None:
        settings.symlink_to("/dev/zero")  # read whole, this never ends
    else:
        settings.write_text(content)
    fake_llm.set_script([{"text": "Fine."}])
    async with await start(agent_env, project) as client:
        await answers_a_prompt(client)
    assert f"Warning: {settings}: {expected}" in client.stderr.decode()


async def test_context_prompt_and_system_files_that_are_not_regular_files(agent_env, fake_llm, tmp_path):
    project = make_project(tmp_path)
    os.mkfifo(project / "AGENTS.md")  # opened blocking, this would wait for a writer forever
    (project / "CLAUDE.md").write_text("Repo rule.")
    project_file(project, "SYSTEM.md").symlink_to("/dev/zero")
    project_file(project, "prompts", "p.md").symlink_to("/dev/stdin")
    fake_llm.set_script([{"text": "Fine."}])
    async with await start(agent_env, project) as client:
        await answers_a_prompt(client)
    stderr = client.stderr.decode()
    assert f"{project / 'AGENTS.md'}: context file not loaded: not a regular file but a FIFO" in stderr
    assert f"{project_file(project, 'SYSTEM.md')}: not loaded: not a regular file but a character device" in stderr
    assert f"{project_file(project, 'prompts', 'p.md')}: prompt template not loaded: not a regular file" in stderr
    system = fake_llm.requests[0]["body"]["messages"][0]["content"]
    assert "Repo rule." in system and "You are agent-forge" in system


async def test_deeply_nested_models_json_is_named_when_no_model_is_left(agent_env, fake_llm, tmp_path):
    project = make_project(tmp_path)
    models = Path(agent_env["AGENT_FORGE_DIR"]) / "models.json"
    models.write_text(DEEP_JSON)
    async with await start(agent_env, project) as client:
        state = await client.send({"type": "get_state"})
        reply = await client.send({"type": "prompt", "message": "hi"})
    assert state["success"] is True and state["data"]["model"] is None
    assert reply["success"] is False and reply["error"].startswith("No model available")
    assert f"{models} had errors, so some of its models may have been skipped: invalid JSON" in reply["error"]
    assert f"Warning: {models}: invalid JSON: arrays and objects nested more than" in client.stderr.decode()
    assert fake_llm.requests == []


async def test_a_project_settings_file_of_a_hundred_thousand_bad_values_is_reported_briefly(agent_env, fake_llm,
                                                                                             tmp_path):
    project = make_project(tmp_path)
    values = ",\n".join(["1e400"] * 50_000)
    keys = ",\n".join(f'"k": {n}' for n in range(50_000))
    settings = write(project_file(project, "settings.json"), f'{{"x": [{values}],\n "y": {{{keys}}}}}')
    fake_llm.set_script([{"text": "Fine."}])
    async with await start(agent_env, project) as client:
        await answers_a_prompt(client)
    lines = [line for line in client.stderr.decode().splitlines() if str(settings) in line]
    assert len(lines) == 100 + 1  # at most 100 problems listed per file, then a count
    assert lines[0] == (f'Warning: {settings}:50002: y: duplicate key "k" (50000 times: lines 50001, 50002, ... and '
                        "100000); only the last one (line 100000) is used, the earlier ones ignored")
    assert lines[1].startswith(f"Warning: {settings}:1: x[0]: number out of range")
    # 50,000 numbers out of range, one duplicate key, the unknown key "y" ("x" is gone with its numbers)
    assert lines[-1] == f"Warning: {settings}: 49902 more problems not listed (their keys use the default)"
