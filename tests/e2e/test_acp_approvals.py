"""End to end: approvals in ACP mode (`coding/approvals.py`): the session mode `ask` (default), `full` and
`read-only`; questions as `session/request_permission`; a client that never answers; the `approvals` setting."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from support.acp_client import AcpClient


def answer(option: str):
    return lambda params: {"outcome": {"outcome": "selected", "optionId": option}}


def ends(client: AcpClient, session_id: str) -> dict[str, str]:
    return {u["toolCallId"]: u["status"] for u in client.updates(session_id, "tool_call_update")
            if u.get("status") in ("completed", "failed")}


def tool_texts(request: dict) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
            for m in request["body"]["messages"] if m["role"] == "tool"]


async def ready(env, project) -> tuple[AcpClient, str, dict]:
    client = await AcpClient.start([], cwd=str(project), env=env)
    await client.initialize()
    created = await client.request("session/new", {"cwd": str(project), "mcpServers": []})
    return client, created["sessionId"], created


async def test_ask_mode_asks_before_commands_and_a_rejection_reaches_the_model(agent_env, project, fake_llm):
    (project / "notes.txt").write_text("n\n")
    fake_llm.set_script([
        {"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "notes.txt"}},
                        {"id": "b1", "name": "bash", "arguments": {"command": "touch rejected"}}]},
        {"tool_calls": [{"id": "b2", "name": "bash", "arguments": {"command": "touch approved"}}]},
        {"text": "ok"},
    ])
    client, session_id, created = await ready(agent_env, project)
    assert created["modes"]["currentModeId"] == "ask"
    assert [m["id"] for m in created["modes"]["availableModes"]] == ["ask", "full", "read-only"]
    answers = iter(["reject", "allow_once"])
    client.on_request["session/request_permission"] = lambda params: answer(next(answers))(params)
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    asked = client.requests("session/request_permission")
    assert [a["toolCall"]["toolCallId"] for a in asked] == ["b1", "b2"]  # read ran without a question
    assert asked[0]["toolCall"]["title"] == "touch rejected" and asked[0]["toolCall"]["kind"] == "execute"
    assert [o["kind"] for o in asked[0]["options"]] == ["allow_once", "allow_always", "reject_once"]
    assert ends(client, session_id) == {"r1": "completed", "b1": "failed", "b2": "completed"}
    assert not (project / "rejected").exists() and (project / "approved").exists()
    assert "The user rejected this bash call" in tool_texts(fake_llm.requests[1])[-1]
    assert await client.close() == 0


async def test_allow_always_is_remembered_for_the_tool(agent_env, project, fake_llm):
    fake_llm.set_script([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "true"}}]},
        {"tool_calls": [{"id": "b2", "name": "bash", "arguments": {"command": "true"}},
                        {"id": "w1", "name": "write", "arguments": {"path": "f", "content": "x"}}]},
        {"text": "ok"},
    ])
    client, session_id, _ = await ready(agent_env, project)
    client.on_request["session/request_permission"] = answer("allow_always")
    await client.prompt(session_id, "go")
    assert [a["toolCall"]["toolCallId"] for a in client.requests("session/request_permission")] == ["b1", "w1"]
    assert await client.close() == 0


async def test_read_only_and_full_modes(agent_env, project, fake_llm):
    (project / "seen.txt").write_text("s\n")
    fake_llm.set_script([
        {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "f", "content": "x"}},
                        {"id": "r1", "name": "read", "arguments": {"path": "seen.txt"}}]},
        {"text": "refused"},
        {"tool_calls": [{"id": "w2", "name": "write", "arguments": {"path": "g", "content": "y"}}]},
        {"text": "written"},
    ])
    client, session_id, _ = await ready(agent_env, project)
    assert await client.request("session/set_mode", {"sessionId": session_id, "modeId": "read-only"}) == {}
    await client.prompt(session_id, "one")
    assert ends(client, session_id) == {"w1": "failed", "r1": "completed"}
    assert "the session is read-only" in tool_texts(fake_llm.requests[1])[0]
    await client.request("session/set_mode", {"sessionId": session_id, "modeId": "full"})
    await client.prompt(session_id, "two")
    assert (project / "g").read_text() == "y" and not (project / "f").exists()
    assert client.requests("session/request_permission") == []
    assert [u["currentModeId"] for u in client.updates(session_id, "current_mode_update")] == ["read-only", "full"]
    from support.acp_client import AcpReplyError

    with pytest.raises(AcpReplyError) as caught:
        await client.request("session/set_mode", {"sessionId": session_id, "modeId": "yolo"})
    assert caught.value.code == -32602
    assert await client.close() == 0


async def test_a_client_that_never_answers_a_permission_request_can_still_cancel(agent_env, project, fake_llm):
    fake_llm.set_script([{"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "touch x"}}]},
                         {"text": "never"}])
    client, session_id, _ = await ready(agent_env, project)
    never = asyncio.get_running_loop().create_future()
    client.on_request["session/request_permission"] = lambda params: never
    reply = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]})
    await client.wait_for(lambda: client.requests("session/request_permission"))
    client.notify("session/cancel", {"sessionId": session_id})
    assert await asyncio.wait_for(reply, 1.0) == {"stopReason": "cancelled"}
    assert ends(client, session_id) == {"b1": "failed"} and not (project / "x").exists()
    assert await client.close() == 0


async def test_the_approvals_setting_is_the_users_not_an_untrusted_projects(agent_env_factory, project, fake_llm):
    env = agent_env_factory(settings={"approvals": "full"})
    client, _, created = await ready(env, project)
    assert created["modes"]["currentModeId"] == "full"
    assert await client.close() == 0
    (project / ".agent-forge" / "agent").mkdir(parents=True)
    (project / ".agent-forge" / "agent" / "settings.json").write_text('{"approvals": "full"}')
    client, _, created = await ready(agent_env_factory(), project)
    assert created["modes"]["currentModeId"] == "ask"
    assert await client.close() == 0


async def test_the_approvals_flag_sets_the_start_mode(agent_env, project, fake_llm):
    client = await AcpClient.start(["--approvals", "read-only"], cwd=str(project), env=agent_env)
    await client.initialize()
    created = await client.request("session/new", {"cwd": str(project), "mcpServers": []})
    assert created["modes"]["currentModeId"] == "read-only"
    assert await client.close() == 0


async def test_set_mode_moves_the_core_policy_both_ways_and_keeps_what_always_remembered(agent_env, project,
                                                                                          fake_llm):
    bash = lambda call_id, command: {"tool_calls": [{"id": call_id, "name": "bash",  # noqa: E731
                                                     "arguments": {"command": command}}]}
    write = {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "f", "content": "x"}}]}
    fake_llm.set_script([bash("b1", "touch one"), {"text": "1"}, bash("b2", "touch two"), {"text": "2"},
                         bash("b3", "touch three"), {"text": "3"}, write, {"text": "4"},
                         bash("b4", "touch three four"), {"text": "5"}, bash("b5", "touch five"), {"text": "6"}])
    client, session_id, _ = await ready(agent_env, project)
    asked = lambda: [a["toolCall"]["toolCallId"] for a in client.requests("session/request_permission")]  # noqa: E731

    async def mode(mode_id: str) -> None:
        assert await client.request("session/set_mode", {"sessionId": session_id, "modeId": mode_id}) == {}

    await client.prompt(session_id, "ask")  # the default: asked
    await mode("full")
    await client.prompt(session_id, "full")  # looser: not asked
    await mode("ask")
    client.on_request["session/request_permission"] = answer("allow_always")
    await client.prompt(session_id, "ask again")  # stricter again: asked, and bash "touch three" is remembered
    assert asked() == ["b1", "b3"]
    await mode("read-only")
    await client.prompt(session_id, "read-only")  # refused without a question
    assert ends(client, session_id)["w1"] == "failed" and not (project / "f").exists()
    await mode("ask")
    await client.prompt(session_id, "remembered")  # "always" outlived the mode changes
    assert asked() == ["b1", "b3"] and (project / "four").exists()
    loaded = await client.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    assert loaded["modes"]["currentModeId"] == "ask"  # the open session's policy, not the start's
    await mode("full")
    client.on_request["session/request_permission"] = answer("reject")
    await client.prompt(session_id, "full again")
    assert asked() == ["b1", "b3"] and (project / "five").exists()
    assert [u["currentModeId"] for u in client.updates(session_id, "current_mode_update")] == [
        "full", "ask", "read-only", "ask", "full"]
    assert [(project / n).exists() for n in ("one", "two", "three")] == [True, True, True]
    assert await client.close() == 0


async def test_always_is_never_offered_for_a_wrapper_so_its_next_command_is_asked(agent_env, project, fake_llm):
    fake_llm.set_script([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "bash -c 'echo hi'"}}]},
        {"tool_calls": [{"id": "b2", "name": "bash", "arguments": {"command": "bash -c 'touch pwned'"}}]},
        {"tool_calls": [{"id": "b3", "name": "bash", "arguments": {"command": "python3 -c 'print(1)'"}}]},
        {"text": "ok"},
    ])
    client, session_id, _ = await ready(agent_env, project)
    answers = iter(["allow_always", "reject", "reject"])  # a client answering "always" anyway
    client.on_request["session/request_permission"] = lambda params: answer(next(answers))(params)
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    asked = client.requests("session/request_permission")
    assert [a["toolCall"]["toolCallId"] for a in asked] == ["b1", "b2", "b3"]
    assert all([o["kind"] for o in a["options"]] == ["allow_once", "reject_once"] for a in asked)
    assert not (project / "pwned").exists()
    assert await client.close() == 0


@pytest.mark.parametrize("mode, runs", [("read-only", False), ("full", True)])
async def test_a_mode_change_decides_a_waiting_question_and_a_late_answer_is_ignored(agent_env, project, fake_llm,
                                                                                     mode, runs):
    fake_llm.set_script([{"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "touch m.txt"}}]},
                         {"text": "done"}])
    client, session_id, _ = await ready(agent_env, project)
    late = asyncio.get_running_loop().create_future()
    client.on_request["session/request_permission"] = lambda params: late
    reply = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]})
    await client.wait_for(lambda: client.requests("session/request_permission"))
    await client.request("session/set_mode", {"sessionId": session_id, "modeId": mode})
    assert await asyncio.wait_for(reply, 5) == {"stopReason": "end_turn"}  # no answer was needed
    [asked] = client.requests("session/request_permission")
    withdrawn = [m["params"] for m in client.incoming() if m.get("method") == "$/cancel_request"]
    assert withdrawn == [{"requestId": [m for m in client.incoming()
                                        if m.get("method") == "session/request_permission"][0]["id"]}]
    late.set_result({"outcome": {"outcome": "selected", "optionId": "allow_once"}})  # comes too late: ignored
    assert ends(client, session_id) == {"b1": "completed" if runs else "failed"}
    assert (project / "m.txt").exists() is runs
    if not runs:
        assert "the session is read-only" in tool_texts(fake_llm.requests[1])[-1]
    assert await client.close() == 0
    assert (project / "m.txt").exists() is runs


def call_story(client: AcpClient, call_id: str) -> list[str]:
    """What the editor saw of tool call `call_id`, in order: `tool_call <status>`, `update <status>`, `asked`."""
    story = []
    for direction, message in client.messages:
        params = message.get("params") or {}
        update = params.get("update") or {}
        if direction == "in" and message.get("method") == "session/request_permission" \
                and params["toolCall"]["toolCallId"] == call_id:
            story.append(f"asked {params['toolCall']['status']}")
        elif direction == "in" and update.get("toolCallId") == call_id and "status" in update:
            story.append(f"{update['sessionUpdate']} {update['status']}")
    return story


async def test_a_call_waits_pending_while_asked_and_runs_only_once_allowed(agent_env, project, fake_llm):
    fake_llm.set_script([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "touch rejected"}}]},
        {"tool_calls": [{"id": "b2", "name": "bash", "arguments": {"command": "touch approved"}}]},
        {"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "approved"}}]},
        {"text": "ok"},
    ])
    client, session_id, _ = await ready(agent_env, project)
    answers = iter(["reject", "allow_once"])
    client.on_request["session/request_permission"] = lambda params: answer(next(answers))(params)
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    assert call_story(client, "b1") == ["tool_call pending", "asked pending", "tool_call_update failed"]
    assert call_story(client, "b2") == ["tool_call pending", "asked pending", "tool_call_update in_progress",
                                        "tool_call_update completed"]
    assert call_story(client, "r1") == ["tool_call pending", "tool_call_update in_progress",
                                        "tool_call_update completed"]  # not asked: it runs at once
    assert await client.close() == 0
