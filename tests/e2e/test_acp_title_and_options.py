"""End to end: the editor's title (`session_info_update`) and model picker (`config_option_update`) follow the
session whatever changed it (a plugin, `/name`, `/model`, a model change that clamps the level, a tree move),
each change told once and nothing told when nothing changed (`modes/acp/shown.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.acp_client import AcpClient
from support.model_entries import model_entry

PLUGIN = str(Path(__file__).resolve().parents[1] / "plugins" / "fixtures" / "e2e_plugin.py")
MODELS = [model_entry("deep"), {**model_entry("shallow"), "thinkingLevels": ["off", "minimal", "low"]}]


async def ready(env: dict[str, str], project: Path, *args: str) -> tuple[AcpClient, str]:
    client = await AcpClient.start(list(args), cwd=str(project), env=env)
    await client.initialize()
    return client, await client.new_session(str(project))


def titles(client: AcpClient, session_id: str) -> list[Any]:
    return [u["title"] for u in client.updates(session_id, "session_info_update")]


def pickers(client: AcpClient, session_id: str) -> list[list[tuple[str, str]]]:
    """Each `config_option_update` as its (option id, current value) pairs."""
    return [[(o["id"], o["currentValue"]) for o in u["configOptions"]]
            for u in client.updates(session_id, "config_option_update")]


async def test_a_plugin_that_names_the_session_retitles_it_once(agent_env, project, fake_llm):
    client, session_id = await ready(agent_env, project, "-e", PLUGIN)
    assert await client.prompt(session_id, "/rename Login bug") == {"stopReason": "end_turn"}
    assert titles(client, session_id) == ["Login bug"]
    assert await client.prompt(session_id, "/rename Login bug") == {"stopReason": "end_turn"}  # the same name
    assert await client.prompt(session_id, "/name Login bug") == {"stopReason": "end_turn"}
    assert titles(client, session_id) == ["Login bug"]  # nothing changed: nothing told
    assert await client.prompt(session_id, "/name Other") == {"stopReason": "end_turn"}
    assert titles(client, session_id) == ["Login bug", "Other"]  # `/name` once, not also by its command
    listed = await client.request("session/list", {"cwd": str(project)})
    assert listed["sessions"][0]["title"] == "Other"
    assert fake_llm.requests == []
    assert await client.close() == 0


async def test_a_plugins_window_title_is_one_printable_line_told_once(agent_env, project, fake_llm):
    client, session_id = await ready(agent_env, project, "-e", PLUGIN)
    for _ in range(2):
        assert await client.prompt(session_id, "/title \x1b]0;pwned\x07 build \u202eok") == {"stopReason": "end_turn"}
    assert titles(client, session_id) == ["]0;pwned build ok"]
    assert await client.prompt(session_id, "/rename ]0;pwned build ok") == {"stopReason": "end_turn"}
    assert titles(client, session_id) == ["]0;pwned build ok"]  # the editor shows it already
    assert await client.close() == 0


async def test_a_model_change_that_clamps_the_level_updates_the_picker_once(agent_env_factory, project, fake_llm):
    client, session_id = await ready(agent_env_factory(model_id="deep", models=MODELS), project)
    changed = await client.request("session/set_config_option", {"sessionId": session_id, "configId": "thinking",
                                                                 "value": "high"})
    assert changed["configOptions"][1]["currentValue"] == "high"
    assert pickers(client, session_id) == []  # the answer carries the options: no update besides
    assert await client.prompt(session_id, "/model fake/shallow") == {"stopReason": "end_turn"}
    assert pickers(client, session_id) == [[("model", "fake/shallow"), ("thinking", "low")]]  # clamped high -> low
    [update] = client.updates(session_id, "config_option_update")
    assert [o["value"] for o in update["configOptions"][1]["options"]] == ["off", "minimal", "low"]
    assert await client.prompt(session_id, "/model fake/shallow") == {"stopReason": "end_turn"}  # no change
    for config_id, value in (("model", "fake/deep"), ("thinking", "high"), ("model", "fake/shallow")):
        answer = await client.request("session/set_config_option", {"sessionId": session_id,
                                                                    "configId": config_id, "value": value})
    assert [o["currentValue"] for o in answer["configOptions"]] == ["fake/shallow", "low"]  # clamped again
    assert len(pickers(client, session_id)) == 1  # none told again: the answers carried them
    assert fake_llm.requests == []
    assert await client.close() == 0


async def test_a_tree_move_to_another_branch_retitles_and_updates_the_picker(agent_env_factory, project, fake_llm):
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    client, session_id = await ready(agent_env_factory(model_id="deep", models=MODELS), project)
    for config_id, value in (("model", "fake/deep"), ("thinking", "high")):  # recorded on the branch
        await client.request("session/set_config_option", {"sessionId": session_id, "configId": config_id,
                                                           "value": value})
    assert await client.prompt(session_id, "/name Before") == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "first") == {"stopReason": "end_turn"}
    for command in ("/model fake/shallow", "/name After"):
        assert await client.prompt(session_id, command) == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "second") == {"stopReason": "end_turn"}
    assert titles(client, session_id) == ["Before", "After"]
    assert len(pickers(client, session_id)) == 1  # `/model fake/shallow`
    assert await client.prompt(session_id, "/tree 2") == {"stopReason": "end_turn"}  # the answer "one"
    assert titles(client, session_id) == ["Before", "After", "Before"]
    assert pickers(client, session_id)[1:] == [[("model", "fake/deep"), ("thinking", "high")]]
    assert await client.prompt(session_id, "/tree 2") == {"stopReason": "end_turn"}  # where it is: no change
    assert len(titles(client, session_id)) == 3 and len(pickers(client, session_id)) == 2
    assert await client.close() == 0


async def test_a_tree_move_to_an_unnamed_branch_gives_back_the_first_prompts_title(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "one"}, {"text": "two"}, {"text": "three"}])
    client, session_id = await ready(agent_env, project)
    assert await client.prompt(session_id, "fix the login\nwith details") == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "/name Login") == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "second") == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "/tree 2") == {"stopReason": "end_turn"}  # before the name
    assert titles(client, session_id) == ["fix the login", "Login", "fix the login"]
    assert await client.prompt(session_id, "/name Again") == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "/tree 1") == {"stopReason": "end_turn"}  # before the first prompt
    assert titles(client, session_id)[3:] == ["Again", None]  # no name, no prompt: no title
    assert await client.prompt(session_id, "start over") == {"stopReason": "end_turn"}
    assert titles(client, session_id)[5:] == ["start over"]  # a fresh start's first prompt titles it
    assert await client.close() == 0


async def test_a_long_first_prompt_titles_the_session_alike_live_and_listed(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "one"}])
    client, session_id = await ready(agent_env, project)
    assert await client.prompt(session_id, "fix " + "x" * 300 + "\nwith details") == {"stopReason": "end_turn"}
    title = "fix " + "x" * 196  # one line, cut at a session name's 200 characters (docs/acp.md)
    assert titles(client, session_id) == [title]
    listed = await client.request("session/list", {"cwd": str(project)})
    assert [s["title"] for s in listed["sessions"]] == [title]
    assert await client.close() == 0
