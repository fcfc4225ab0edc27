"""End to end: a user `bash` command answered while a run goes on is on disk at its response (issue 10,
h-ubash2): a kill -9 before the run settles loses nothing, the resumed session holds its result once, after the
run's last entry; a run that settles still gives exactly one message, where it always went (after the run)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

PENDING = "agent_forge.user_bash_pending"


def file_lines(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def bash_entries(path) -> list[dict]:
    return [line for line in file_lines(path)
            if line["type"] == "message" and line["message"]["role"] == "bashExecution"]


async def until_streaming(client: RpcClient) -> None:
    """Wait for the first text delta of the running answer: the run is going on from here."""
    while (event := await client.next_event())["type"] != "message_update" or \
            event["assistantMessageEvent"]["type"] != "text_delta":
        pass


async def messages(client: RpcClient) -> list[dict]:
    return (await client.send({"type": "get_messages"}))["data"]["messages"]


async def bash_during_a_run(client: RpcClient, command: str = "echo during") -> tuple[dict, str]:
    """Start a prompt (the script hangs it), run `command` while it streams: (the bash response, session file)."""
    await client.send({"type": "prompt", "message": "talk"})
    await until_streaming(client)
    response = await client.send({"id": "mid", "type": "bash", "command": command})
    session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    return response, session_file


@pytest.mark.real_process  # kill -9 needs the agent as a process
async def test_a_kill_before_the_run_settles_keeps_the_bash_result_once(agent_env, fake_llm, project):
    fake_llm.set_script([{"text": "a fairly long streamed answer", "hang_after": 3}, {"text": "Noted."}])
    client = await RpcClient.start([], cwd=str(project), env=agent_env)
    response, session_file = await bash_during_a_run(client)
    assert response["data"]["output"] == "during\n"
    assert [m["role"] for m in await messages(client)] == ["user"]  # not slipped into the running turn
    client.process.send_signal(signal.SIGKILL)
    assert await client.close() == -signal.SIGKILL
    assert bash_entries(session_file) == []  # the message itself waits for a settle that never came

    for _ in range(2):  # a second resume adds nothing more
        async with await RpcClient.start(["--session", session_file], cwd=str(project), env=agent_env) as resumed:
            restored = await messages(resumed)
        assert [m["role"] for m in restored] == ["user", "bashExecution"]
        assert restored[-1]["command"] == "echo during" and restored[-1]["output"] == "during\n"
        assert len(bash_entries(session_file)) == 1
    assert file_lines(session_file)[-1]["type"] == "message"  # after the run's last entry

    async with await RpcClient.start(["--session", session_file], cwd=str(project), env=agent_env) as resumed:
        await resumed.prompt_and_wait("and now?")
    texts = [block["text"] for m in fake_llm.requests[-1]["body"]["messages"] if m["role"] == "user"
             for block in m["content"]]
    assert texts == ["talk", "Ran `echo during`\n```\nduring\n```", "and now?"]


async def test_a_settled_run_still_gives_one_message_after_it(agent_env, fake_llm, project):
    fake_llm.set_script([{"text": "a fairly long streamed answer", "hang_after": 3}])
    async with await RpcClient.start([], cwd=str(project), env=agent_env) as client:
        _, session_file = await bash_during_a_run(client)
        fake_llm.release_hangs()
        await client.wait_for("agent_settled")
        live = await messages(client)
    lines = file_lines(session_file)
    kinds = [(line["type"], line.get("message", {}).get("role") or line.get("customType")) for line in lines[1:]]
    assert [kind for kind in kinds if kind[0] in ("message", "custom")] == [
        ("message", "user"), ("custom", PENDING), ("message", "assistant"), ("message", "bashExecution")]
    pending = next(line for line in lines if line.get("customType") == PENDING)
    assert pending["data"]["message"] == bash_entries(session_file)[0]["message"]
    assert [m["role"] for m in live] == ["user", "assistant", "bashExecution"]
    async with await RpcClient.start(["--session", session_file], cwd=str(project), env=agent_env) as resumed:
        assert await messages(resumed) == live
    assert len(bash_entries(session_file)) == 1


@pytest.mark.real_process
async def test_switch_session_to_a_killed_file_restores_the_result(agent_env, fake_llm, project):
    fake_llm.set_script([{"text": "a fairly long streamed answer", "hang_after": 3}])
    client = await RpcClient.start([], cwd=str(project), env=agent_env)
    _, session_file = await bash_during_a_run(client, "echo one; echo two")
    client.process.send_signal(signal.SIGKILL)
    await client.close()
    async with await RpcClient.start([], cwd=str(project), env=agent_env) as other:
        switched = await other.send({"type": "switch_session", "sessionPath": session_file})
        assert switched["success"] is True, switched
        restored = await messages(other)
    assert [m["role"] for m in restored] == ["user", "bashExecution"]
    assert restored[-1]["output"] == "one\ntwo\n"
    assert len(bash_entries(session_file)) == 1


async def test_a_hand_damaged_pending_entry_is_left_alone(agent_env, project, tmp_path):
    """A pending entry whose message is unusable restores nothing, and the session opens as usual."""
    session = tmp_path / "damaged.jsonl"
    header = {"type": "session", "version": 3, "id": "0f0e0d0c-0b0a-4908-8706-050403020100",
              "timestamp": "2026-12-01T10:00:00.000Z", "cwd": str(project)}
    user = {"type": "message", "id": "aaaaaaaa", "parentId": None, "timestamp": "2026-12-01T10:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1}}
    bad = [{"type": "custom", "id": f"bbbbbbb{i}", "parentId": f"bbbbbbb{i - 1}" if i else "aaaaaaaa",
            "timestamp": "2026-12-01T10:00:02.000Z",
            "customType": PENDING, "data": data} for i, data in enumerate(
        [{"message": {"role": "bashExecution", "command": 7}}, {"message": {"role": "user", "content": "x"}},
         "text", None])]
    session.write_text("".join(json.dumps(line) + "\n" for line in (header, user, *bad)))
    async with await RpcClient.start(["--session", str(session)], cwd=str(project), env=agent_env) as client:
        assert [m["role"] for m in await messages(client)] == ["user"]
    assert bash_entries(session) == []


async def test_a_fork_cut_between_a_result_and_its_settle_holds_it_live_and_resumed(agent_env, fake_llm, project):
    """Fork at a follow-up of the run: the copied branch holds the pending result but not the settle that added
    it, so the fork adds it (once) as opening a killed file does; resuming the fork adds nothing more."""
    fake_llm.set_script([{"text": "a fairly long streamed answer", "hang_after": 3}, {"text": "more said"}])
    async with await RpcClient.start([], cwd=str(project), env=agent_env) as client:
        await bash_during_a_run(client)
        await client.send({"type": "follow_up", "message": "more"})
        fake_llm.release_hangs()
        await client.wait_for("agent_settled")
        entries = (await client.send({"type": "get_entries"}))["data"]["entries"]
        [more] = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"
                  and e["message"]["content"][0]["text"] == "more"]
        forked = await client.send({"type": "fork", "entryId": more["id"]})
        assert forked["success"] is True, forked
        live = await messages(client)
        fork_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert [m["role"] for m in live] == ["user", "assistant", "bashExecution"]
    async with await RpcClient.start(["--session", fork_file], cwd=str(project), env=agent_env) as resumed:
        assert await messages(resumed) == live
    assert len(bash_entries(fork_file)) == 1
