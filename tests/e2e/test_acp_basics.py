"""End to end: `agent-forge --mode acp` driven by a raw JSON-RPC client; every message is checked against the
official ACP schema (tests/support/acp_client.py). Lifecycle, text and thinking, stop reasons, errors."""

from __future__ import annotations

import pytest

from support.acp_client import AcpClient, AcpReplyError


async def start(agent_env, project, *args) -> AcpClient:
    return await AcpClient.start(list(args), cwd=str(project), env=agent_env)


async def test_initialize_answers_version_1_capabilities_and_agent_info(agent_env, project):
    client = await start(agent_env, project)
    result = await client.request("initialize", {"protocolVersion": 7, "clientCapabilities": {}})
    assert result["protocolVersion"] == 1  # the agent's version: a client that cannot speak it disconnects
    assert result["agentInfo"]["name"] == "agent-forge" and result["agentInfo"]["version"]
    caps = result["agentCapabilities"]
    assert caps["loadSession"] is True and caps["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {}}
    assert caps["promptCapabilities"] == {"image": True, "audio": False, "embeddedContext": True}
    assert await client.close() == 0


async def test_a_text_answer_with_thinking_streams_chunks_and_ends_the_turn(agent_env, project, fake_llm):
    fake_llm.set_script([{"thinking": "Let me think.", "text": "Hello there, friend."}])
    client = await start(agent_env, project)
    await client.initialize()
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "hi") == {"stopReason": "end_turn"}
    thoughts = "".join(u["content"]["text"] for u in client.updates(session_id, "agent_thought_chunk"))
    answer = "".join(u["content"]["text"] for u in client.updates(session_id, "agent_message_chunk"))
    assert (thoughts, answer) == ("Let me think.", "Hello there, friend.")
    assert len(client.updates(session_id, "agent_message_chunk")) == 3  # one chunk per delta, as they came
    [usage, *_] = client.updates(session_id, "usage_update")[-1:]
    assert usage["size"] == 128000 and usage["used"] > 0 and usage["cost"]["currency"] == "USD"
    assert fake_llm.requests[0]["body"]["messages"][-1]["content"] in ("hi", [{"type": "text", "text": "hi"}])
    assert await client.close() == 0


@pytest.mark.parametrize(("spec", "expected"), [
    ({"text": "cut", "stop_reason": "max_tokens"}, "max_tokens"),
    ({"text": "", "stop_reason": "refusal"}, "refusal"),
])
async def test_stop_reasons_follow_the_model(agent_env_factory, project, fake_llm, spec, expected):
    fake_llm.set_script([spec])
    client = await start(agent_env_factory(api="anthropic-messages"), project)
    await client.initialize()
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "go") == {"stopReason": expected}
    assert await client.close() == 0


async def test_a_provider_error_is_a_json_rpc_error_with_its_message(agent_env_factory, project, fake_llm):
    fake_llm.set_script([{"status": 400, "body": {"error": {"message": "prompt is too weird"}}}])
    client = await start(agent_env_factory(settings={"retry": {"enabled": False}}), project)
    await client.initialize()
    session_id = await client.new_session(str(project))
    with pytest.raises(AcpReplyError) as caught:
        await client.prompt(session_id, "go")
    assert "prompt is too weird" in caught.value.message and caught.value.data == {"stopReason": "error"}
    assert await client.close() == 0


async def test_cancel_mid_stream_answers_cancelled_at_once(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "one two three four", "hang_after": 4}])
    client = await start(agent_env, project)
    await client.initialize()
    session_id = await client.new_session(str(project))
    reply = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                     "prompt": [{"type": "text", "text": "go"}]})
    await client.wait_for(lambda: client.updates(session_id, "agent_message_chunk"))
    client.notify("session/cancel", {"sessionId": session_id})
    import asyncio

    assert await asyncio.wait_for(reply, 1.0) == {"stopReason": "cancelled"}
    assert await client.close() == 0


