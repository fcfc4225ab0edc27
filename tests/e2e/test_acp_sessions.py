"""End to end: ACP sessions across processes (`session/load` replays, `session/list`), commands, prompt
content (images, resource links, embedded resources) and a prompt sent while a turn runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.acp_client import AcpClient, AcpReplyError


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


async def ready(agent_env, project, *args) -> tuple[AcpClient, str]:
    client = await AcpClient.start(list(args), cwd=str(project), env=agent_env)
    await client.initialize()
    return client, await client.new_session(str(project))


async def test_load_after_a_restart_replays_the_conversation_then_continues(agent_env, project, fake_llm):
    fake_llm.set_script([
        {"thinking": "hmm", "tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "a.txt", "content": "x\n"}}]},
        {"text": "Wrote it."},
        {"text": "Second answer."},
    ])
    client, session_id = await ready(agent_env, project)
    await client.prompt(session_id, "write a file")
    assert await client.close() == 0

    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    listed = await client.request("session/list", {"cwd": str(project)})
    [info] = listed["sessions"]
    assert (info["sessionId"], info["cwd"], info["title"]) == (session_id, str(project), "write a file")
    assert info["updatedAt"].endswith("Z")
    loaded = await client.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    assert loaded["modes"]["currentModeId"] == "ask" and loaded["configOptions"][0]["currentValue"] == "fake/fake-model"
    replayed = [(u["sessionUpdate"], u.get("content", {}).get("text") if u["sessionUpdate"] != "tool_call"
                 else u["status"]) for u in client.updates(session_id)
                if u["sessionUpdate"] not in ("available_commands_update", "usage_update")]
    assert replayed == [("user_message_chunk", "write a file"), ("agent_thought_chunk", "hmm"),
                        ("tool_call", "completed"), ("agent_message_chunk", "Wrote it.")]
    load_id = next(m["id"] for d, m in client.messages if m.get("method") == "session/load")
    answer_of_load = next(i for i, (d, m) in enumerate(client.messages) if d == "in" and m.get("id") == load_id)
    last_replay = max(i for i, (d, m) in enumerate(client.messages)
                      if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
    assert last_replay < answer_of_load  # the history comes before the answer
    assert await client.prompt(session_id, "again") == {"stopReason": "end_turn"}
    sent = [m["role"] for m in fake_llm.requests[-1]["body"]["messages"]]
    assert sent[-1] == "user" and sent.count("user") == 2  # the loaded conversation went to the model
    assert await client.close() == 0


CHUNKS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")


def messages_by_id(client: AcpClient, session_id: str) -> list[tuple[str, str, str]]:
    """(kind, messageId, joined text) of each run of chunks sharing a `messageId`, in order."""
    runs: list[tuple[str, str, str]] = []
    for update in client.updates(session_id):
        if update["sessionUpdate"] in CHUNKS:
            kind, key, text = update["sessionUpdate"], update.get("messageId"), update["content"].get("text", "")
            assert key, update  # every chunk names its message
            if runs and runs[-1][:2] == (kind, key):
                runs[-1] = (kind, key, runs[-1][2] + text)
            else:
                runs.append((kind, key, text))
    return runs


async def replayed_in_a_new_process(agent_env, project, session_id: str) -> list[tuple[str, str, str]]:
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    await client.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    replayed = messages_by_id(client, session_id)
    assert await client.close() == 0
    return replayed


async def test_load_replays_each_message_under_the_message_id_it_streamed_with(agent_env, project, fake_llm):
    fake_llm.set_script([
        {"thinking": "let me think", "text": "I will write.", "text_chunk_words": 1,
         "tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "a.txt", "content": "x\n"}}]},
        {"thinking": "done thinking", "text": "Wrote it.", "thinking_deltas": 3},
        {"text": "Second answer."},
    ])
    client, session_id = await ready(agent_env, project)
    assert await client.prompt(session_id, "write a file") == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "!echo mine") == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "and again") == {"stopReason": "end_turn"}
    live = [run for run in messages_by_id(client, session_id) if run[0] != "agent_thought_chunk"
            or not run[2].startswith("\n")]  # status lines are live only
    assert await client.close() == 0
    assert [(kind, text) for kind, _, text in live] == [
        ("agent_thought_chunk", "let me think"), ("agent_message_chunk", "I will write."),
        ("agent_thought_chunk", "done thinking"), ("agent_message_chunk", "Wrote it."),
        ("agent_message_chunk", "Second answer.")]
    assert len({key for _, key, _ in live}) == 5  # a thought and the reply after it are two messages

    first = await replayed_in_a_new_process(agent_env, project, session_id)
    second = await replayed_in_a_new_process(agent_env, project, session_id)
    assert first == second  # the same ids on every load
    assert [(kind, text) for kind, _, text in first] == [
        ("user_message_chunk", "write a file"), *[(kind, text) for kind, _, text in live[:4]],
        ("user_message_chunk", "and again"), ("agent_message_chunk", "Second answer.")]
    agents = [run for run in first if run[0] != "user_message_chunk"]
    assert agents == live  # and the ids the live stream used
    assert len({key for _, key, _ in first}) == len(first)


async def test_replayed_user_commands_keep_ids_apart_from_live_ones(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "hello"}])
    client, session_id = await ready(agent_env, project)
    assert await client.prompt(session_id, "hi") == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "!echo one") == {"stopReason": "end_turn"}  # the third message
    assert await client.close() == 0
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    await client.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    assert await client.prompt(session_id, "!echo two") == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "!echo three") == {"stopReason": "end_turn"}
    calls = client.updates(session_id, "tool_call")
    assert [c["title"] for c in calls] == ["echo one", "echo two", "echo three"]
    assert len({c["toolCallId"] for c in calls}) == 3  # the editor keeps every card (no update lands on another)
    assert await client.close() == 0


@pytest.mark.real_process  # two processes, and the lock names the first one's pid
async def test_loading_a_session_open_in_another_process_says_it_is_in_use_and_by_whom(agent_env, project,
                                                                                     fake_llm):
    fake_llm.set_script([{"text": "one"}])
    first, session_id = await ready(agent_env, project)
    assert await first.prompt(session_id, "hello") == {"stopReason": "end_turn"}
    second = await AcpClient.start([], cwd=str(project), env=agent_env)
    await second.initialize()
    assert session_id in [s["sessionId"] for s in (await second.request("session/list", {}))["sessions"]]
    with pytest.raises(AcpReplyError) as caught:
        await second.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    assert caught.value.code == -32001 and caught.value.data == {"pid": first.process.pid}
    assert f"open in another agent-forge process (pid {first.process.pid})" in caught.value.message
    assert await first.close() == 0
    loaded = await second.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    assert "configOptions" in loaded  # closed there, it opens here
    assert await second.close() == 0


async def test_a_damaged_session_file_is_said_once_per_process(agent_env, project, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "one"}])
    client, session_id = await ready(agent_env, project)
    assert await client.prompt(session_id, "hello") == {"stopReason": "end_turn"}
    [stored] = [f for f in tmp_path.rglob("*.jsonl") if session_id in f.name]
    (stored.parent / "damaged.jsonl").write_text("{not json\n")
    for _ in range(3):
        listed = await client.request("session/list", {"cwd": str(project)})
        assert [s["sessionId"] for s in listed["sessions"]] == [session_id]
        await client.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    assert await client.close() == 0
    assert client.stderr().count("damaged.jsonl") == 1, client.stderr()


async def test_damaged_lines_a_load_passes_over_are_said_in_the_session_not_only_on_stderr(agent_env, project,
                                                                                             fake_llm, tmp_path):
    fake_llm.set_script([{"text": "one"}])
    client, session_id = await ready(agent_env, project)
    assert await client.prompt(session_id, "hello") == {"stopReason": "end_turn"}
    assert await client.close() == 0
    [stored] = [f for f in tmp_path.rglob("*.jsonl") if session_id in f.name]
    with stored.open("a") as handle:
        handle.write("{not json\n")
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    await client.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    told = [u["content"]["text"] for u in client.updates(session_id) if u["sessionUpdate"] == "agent_thought_chunk"]
    assert await client.close() == 0
    assert any("Warning: session file" in text and "damaged" in text for text in told), told


async def test_unknown_sessions_are_errors(agent_env, project):
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    with pytest.raises(AcpReplyError) as caught:
        await client.request("session/load", {"sessionId": "nope", "cwd": str(project), "mcpServers": []})
    assert caught.value.code == -32002
    with pytest.raises(AcpReplyError) as caught:
        await client.prompt("nope", "hi")
    assert caught.value.code == -32002 and "nope" in caught.value.message
    client.notify("session/cancel", {"sessionId": "nope"})  # a notification: no answer, no harm
    assert (await client.request("session/list", {}))["sessions"] == []
    assert await client.close() == 0


async def test_templates_and_skills_are_available_commands_and_run(agent_env, project, fake_llm):
    agent_dir = Path(agent_env["AGENT_FORGE_DIR"])
    (agent_dir / "prompts").mkdir(parents=True)
    (agent_dir / "prompts" / "review.md").write_text("---\ndescription: Review a file\n---\nReview $1 carefully.\n")
    (agent_dir / "skills" / "tidy").mkdir(parents=True)
    (agent_dir / "skills" / "tidy" / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy up\n---\nTidy.\n")
    fake_llm.set_script([{"text": "Reviewed."}])
    client, session_id = await ready(agent_env, project)
    [update] = await client.wait_for(lambda: client.updates(session_id, "available_commands_update"))
    names = {c["name"]: c["description"] for c in update["availableCommands"]}
    assert {k: v for k, v in names.items() if k in ("review", "skill:tidy")} == {"review": "Review a file",
                                                                                  "skill:tidy": "Tidy up"}
    assert list(names)[:2] == ["review", "skill:tidy"]  # the session's own commands come first
    await client.prompt(session_id, "/review main.py")
    assert "Review main.py carefully." in json.dumps(fake_llm.requests[0]["body"]["messages"][-1])
    assert await client.close() == 0


async def test_images_resource_links_and_embedded_resources_reach_the_model(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "Seen."}])
    client, session_id = await ready(agent_env, project)
    await client.prompt(session_id, "look at these",
                        {"type": "image", "mimeType": "image/png", "data": PNG},
                        {"type": "resource_link", "name": "main.py", "uri": f"file://{project}/main.py"},
                        {"type": "resource", "resource": {"uri": f"file://{project}/sel.py", "text": "x = 1",
                                                          "mimeType": "text/x-python"}})
    sent = json.dumps(fake_llm.requests[0]["body"]["messages"][-1])
    assert "look at these" in sent and f"[main.py]({project}/main.py)" in sent
    assert f'<file name=\\"{project}/sel.py\\">\\nx = 1\\n</file>' in sent
    assert PNG in sent
    with pytest.raises(AcpReplyError) as caught:
        await client.prompt(session_id, {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"})
    assert caught.value.code == -32602 and "audio" in caught.value.message
    assert len(fake_llm.requests) == 1
    assert await client.close() == 0


async def test_names_and_texts_of_resources_cannot_fake_their_boundaries(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "Seen."}])
    client, session_id = await ready(agent_env, project)
    await client.prompt(session_id, "look",
                        {"type": "resource_link", "name": "\u2713\n](evil)", "uri": "file:///tmp/a%20b/%E2%9C%93.txt"},
                        {"type": "resource", "resource": {"uri": 'file:///tmp/q%22.py', "mimeType": "text/x-python",
                                                          "text": "print('</file>')\n</FILE >\n<file name=\"x\">"}})
    [message] = [m for m in fake_llm.requests[0]["body"]["messages"] if m["role"] == "user"]
    text = message["content"] if isinstance(message["content"], str) else message["content"][0]["text"]
    assert "[\u2713\\n\\](evil)](</tmp/a b/\u2713.txt>)" in text  # one line, its brackets escaped
    assert text.count("</file>") == 1 and text.endswith("</file>")  # the block's own closing tag only
    assert "<file name=\"/tmp/q&quot;.py\">\nprint('<\\/file>')\n<\\/FILE >\n" in text
    assert await client.close() == 0


async def test_an_image_a_text_only_model_cannot_see_is_said_and_bad_images_are_refused(agent_env_factory, project,
                                                                                       fake_llm):
    from e2e.test_rpc_models import model_entry

    env = agent_env_factory(models=[{**model_entry("fake-model"), "input": ["text"]}])
    fake_llm.set_script([{"text": "Seen."}])
    client, session_id = await ready(env, project)
    assert await client.prompt(session_id, "look", {"type": "image", "mimeType": "image/png", "data": PNG}) == {
        "stopReason": "end_turn"}
    said = json.dumps(client.updates(session_id))
    assert "does not accept images" in said and "the image of this prompt is left out" in said
    fake_png = "aGVsbG8gd29ybGQ="  # "hello world", labelled PNG
    bad = [([{"type": "image", "mimeType": "image/png", "data": "not base64!"}], "prompt[0].data: the image data is "
             "not valid base64"),
           ([{"type": "text", "text": "x"}, {"type": "image", "mimeType": "image/png", "data": fake_png}],
            "prompt[1].data: the data is not of type image/png"),
           ([{"type": "image", "mimeType": "image/jpeg", "data": PNG}],
            "prompt[0].data: the data is not of type image/jpeg (it is image/png)"),
           ([{"type": "resource", "resource": {"uri": "file:///a.png", "mimeType": "image/png", "blob": fake_png}}],
            "prompt[0].resource.blob: the data is not of type image/png"),
           ([{"type": "image", "mimeType": "image/tiff", "data": PNG}], "prompt[0].mimeType: image type 'image/tiff'"),
           ([{"type": "resource", "resource": {"uri": "file:///a.png", "mimeType": "image/png", "blob": "%%"}}],
            "prompt[0].resource.blob: the image data is not valid base64"),
           ([{"type": "resource", "resource": {"text": "x"}}], "prompt[0].resource.uri must be a string"),
           ([], '"prompt" is empty'), ([{"type": "text", "text": "  "}], '"prompt" is empty')]
    for blocks, message in bad:
        with pytest.raises(AcpReplyError) as caught:
            await client.request("session/prompt", {"sessionId": session_id, "prompt": blocks}, checked=False)
        assert caught.value.code == -32602 and message in caught.value.message, (blocks, caught.value.message)
    assert len(fake_llm.requests) == 1
    assert await client.close() == 0


async def test_a_prompt_during_a_turn_is_queued_as_a_follow_up(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "first answer", "hang_after": 3}, {"text": "second answer"}])
    client, session_id = await ready(agent_env, project)
    first = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "one"}]})
    await client.wait_for(lambda: client.updates(session_id, "agent_message_chunk"))
    second = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "two"}]})
    await client.request("session/list", {})  # answered in order: the second prompt has been taken
    fake_llm.release_hangs()
    assert await first == {"stopReason": "end_turn"}
    assert len(fake_llm.requests) == 2  # the follow-up ran in the same run, before the first prompt answered
    assert await second == {"stopReason": "end_turn"}
    assert "two" in json.dumps(fake_llm.requests[1]["body"]["messages"][-1])
    assert await client.close() == 0


async def test_model_and_thinking_are_session_config_options(agent_env_factory, project, fake_llm):
    from e2e.test_rpc_models import model_entry

    env = agent_env_factory(models=[model_entry("fake-model"), model_entry("plain", reasoning=False)])
    fake_llm.set_script([{"text": "one"}, {"text": "two"}])
    client = await AcpClient.start([], cwd=str(project), env=env)
    await client.initialize()
    created = await client.request("session/new", {"cwd": str(project), "mcpServers": []})
    session_id = created["sessionId"]
    model, thinking = created["configOptions"]
    assert (model["id"], model["currentValue"]) == ("model", "fake/fake-model")
    assert [o["value"] for o in model["options"]] == ["fake/fake-model", "fake/plain"]
    assert thinking["id"] == "thinking" and "high" in [o["value"] for o in thinking["options"]]
    changed = await client.request("session/set_config_option", {"sessionId": session_id, "configId": "thinking",
                                                                 "value": "high"})
    assert changed["configOptions"][1]["currentValue"] == "high"
    await client.prompt(session_id, "hi")
    assert "high" in json.dumps({k: v for k, v in fake_llm.requests[0]["body"].items() if k != "messages"})
    changed = await client.request("session/set_config_option", {"sessionId": session_id, "configId": "model",
                                                                 "value": "fake/plain"})
    assert [o["id"] for o in changed["configOptions"]] == ["model"]  # no thinking levels for this model
    await client.prompt(session_id, "again")
    assert fake_llm.requests[1]["body"]["model"] == "plain"
    for config_id, value in (("model", "fake/missing"), ("thinking", "huge"), ("colour", "red")):
        with pytest.raises(AcpReplyError) as caught:
            await client.request("session/set_config_option", {"sessionId": session_id, "configId": config_id,
                                                               "value": value})
        assert caught.value.code == -32602
    assert await client.close() == 0


async def test_slash_model_lists_and_switches_models_and_the_picker_follows(agent_env_factory, project, fake_llm):
    from e2e.test_rpc_models import model_entry

    env = agent_env_factory(models=[model_entry("fake-model"), model_entry("plain", reasoning=False)])
    fake_llm.set_script([{"text": "one"}])
    client = await AcpClient.start([], cwd=str(project), env=env)
    await client.initialize()
    session_id = await client.new_session(str(project))

    def said() -> str:
        return client.updates(session_id, "agent_message_chunk")[-1]["content"]["text"].lstrip("\n")

    assert await client.prompt(session_id, "/model") == {"stopReason": "end_turn"}
    assert "* fake/fake-model" in said() and "  fake/plain" in said() and "model picker" in said()
    assert await client.prompt(session_id, "/model plain") == {"stopReason": "end_turn"}
    assert said() == "Model: fake/plain."
    [update] = client.updates(session_id, "config_option_update")
    assert [(o["id"], o["currentValue"]) for o in update["configOptions"]] == [("model", "fake/plain")]
    assert await client.prompt(session_id, "/model nothing/here") == {"stopReason": "end_turn"}
    assert said().startswith("/model failed: no model matches 'nothing/here'")
    assert fake_llm.requests == []  # none of them reached the model
    await client.prompt(session_id, "hi")
    assert fake_llm.requests[0]["body"]["model"] == "plain"
    assert await client.close() == 0


async def test_compact_name_and_export_are_slash_commands(agent_env_factory, project, fake_llm):
    words = " ".join(f"word{i}" for i in range(80))
    fake_llm.set_script([{"text": "first " + words}, {"text": "second " + words}, {"text": "The summary."}])
    client, session_id = await ready(agent_env_factory(settings={"compaction": {"keepRecentTokens": 60}}), project)
    [update] = await client.wait_for(lambda: client.updates(session_id, "available_commands_update"))
    assert {"compact", "name", "export"} <= {c["name"] for c in update["availableCommands"]}
    await client.prompt(session_id, "hello " + words)
    await client.prompt(session_id, "again " + words)

    def said() -> str:
        return client.updates(session_id, "agent_message_chunk")[-1]["content"]["text"].lstrip("\n")  # its paragraph

    assert await client.prompt(session_id, "/name  Login bug ") == {"stopReason": "end_turn"}
    assert said() == "Session named Login bug."
    assert client.updates(session_id, "session_info_update")[-1]["title"] == "Login bug"
    assert await client.prompt(session_id, "/name  ") == {"stopReason": "end_turn"}
    assert said() == "/name failed: Session name cannot be empty"
    assert await client.prompt(session_id, "/compact keep the names") == {"stopReason": "end_turn"}
    assert said().startswith("Compacted the conversation")
    assert "keep the names" in json.dumps(fake_llm.requests[2]["body"])
    out = project / "s.html"
    assert await client.prompt(session_id, f"/export {out}") == {"stopReason": "end_turn"}
    assert said() == f"Exported to {out}" and out.read_text().startswith("<!")
    hostile = project / "e\x1b]0;pwned\x07\u202e.html"
    assert await client.prompt(session_id, f"/export {hostile}") == {"stopReason": "end_turn"}
    assert said() == f"Exported to {project}/e\\x1b]0;pwned\\x07\\u202e.html" and hostile.exists()
    listed = await client.request("session/list", {"cwd": str(project)})
    assert listed["sessions"][0]["title"] == "Login bug"
    assert len(fake_llm.requests) == 3  # the commands asked the model nothing but the summary
    assert await client.close() == 0


async def test_bang_runs_the_users_own_command(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "seen"}])
    client, session_id = await ready(agent_env, project)
    assert await client.prompt(session_id, "!echo hi; exit 3") == {"stopReason": "end_turn"}
    assert await client.prompt(session_id, "!!echo secret") == {"stopReason": "end_turn"}
    calls = [u for u in client.updates(session_id) if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
    assert [(u["sessionUpdate"], u.get("status")) for u in calls] == [
        ("tool_call", "in_progress"), ("tool_call_update", "failed"),
        ("tool_call", "in_progress"), ("tool_call_update", "completed")]
    assert calls[0]["kind"] == "execute" and calls[0]["title"] == "echo hi; exit 3"
    assert "hi" in calls[1]["content"][0]["content"]["text"] and "exit code 3" in calls[1]["content"][0]["content"]["text"]
    await client.prompt(session_id, "what did I run?")
    sent = json.dumps(fake_llm.requests[0]["body"]["messages"])
    assert "echo hi" in sent and "secret" not in sent  # `!!` stays out of the model's context
    assert len(fake_llm.requests) == 1
    reply = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                     "prompt": [{"type": "text", "text": "!sleep 60"}]})
    await client.wait_for(lambda: len(client.updates(session_id, "tool_call")) == 3)
    client.notify("session/cancel", {"sessionId": session_id})
    import asyncio

    assert await asyncio.wait_for(reply, 5.0) == {"stopReason": "cancelled"}
    assert await client.close() == 0


async def test_compact_and_clone_sent_during_a_turn_wait_for_it_and_never_abort_it(agent_env_factory, project,
                                                                                    fake_llm):
    words = " ".join(f"word{i}" for i in range(80))
    fake_llm.set_script([{"text": "first " + words}, {"text": "third " + words, "text_deltas": 10, "delay_ms": 50},
                         {"text": "The summary."}])
    client, session_id = await ready(agent_env_factory(settings={"compaction": {"keepRecentTokens": 60}}), project)
    await client.prompt(session_id, "hello " + words)
    turn = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                    "prompt": [{"type": "text", "text": "again " + words}]})
    await client.wait_for(lambda: "third" in json.dumps(client.updates(session_id, "agent_message_chunk")))
    compact = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                       "prompt": [{"type": "text", "text": "/compact"}]})
    clone = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                     "prompt": [{"type": "text", "text": "/clone"}]})
    assert await turn == {"stopReason": "end_turn"}  # not aborted
    assert await compact == {"stopReason": "end_turn"} and await clone == {"stopReason": "end_turn"}
    said = [u["content"]["text"].lstrip("\n") for u in client.updates(session_id, "agent_message_chunk")]
    assert said[-1].startswith("Cloned this conversation") and said[-2].startswith("Compacted the conversation")
    assert "word79" in "".join(said[:-2])  # the turn's whole answer came before them
    assert await client.close() == 0


async def test_client_mcp_servers_that_fail_are_said_in_the_session_and_on_stderr(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "ok"}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    servers = [{"name": "ghost", "command": str(project / "no-such-server"), "args": [], "env": []},
               {"type": "http", "name": "closed", "url": "http://127.0.0.1:1/mcp", "headers": []}]
    session_id = (await client.request("session/new", {"cwd": str(project), "mcpServers": servers}))["sessionId"]
    assert await client.prompt(session_id, "hi") == {"stopReason": "end_turn"}

    def said() -> str:
        return json.dumps(client.updates(session_id))

    await client.wait_for(lambda: "MCP server 'ghost' failed" in said() and "MCP server 'closed' failed" in said())
    assert await client.close() == 0
    assert "MCP server 'ghost' failed" in client.stderr() and "MCP server 'closed' failed" in client.stderr()


async def test_names_and_titles_never_carry_control_characters(agent_env, project, fake_llm):
    fake_llm.set_script([{"text": "ok"}])
    client, session_id = await ready(agent_env, project)
    hostile = "\x1b]0;pwned\x07fix \u202ethe bug\nsecond line"
    assert await client.prompt(session_id, hostile) == {"stopReason": "end_turn"}
    assert client.updates(session_id, "session_info_update")[-1]["title"] == "]0;pwned fix the bug"
    for name in ("\x1b[2Jx", "a\x07", "one\ntwo", "x" * 100_000):
        assert await client.prompt(session_id, f"/name {name}") == {"stopReason": "end_turn"}
        said = client.updates(session_id, "agent_message_chunk")[-1]["content"]["text"].lstrip("\n")
        assert said.startswith("/name failed: Session name "), said
    titles = [u["title"] for u in client.updates(session_id, "session_info_update")]
    assert titles == ["]0;pwned fix the bug"]
    listed = await client.request("session/list", {"cwd": str(project)})
    assert listed["sessions"][0]["title"] == "]0;pwned fix the bug"
    assert await client.close() == 0


async def test_close_cancels_the_turn_frees_the_session_and_resume_continues_it_without_replay(agent_env, project,
                                                                                           fake_llm):
    fake_llm.set_script([{"text": "a b c d", "hang_after": 2}, {"text": "continued"}])
    client, session_id = await ready(agent_env, project)
    turn = client.request_nowait("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    await client.wait_for(lambda: fake_llm.requests and fake_llm.requests[0]["hanging"])
    assert await client.request("session/close", {"sessionId": session_id}) == {}
    assert await turn == {"stopReason": "cancelled"}
    with pytest.raises(AcpReplyError) as unknown:
        await client.prompt(session_id, "still there?")
    assert unknown.value.code == -32002

    other = await AcpClient.start([], cwd=str(project), env=agent_env)  # the file is free while the first runs
    await other.initialize()
    resumed = await other.request("session/resume", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    assert resumed["modes"]["currentModeId"] == "ask"
    assert not [u for u in other.updates(session_id) if u["sessionUpdate"].endswith("_chunk")]  # nothing replayed
    assert await other.prompt(session_id, "go on") == {"stopReason": "end_turn"}
    sent = [m["role"] for m in fake_llm.requests[-1]["body"]["messages"]]
    assert sent.count("user") == 2  # the resumed conversation went to the model
    assert await other.close() == 0
    assert await client.close() == 0


def stored_session(agent_env, cwd: Path, text: str, mtime: float) -> str:
    """A session of `cwd` written by the real store (one user message `text`), its file's mtime set; its id."""
    import os

    from agent_forge.coding.session.store import SessionStore

    store = SessionStore.create(cwd, Path(agent_env["AGENT_FORGE_DIR"]) / "sessions")
    store.append_message({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
    store.close()
    os.utime(store.path, (mtime, mtime))
    return store.session_id


async def test_list_without_cwd_pages_through_every_directorys_sessions(agent_env, project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ids = [stored_session(agent_env, project if n % 2 else elsewhere, f"task {n}", 1_000_000 + n) for n in range(53)]
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    first = await client.request("session/list", {})
    second = await client.request("session/list", {"cursor": first["nextCursor"]})
    assert "nextCursor" not in second
    listed = [s["sessionId"] for s in first["sessions"] + second["sessions"]]
    assert listed == ids[::-1]  # newest first, both directories, each once
    assert {s["cwd"] for s in first["sessions"]} == {str(project), str(elsewhere)}
    assert first["sessions"][0]["title"] == "task 52"
    mine = await client.request("session/list", {"cwd": str(elsewhere)})
    assert [s["sessionId"] for s in mine["sessions"]] == [i for n, i in enumerate(ids) if n % 2 == 0][::-1]
    assert await client.close() == 0


async def test_a_template_named_like_a_built_in_is_shadowed_listed_once_and_said_once(agent_env, project,
                                                                                      fake_llm, tmp_path):
    """One rule in every front end with built-ins: the built-in wins (the terminal UI's do too); print mode and
    RPC, which have none, run the template. Once the template won here and /model ran it (a model request)."""
    prompts = Path(agent_env["AGENT_FORGE_DIR"]) / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "model.md").write_text("---\ndescription: talk about models\n---\nTell me about $1.\n")
    fake_llm.set_script([{"text": "Models are..."}])
    client, session_id = await ready(agent_env, project)
    [update] = await client.wait_for(lambda: client.updates(session_id, "available_commands_update"))
    models = [c for c in update["availableCommands"] if c["name"] == "model"]
    assert len(models) == 1 and models[0]["description"].startswith("List the models"), models
    await client.prompt(session_id, "/model")
    assert fake_llm.requests == [] and "fake" in client.updates(session_id, "agent_message_chunk")[-1]["content"]["text"]
    await client.new_session(str(project))  # a second session: the warning is not said again
    assert await client.close() == 0
    warning = f"Warning: {prompts / 'model.md'}: prompt template /model is shadowed in ACP by its built-in /model"
    assert client.stderr().count(warning) == 1, client.stderr()
    printed = subprocess.run([sys.executable, "-m", "agent_forge", "-p", "/model gpt"], cwd=project, env=agent_env,
                             capture_output=True, timeout=60)
    assert printed.returncode == 0 and "Models are..." in printed.stdout.decode()
    assert "Tell me about gpt." in json.dumps(fake_llm.requests[0]["body"]["messages"][-1])
    assert b"shadowed" not in printed.stderr  # print mode has no built-in /model: nothing is shadowed there


async def test_load_replays_a_branch_summary_as_such_not_as_a_compaction(agent_env, project):
    """Both summaries were introduced as "Summary of the earlier conversation:"; the words are now those the
    terminal UI shows (`coding.messages.SUMMARY_NOTES`)."""
    from agent_forge.coding.session.store import SessionStore

    store = SessionStore.create(project, Path(agent_env["AGENT_FORGE_DIR"]) / "sessions")
    store.append_model_change("fake", "fake-model")
    first = store.append_message({"role": "user", "content": [{"type": "text", "text": "q1"}], "timestamp": 1})
    left = store.append_message({"role": "user", "content": [{"type": "text", "text": "q2"}], "timestamp": 2})
    store.set_leaf(first["id"])
    store.append_branch_summary(left["id"], "q2 went nowhere")
    store.append_message({"role": "user", "content": [{"type": "text", "text": "q3"}], "timestamp": 3})
    store.close()
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    await client.request("session/load", {"sessionId": store.session_id, "cwd": str(project), "mcpServers": []})
    thoughts = [u["content"]["text"] for u in client.updates(store.session_id, "agent_thought_chunk")]
    assert thoughts == ["The conversation continued from another branch (summarised):\nq2 went nowhere"]
    assert await client.close() == 0


async def test_load_replays_a_call_the_agent_stopped_in_as_interrupted_as_the_model_is_told(agent_env, project):
    """A file a kill -9 cut off mid-call holds the call and no result: its replay was `failed` with no content
    (the terminal UI and the model say why)."""
    from agent_forge.coding.messages import INTERRUPTED_RESULT
    from agent_forge.coding.session.store import SessionStore

    store = SessionStore.create(project, Path(agent_env["AGENT_FORGE_DIR"]) / "sessions")
    store.append_model_change("fake", "fake-model")
    store.append_message({"role": "user", "content": [{"type": "text", "text": "wait"}], "timestamp": 1})
    store.append_message({"role": "assistant", "content": [
        {"type": "toolCall", "id": "call-1", "name": "bash", "arguments": {"command": "sleep 100"}}],
        "stopReason": "toolUse", "timestamp": 2})
    store.close()
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    await client.request("session/load", {"sessionId": store.session_id, "cwd": str(project), "mcpServers": []})
    [call] = client.updates(store.session_id, "tool_call")
    assert (call["toolCallId"], call["status"]) == ("call-1", "failed")
    assert call["content"] == [{"type": "content", "content": {"type": "text", "text": INTERRUPTED_RESULT}}]
    assert await client.close() == 0


async def test_load_replays_a_result_whose_call_was_lost_as_a_call_of_its_own(agent_env, project):
    """A damaged file: the assistant line holding the call was cut, its result's line is whole. The terminal UI,
    RPC and the export showed the result; the replay dropped it."""
    from agent_forge.coding.session.store import SessionStore

    store = SessionStore.create(project, Path(agent_env["AGENT_FORGE_DIR"]) / "sessions")
    store.append_model_change("fake", "fake-model")
    store.append_message({"role": "user", "content": [{"type": "text", "text": "run it"}], "timestamp": 1})
    store.append_message({"role": "toolResult", "toolCallId": "call-9", "toolName": "bash", "isError": False,
                          "content": [{"type": "text", "text": "visible-output"}], "timestamp": 3})
    store.close()
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    await client.request("session/load", {"sessionId": store.session_id, "cwd": str(project), "mcpServers": []})
    [call] = client.updates(store.session_id, "tool_call")
    assert (call["toolCallId"], call["status"], call["kind"]) == ("call-9", "completed", "execute")
    assert "visible-output" in call["content"][0]["content"]["text"]
    assert await client.close() == 0


@pytest.mark.real_process  # kill -9
async def test_messages_a_killed_agent_left_queued_are_told_when_a_loaded_session_delivers_them(agent_env, fake_llm,
                                                                                               project):
    """They reached the model with nothing shown, and a later replay showed them: now each is a user message
    when it is delivered, under the id the replay gives it (round 24)."""
    from .test_rpc_queue_kill import HELD, held_run_with_queue, kill

    fake_llm.set_script([HELD])
    rpc, _ = await held_run_with_queue(agent_env, project)
    session_id = (await rpc.send({"type": "get_state"}))["data"]["sessionId"]
    await kill(rpc)
    fake_llm.set_script([{"text": "Took the prompt and the steer."}, {"text": "Took the follow-up."}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    await client.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    loaded = len(client.updates(session_id))
    assert await client.prompt(session_id, "next") == {"stopReason": "end_turn"}

    def told() -> list[tuple[str, str]]:
        return [(u["content"]["text"], u["messageId"]) for u in client.updates(session_id)[loaded:]
                if u["sessionUpdate"] == "user_message_chunk"]

    await client.wait_for(lambda: len(told()) == 2)  # the follow-up's run comes after the prompt's answer
    live = told()
    assert await client.close() == 0
    assert [text for text, _ in live] == ["s1", "f1"]  # "next" is the editor's own
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    await client.initialize()
    await client.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    replayed = [(u["content"]["text"], u["messageId"]) for u in client.updates(session_id, "user_message_chunk")]
    assert await client.close() == 0
    assert [pair for pair in replayed if pair[0] in ("s1", "f1")] == live


async def test_loading_an_open_session_mid_answer_and_mid_call_tells_what_is_under_way(agent_env, project, fake_llm):
    """The replay left out the text streamed so far (the answer then went on mid-word) and told a running call
    as interrupted (round 33)."""
    import asyncio

    fake_llm.set_script([{"text": "alpha beta gamma delta", "text_deltas": 4, "hang_after": 3},
                         {"tool_calls": [{"id": "slow-1", "name": "bash", "arguments": {"command": "sleep 30"}}]}])
    client, session_id = await ready(agent_env, project, "--approvals", "full")
    load = {"sessionId": session_id, "cwd": str(project), "mcpServers": []}
    answer = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                      "prompt": [{"type": "text", "text": "talk"}]})
    await client.wait_for(lambda: fake_llm.requests and fake_llm.requests[-1]["hanging"]
                          and client.updates(session_id, "agent_message_chunk"))
    live = client.updates(session_id, "agent_message_chunk")
    before = len(client.updates(session_id))
    await client.request("session/load", load)
    told = [u for u in client.updates(session_id)[before:] if u["sessionUpdate"] == "agent_message_chunk"]
    assert [(u["messageId"], u["content"]["text"]) for u in told] == [
        (live[0]["messageId"], "".join(u["content"]["text"] for u in live))]
    client.notify("session/cancel", {"sessionId": session_id})
    assert await asyncio.wait_for(answer, 10) == {"stopReason": "cancelled"}

    answer = client.request_nowait("session/prompt", {"sessionId": session_id,
                                                      "prompt": [{"type": "text", "text": "run"}]})
    await client.wait_for(lambda: any(u.get("status") == "in_progress" and u.get("toolCallId") == "slow-1"
                                      for u in client.updates(session_id)))
    before = len(client.updates(session_id))
    await client.request("session/load", load)
    calls = [(u["sessionUpdate"], u.get("status")) for u in client.updates(session_id)[before:]
             if u.get("toolCallId") == "slow-1"]
    assert calls == [("tool_call", "in_progress")]
    client.notify("session/cancel", {"sessionId": session_id})
    assert await asyncio.wait_for(answer, 10) == {"stopReason": "cancelled"}
    assert await client.close() == 0
