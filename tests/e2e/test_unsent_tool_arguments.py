"""End to end: a failed or aborted turn's tool calls never run and are never sent again, so their partial
arguments (megabytes of streamed `content`) are cut before `message_end`: in the live messages, the session file,
the compaction's summary request and every later request (issue 10, small findings)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_forge.modes.rpc.client import RpcClient

BIG = "x" * 3_000_000
CALL = {"name": "write", "arguments": json.dumps({"path": "a.txt", "content": BIG})}


async def until_arguments_stream(client: RpcClient) -> None:
    while (event := await client.next_event())["type"] != "message_update" or \
            event["assistantMessageEvent"]["type"] != "toolcall_delta":
        pass


def file_lines(path) -> list[str]:
    return Path(path).read_text().splitlines()


def the_call(messages: list[dict]) -> dict:
    [block] = [b for m in messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall"]
    return block


async def test_an_aborted_call_is_cut_and_stays_cut_through_a_compaction(agent_env_factory, fake_llm, project):
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 2000}})
    fake_llm.set_script([{"text": "word " * 20000, "text_deltas": 20},  # 20 deltas, not 20,000: 3 s less CPU
                         {"tool_calls": [CALL], "args_chunk_chars": 100_000, "hang_after": 12},
                         {"text": "SUMMARY"}, {"text": "after"}])
    async with await RpcClient.start([], cwd=str(project), env=env) as client:
        await client.prompt_and_wait("one")
        await client.send({"type": "prompt", "message": "two"})
        await until_arguments_stream(client)
        await client.send({"type": "abort"})
        await client.wait_for("agent_settled")
        live = (await client.send({"type": "get_messages"}))["data"]["messages"]
        compacted = await client.send({"type": "compact"})
        after = (await client.send({"type": "get_messages"}))["data"]["messages"]
        await client.prompt_and_wait("three")
        session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert live[-1]["stopReason"] == "aborted"
    content = the_call(live)["arguments"]["content"]
    assert content.startswith("x" * 2000) and len(content) < 2100
    assert content.endswith(" more characters cut: the call never ran]")
    assert compacted["success"] is True
    assert the_call(after) == the_call(live)  # kept by the compaction, cut as it was
    assert max(len(line) for line in file_lines(session_file)) < 200_000  # the 100 KB answer is the longest
    summary_request, last_request = fake_llm.requests[2], fake_llm.requests[3]
    assert "x" * 2000 not in json.dumps(summary_request["body"])  # never sent: neither to summarise nor after
    assert "x" * 2000 not in json.dumps(last_request["body"])


async def test_a_failed_turn_is_cut_too(agent_env_factory, fake_llm, project):
    env = agent_env_factory(settings={"retry": {"enabled": False}})
    fake_llm.set_script([{"tool_calls": [CALL], "args_chunk_chars": 100_000, "drop_after": 12}])
    async with await RpcClient.start([], cwd=str(project), env=env) as client:
        await client.prompt_and_wait("go")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
        session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert messages[-1]["stopReason"] == "error"
    arguments = json.dumps(the_call(messages)["arguments"])
    assert len(arguments) < 3000 and "more characters cut: the call never ran" in arguments
    assert max(len(line) for line in file_lines(session_file)) < 10_000