async def test_retries_are_shown_while_they_happen(agent_env_factory, project, fake_llm):
    fake_llm.set_script([{"status": 503, "body": {"error": {"message": "overloaded now"}}}, {"text": "Fine."}])
    client = await start(agent_env_factory(settings={"retry": {"baseDelayMs": 1}}), project)
    await client.initialize()
    session_id = await client.new_session(str(project))
    assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    thoughts = "".join(u["content"]["text"] for u in client.updates(session_id, "agent_thought_chunk"))
    assert "overloaded now" in thoughts and "(retry 1 of 3)" in thoughts
    assert await client.close() == 0


async def test_a_client_taking_notices_gets_retries_as_notices(agent_env_factory, project, fake_llm):
    fake_llm.set_script([{"status": 503, "body": {"error": {"message": "overloaded now"}}}, {"text": "Fine."}])
    client = await start(agent_env_factory(settings={"retry": {"baseDelayMs": 1}}), project)
    await client.initialize(session={"notices": {}})
    session_id = await client.new_session(str(project))
    await client.prompt(session_id, "go")
    [notice] = client.updates(session_id, "notice")
    assert notice["severity"] == "warning" and "overloaded now" in notice["title"]
    assert not client.updates(session_id, "agent_thought_chunk")
    assert await client.close() == 0


async def test_the_first_prompt_titles_the_session(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "a"}, {"text": "b"}])
    client = await start(agent_env, project)
    await client.initialize()
    session_id = await client.new_session(str(project))
    await client.prompt(session_id, "Fix the login bug\nsome detail")
    await client.prompt(session_id, "and more")
    assert client.updates(session_id, "session_info_update") == [
        {"sessionUpdate": "session_info_update", "title": "Fix the login bug"}]
    assert await client.close() == 0


async def test_without_a_model_key_a_prompt_is_auth_required(agent_env, project):
    from pathlib import Path

    Path(agent_env["AGENT_FORGE_DIR"], "models.json").unlink()  # the only provider with a key
    client = await start(agent_env, project)
    await client.initialize()
    session_id = await client.new_session(str(project))
    with pytest.raises(AcpReplyError) as caught:
        await client.prompt(session_id, "hi")
    assert caught.value.code == -32000 and "API key" in caught.value.message
    assert await client.close() == 0
    assert "no provider has an API key" in client.stderr()


async def test_auth_methods_name_each_key_and_authenticate_checks_it(agent_env, project):
    import json as json_module
    from pathlib import Path

    client = await start(agent_env, project)
    result = await client.initialize()
    methods = {m["id"]: m for m in result["authMethods"]}
    assert "ANTHROPIC_API_KEY" in methods["anthropic"]["description"] and "openai" in methods
    with pytest.raises(AcpReplyError) as caught:
        await client.request("authenticate", {"methodId": "anthropic"})
    assert caught.value.code == -32000 and "auth.json" in caught.value.message
    Path(agent_env["AGENT_FORGE_DIR"], "auth.json").write_text(
        json_module.dumps({"anthropic": {"type": "api_key", "key": "sk-test"}}))
    assert await client.request("authenticate", {"methodId": "anthropic"}) == {}
    with pytest.raises(AcpReplyError) as caught:
        await client.request("authenticate", {"methodId": "nobody"})
    assert caught.value.code == -32602
    assert await client.close() == 0


async def test_a_prompt_and_its_cancel_in_one_write_answers_cancelled(agent_env, project, fake_llm):
    fake_llm.set_script([{"match": "again", "text": "after"}] + [{"text": "one two three four", "hang_after": 4}] * 3)
    client = await start(agent_env, project)
    await client.initialize()
    session_id = await client.new_session(str(project))
    for _ in range(3):  # the race had several outcomes: each must be `cancelled`
        written: list[bytes] = []
        client.send_raw = written.append  # both lines leave in one write
        reply = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                         "prompt": [{"type": "text", "text": "go"}]})
        client.notify("session/cancel", {"sessionId": session_id})
        del client.send_raw
        client.send_raw(b"".join(written))
        assert await reply == {"stopReason": "cancelled"}
    assert await client.prompt(session_id, "again") == {"stopReason": "end_turn"}
    assert await client.close() == 0
