"""End to end: plugins in ACP mode (`tests/plugins/fixtures/e2e_plugin.py` loaded with `-e`): their commands
end their turn, `confirm` / `select` are permission requests, `input` / `editor` resolve with their defaults
and say so, notifications are shown; a dialog the editor never answers ends with a cancel."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from support.acp_client import AcpClient
from support.stale_source import rewrite_in_the_same_second, with_bytecode_cache


PLUGIN = str(Path(__file__).resolve().parents[1] / "plugins" / "fixtures" / "e2e_plugin.py")


def shown(client: AcpClient, session_id: str) -> str:
    return "".join(u["content"]["text"] for u in client.updates(session_id, "agent_thought_chunk"))


async def ready(agent_env, project, **capabilities) -> tuple[AcpClient, str]:
    client = await AcpClient.start(["-e", PLUGIN], cwd=str(project), env=agent_env)
    await client.initialize(**capabilities)
    session_id = await client.new_session(str(project))
    await client.wait_for(lambda: "session_start startup" in shown(client, session_id))  # after the answer
    return client, session_id


async def test_plugin_dialogs_become_permission_requests_or_defaults(agent_env, project, fake_llm):
    client, session_id = await ready(agent_env, project)
    commands = client.updates(session_id, "available_commands_update")[-1]["availableCommands"]
    assert "ask" in {c["name"] for c in commands}
    client.on_request["session/request_permission"] = lambda params: {
        "outcome": {"outcome": "selected", "optionId": params["options"][1]["optionId"]}}
    assert await client.prompt(session_id, "/ask select") == {"stopReason": "end_turn"}
    assert 'select -> "Block"' in shown(client, session_id)
    assert await client.prompt(session_id, "/ask confirm") == {"stopReason": "end_turn"}
    assert "confirm -> false" in shown(client, session_id)  # the second option is No
    asked = client.requests("session/request_permission")
    assert [o["name"] for o in asked[0]["options"]] == ["Allow", "Block"]
    assert asked[1]["toolCall"]["title"] == "Sure?" and "It cannot be undone" in str(asked[1]["toolCall"]["content"])
    assert await client.prompt(session_id, "/ask input") == {"stopReason": "end_turn"}
    assert "the editor offers no forms" in shown(client, session_id) and "input -> null" in shown(client, session_id)
    assert await client.prompt(session_id, "/decorate") == {"stopReason": "end_turn"}
    assert "careful" in shown(client, session_id)
    assert client.updates(session_id, "session_info_update")[-1]["title"] == "agent-forge e2e"
    assert len(fake_llm.requests) == 0  # plugin commands never reach the model
    assert await client.close() == 0


async def test_a_dialog_the_editor_never_answers_ends_with_its_timeout_or_a_cancel(agent_env, project, fake_llm):
    client, session_id = await ready(agent_env, project)
    client.on_request["session/request_permission"] = lambda params: asyncio.get_running_loop().create_future()
    assert await client.prompt(session_id, "/ask confirm 0.2") == {"stopReason": "end_turn"}
    assert "confirm -> false" in shown(client, session_id)
    reply = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                     "prompt": [{"type": "text", "text": "/ask select"}]})
    await client.wait_for(lambda: len(client.requests("session/request_permission")) == 2)
    client.notify("session/cancel", {"sessionId": session_id})
    assert await asyncio.wait_for(reply, 2.0) == {"stopReason": "cancelled"}  # the command was cancelled
    assert await client.prompt(session_id, "/echo still here") == {"stopReason": "end_turn"}
    assert "echo: still here" in shown(client, session_id)
    assert await client.close() == 0


async def test_input_and_editor_are_forms_when_the_editor_takes_them(agent_env, project, fake_llm):
    client, session_id = await ready(agent_env, project, elicitation={"form": {}})
    answers = iter([{"action": "accept", "content": {"text": "Ada"}}, {"action": "decline"}])
    client.on_request["elicitation/create"] = lambda params: next(answers)
    await client.prompt(session_id, "/ask input")
    await client.prompt(session_id, "/ask editor")
    assert 'input -> "Ada"' in shown(client, session_id) and "editor -> null" in shown(client, session_id)
    first, second = client.requests("elicitation/create")
    assert first["mode"] == "form" and first["sessionId"] == session_id and first["message"] == "Name?"
    assert first["requestedSchema"]["properties"]["text"] == {"type": "string", "title": "Name?",
                                                               "description": "type here"}
    assert second["requestedSchema"]["properties"]["text"]["default"] == "line 1\nline 2"
    assert await client.close() == 0


async def test_a_malformed_dialog_answer_gives_the_default_and_says_why(agent_env, project, fake_llm):
    from support.acp_client import Unchecked

    client, session_id = await ready(agent_env, project, elicitation={"form": {}})
    client.on_request["session/request_permission"] = lambda params: Unchecked({"outcome": "selected"})
    client.on_request["elicitation/create"] = lambda params: Unchecked({"action": 7})
    assert await client.prompt(session_id, "/ask confirm") == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "/ask input") == {"stopReason": "end_turn"}
    said = shown(client, session_id)
    assert "confirm -> false" in said and "input -> null" in said
    assert ("A plugin's question got its default: the editor's answer to session/request_permission is malformed: "
            '"outcome" must be an object') in said
    assert "the editor's answer to elicitation/create is malformed: \"action\" must be a string" in said
    assert await client.close() == 0


HELLO = '''
def setup(plugin):
    @plugin.command("hello", description="says which version runs")
    async def hello(args, ctx):
        ctx.ui.notify("hello from VERSION")
'''


@pytest.mark.real_process  # a Python of its own, with the bytecode cache on as users have it
async def test_a_new_session_runs_the_plugins_current_source(agent_env, project, fake_llm, tmp_path):
    plugin = tmp_path / "hello.py"
    plugin.write_text(HELLO.replace("VERSION", "v1"))
    client = await AcpClient.start(["-e", str(plugin)], cwd=str(project), env=with_bytecode_cache(agent_env))
    await client.initialize()
    first = await client.new_session(str(project))
    assert await client.prompt(first, "/hello") == {"stopReason": "end_turn"}
    rewrite_in_the_same_second(plugin, HELLO.replace("VERSION", "v2"))
    second = await client.new_session(str(project))  # loads the plugins again, in the same process
    assert await client.prompt(second, "/hello") == {"stopReason": "end_turn"}
    assert "hello from v1" in shown(client, first) and "hello from v2" in shown(client, second)
    assert await client.close() == 0
