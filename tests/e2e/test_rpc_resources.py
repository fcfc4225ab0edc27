"""End to end: resources, system-prompt sources, tool selection and settings problems, seen through the real
CLI in RPC mode and the request bodies the loopback server received."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def agent_dir(env: dict[str, str]) -> Path:
    return Path(env["AGENT_FORGE_DIR"])


def make_project(tmp_path: Path) -> Path:
    project = tmp_path / "work" / "project"
    project.mkdir(parents=True)
    return project


async def start(env, cwd, *args):
    return await RpcClient.start(list(args), cwd=str(cwd), env=env)


def system_prompt(request: dict) -> str:
    first = request["body"]["messages"][0]
    assert first["role"] in ("system", "developer")
    return first["content"]


def last_user_text(request: dict) -> str:
    user = [m for m in request["body"]["messages"] if m["role"] == "user"][-1]
    content = user["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def tool_names(request: dict) -> list[str]:
    return [tool["function"]["name"] for tool in request["body"].get("tools", [])]


async def test_project_skill_and_user_template_are_listed_and_expand(agent_env, fake_llm, tmp_path):
    project = make_project(tmp_path)
    write(agent_dir(agent_env) / "prompts" / "greet.md",
          "---\ndescription: Greet people\n---\nGreet $1, then ${@:2}.\n")
    skill_file = write(project / ".agent-forge" / "agent" / "skills" / "hello-skill" / "SKILL.md",
                       "---\nname: hello-skill\ndescription: Says hello formally\n---\nAlways bow first.\n")
    fake_llm.set_script([{"text": "Greeted."}, {"text": "Bowed."}, {"text": "Passed through."}])
    async with await start(agent_env, project) as client:
        commands = (await client.send({"type": "get_commands"}))["data"]["commands"]
        await client.prompt_and_wait('/greet Alice Bob "Carol Ann"')
        await client.prompt_and_wait("/skill:hello-skill be formal")
        await client.prompt_and_wait("/nonexistent foo bar")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    by_name = {c["name"]: c for c in commands}
    assert set(by_name) == {"greet", "skill:hello-skill"}
    greet = by_name["greet"]
    assert greet["source"] == "prompt" and greet["description"] == "Greet people" and greet["location"] == "user"
    assert greet["sourceInfo"] == {"path": str(agent_dir(agent_env) / "prompts" / "greet.md"), "source": "local",
                                   "scope": "user", "origin": "top-level",
                                   "baseDir": str(agent_dir(agent_env) / "prompts")}
    assert greet["path"] == greet["sourceInfo"]["path"]
    skill = by_name["skill:hello-skill"]
    assert skill["source"] == "skill" and skill["location"] == "project" and skill["path"] == str(skill_file)
    assert skill["sourceInfo"]["scope"] == "project"
    first, second, third = fake_llm.requests
    assert last_user_text(first) == "Greet Alice, then Bob Carol Ann."
    assert "Always bow first.\n</skill>\n\nbe formal" in last_user_text(second)
    assert last_user_text(second).endswith("be formal")
    assert last_user_text(third) == "/nonexistent foo bar"
    assert "hello-skill" in system_prompt(first) and str(skill_file) in system_prompt(first)
    assert [m["content"][0]["text"] for m in messages if m["role"] == "user"][0].startswith("Greet Alice")


async def test_template_and_skill_text_is_trimmed_like_the_reference(agent_env, fake_llm, tmp_path):
    """The file's final newline (and blank lines around the body) are not sent: `/greet Alice` is exactly
    `Hello Alice!`, with or without frontmatter, CRLF included."""
    write(agent_dir(agent_env) / "prompts" / "greet.md", "\n\nHello $1!\n\n")
    write(agent_dir(agent_env) / "prompts" / "crlf.md", "---\r\ndescription: d\r\n---\r\n\r\nBye $1.\r\n")
    write(agent_dir(agent_env) / "skills" / "tidy" / "SKILL.md",
          "---\nname: tidy\ndescription: Tidy up\n---\n\nKeep it tidy.\n\n\n")
    fake_llm.set_script([{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}])
    async with await start(agent_env, tmp_path) as client:
        for text in ("/greet Alice", "/crlf Bob\n", "/skill:tidy", "/skill:tidy  now  \n"):
            await client.prompt_and_wait(text)
    sent = [last_user_text(request) for request in fake_llm.requests]
    assert sent[:2] == ["Hello Alice!", "Bye Bob."]
    assert sent[2].endswith("\n\nKeep it tidy.\n</skill>") and sent[3].endswith("Keep it tidy.\n</skill>\n\nnow")


async def test_follow_up_and_steer_expand_templates(agent_env, fake_llm, tmp_path):
    write(agent_dir(agent_env) / "prompts" / "more.md", "Also do $1.\n")
    fake_llm.set_script([{"text": "Working on it for a while", "hang_after": 3},
                         {"text": "Follow-up done."}])
    async with await start(agent_env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "Start"})
        await asyncio.to_thread(fake_llm.wait_for, lambda: fake_llm.requests[0]["hanging"])
        reply = await client.send({"type": "follow_up", "message": "/more testing"})
        fake_llm.release_hangs()
        await client.wait_for("agent_settled")
    assert reply["success"] is True and reply["data"] == {"disposition": "queued"}
    assert last_user_text(fake_llm.requests[1]) == "Also do testing."


async def test_context_files_from_agent_dir_and_parents_reach_the_system_prompt(agent_env, fake_llm, tmp_path):
    project = make_project(tmp_path)
    write(agent_dir(agent_env) / "AGENTS.md", "GLOBAL: prefer tabs.")
    write(tmp_path / "work" / "AGENTS.md", "PARENT: run the linter.")
    write(project / "CLAUDE.md", "PROJECT: tests live in t/.")
    fake_llm.set_script([{"text": "ok"}, {"text": "ok"}])
    async with await start(agent_env, project) as client:
        await client.prompt_and_wait("hi")
    async with await start(agent_env, project, "--no-context-files") as client:
        await client.prompt_and_wait("hi")
    with_files, without = (system_prompt(r) for r in fake_llm.requests)
    assert with_files.index("GLOBAL: prefer tabs.") < with_files.index("PARENT: run the linter.") < with_files.index(
        "PROJECT: tests live in t/.")
    assert str(project / "CLAUDE.md") in with_files
    assert "GLOBAL" not in without and "PARENT" not in without and "PROJECT" not in without


async def test_system_prompt_sources(agent_env, fake_llm, tmp_path):
    project = make_project(tmp_path)
    write(project / "AGENTS.md", "CONTEXT STAYS.")
    write(agent_dir(agent_env) / "SYSTEM.md", "USER SYSTEM PROMPT.")
    write(project / ".agent-forge" / "agent" / "APPEND_SYSTEM.md", "PROJECT APPENDIX.")
    extra = write(tmp_path / "extra.txt", "APPENDED FROM A FILE.")
    fake_llm.set_script([{"text": "ok"}] * 3)
    runs = [(), ("--system-prompt", "FLAG PROMPT.", "--append-system-prompt", str(extra),
                 "--append-system-prompt", "AND TEXT."), ("--no-project-resources",)]
    for args in runs:
        async with await start(agent_env, project, *args) as client:
            await client.prompt_and_wait("hi")
    files, flags, no_project = (system_prompt(r) for r in fake_llm.requests)
    assert files.startswith("USER SYSTEM PROMPT.") and "PROJECT APPENDIX." in files and "CONTEXT STAYS." in files
    assert "You are agent-forge" not in files
    assert flags.startswith("FLAG PROMPT.") and "APPENDED FROM A FILE.\n\nAND TEXT." in flags
    assert "PROJECT APPENDIX." not in flags and "USER SYSTEM PROMPT." not in flags
    assert no_project.startswith("USER SYSTEM PROMPT.") and "PROJECT APPENDIX." not in no_project
    assert "CONTEXT STAYS." in no_project


async def test_no_skills_and_no_prompt_templates(agent_env, fake_llm, tmp_path):
    write(agent_dir(agent_env) / "prompts" / "greet.md", "Hello!\n")
    write(agent_dir(agent_env) / "skills" / "s1" / "SKILL.md", "---\ndescription: First skill\n---\nS1\n")
    explicit = write(tmp_path / "elsewhere" / "only.md", "Only this one.\n")
    fake_llm.set_script([{"text": "ok"}])
    async with await start(agent_env, tmp_path, "--no-skills", "--no-prompt-templates",
                           "--prompt-template", str(explicit)) as client:
        commands = (await client.send({"type": "get_commands"}))["data"]["commands"]
        await client.prompt_and_wait("/greet")
    assert [(c["name"], c["location"], c["sourceInfo"]["scope"]) for c in commands] == [("only", "path", "temporary")]
    request = fake_llm.requests[0]
    assert last_user_text(request) == "/greet" and "First skill" not in system_prompt(request)


async def test_tool_flags_decide_what_the_model_is_offered(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "ok"}] * 4)
    for args in [(), ("--tools", "read,grep,find,ls"), ("--no-builtin-tools",), ("--no-tools",)]:
        async with await start(agent_env, tmp_path, *args) as client:
            await client.prompt_and_wait("hi")
    offered = [tool_names(r) for r in fake_llm.requests]
    assert offered == [["read", "bash", "edit", "write"], ["read", "grep", "find", "ls"], [], []]
    assert "- grep:" in system_prompt(fake_llm.requests[1])


async def test_grep_find_ls_respect_gitignore(agent_env, fake_llm, tmp_path):
    project = make_project(tmp_path)
    write(project / ".gitignore", "dist/\n*.secret\n")
    write(project / "src" / "main.py", "TODO: ship it\n")
    write(project / "dist" / "bundle.py", "TODO: generated\n")
    write(project / "token.secret", "TODO: never show\n")
    fake_llm.set_script([
        {"tool_calls": [{"name": "grep", "arguments": {"pattern": "TODO"}},
                        {"name": "find", "arguments": {"pattern": "*.py"}},
                        {"name": "ls", "arguments": {}}]},
        {"text": "Found one TODO."},
    ])
    async with await start(agent_env, project, "--tools", "grep,find,ls") as client:
        events = await client.prompt_and_wait("Find the TODOs")
    results = {e["toolName"]: e["result"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_end"}
    assert results["grep"] == "src/main.py:1: TODO: ship it"
    assert results["find"] == "src/main.py"
    assert results["ls"].splitlines() == [".gitignore", "dist/ (ignored)", "src/", "token.secret (ignored)"]
    tool_messages = [m for m in fake_llm.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert "src/main.py:1: TODO: ship it" in tool_messages[0]["content"]


async def test_invalid_settings_are_reported_and_the_session_starts(agent_env, fake_llm, tmp_path):
    project = make_project(tmp_path)
    settings_path = write(project / ".agent-forge" / "agent" / "settings.json", '{"steeringMode": "all",')
    skills = write(project / ".agent-forge" / "agent" / "skills" / "bad" / "SKILL.md", "---\nname: bad\n---\nx\n")
    fake_llm.set_script([{"text": "Still working."}])
    async with await start(agent_env, project) as client:
        state = (await client.send({"type": "get_state"}))["data"]
        events = await client.prompt_and_wait("hi")
    stderr = client.stderr.decode()
    assert f"{settings_path}: invalid JSON" in stderr
    assert f"{skills}: skill not loaded" in stderr and "description" in stderr
    assert state["steeringMode"] == "one-at-a-time" and state["model"]["id"] == "fake-model"
    assert events[-1] == {"type": "agent_settled", "aborted": False}


async def test_untrusted_project_keeps_text_resources_but_not_code_settings(agent_env, fake_llm, tmp_path):
    project = make_project(tmp_path)
    write(project / ".agent-forge" / "agent" / "settings.json",
          json.dumps({"followUpMode": "all", "shellCommandPrefix": "source ./evil.sh"}))
    write(project / ".agent-forge" / "agent" / "prompts" / "local.md", "Local template.\n")
    async with await start(agent_env, project) as client:
        state = (await client.send({"type": "get_state"}))["data"]
        commands = (await client.send({"type": "get_commands"}))["data"]["commands"]
    assert state["followUpMode"] == "all" and [c["name"] for c in commands] == ["local"]
    assert "shellCommandPrefix skipped" in client.stderr.decode() and "--approve" in client.stderr.decode()
    async with await start(agent_env, project, "--approve") as client:
        await client.send({"type": "get_state"})
    assert "skipped" not in client.stderr.decode()
