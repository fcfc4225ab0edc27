"""End to end (real CLI, loopback fake LLM): core reviewer findings in the providers' wire formats: Gemini
function-call ids sent back with their responses (also from a resumed session file), Gemini string arguments
that do not parse reported to the model, Responses `response.completed` statuses that are not `completed`."""

from __future__ import annotations

import json

from agent_forge.modes.rpc.client import RpcClient


def sse(data: object, event: str | None = None) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"


def gemini_parts(body: dict, key: str) -> list[dict]:
    """Every `key` ("functionCall" / "functionResponse") object of a recorded Gemini request, in order."""
    return [part[key] for content in body["contents"] for part in content["parts"] if key in part]


# ---- Gemini: a server's function-call id goes back in the call and in its functionResponse ------------------


async def test_gemini_call_ids_from_the_server_are_sent_back_also_after_resuming(agent_env_factory, fake_llm,
                                                                                  tmp_path):
    env = agent_env_factory(api="google-generative-ai", model_id="gemini-3-fake")
    calls = [{"id": "srv-call-1", "name": "bash", "arguments": {"command": "echo one"}},
             {"name": "bash", "arguments": {"command": "echo two"}}]  # no id: a local one, never sent
    fake_llm.set_script([{"tool_calls": calls}, {"text": "done"}, {"text": "again"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        await client.prompt_and_wait("run both")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    local_id = messages[1]["content"][1]["id"]
    assert local_id.startswith("call_")
    async with await RpcClient.start(["--continue"], cwd=str(tmp_path), env=env) as client:
        await client.prompt_and_wait("once more")
    for request in fake_llm.requests[1:]:  # the live session's second request, then the resumed one
        body = request["body"]
        assert [c.get("id") for c in gemini_parts(body, "functionCall")] == ["srv-call-1", None]
        responses = gemini_parts(body, "functionResponse")
        assert [(r.get("id"), r["response"]) for r in responses] == [("srv-call-1", {"output": "one\n"}),
                                                                     (None, {"output": "two\n"})]
        assert local_id not in json.dumps(body)
    assert [r["outcome"] for r in fake_llm.requests] == ["ok", "ok", "ok"]
