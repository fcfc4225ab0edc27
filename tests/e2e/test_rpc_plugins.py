"""End to end: capability plugins and the interaction protocol over RPC, with the plugin in
`tests/plugins/fixtures/e2e_plugin.py` loaded by `-e` into the real CLI, against the loopback fake LLM."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

PLUGIN = Path(__file__).resolve().parents[1] / "plugins" / "fixtures" / "e2e_plugin.py"
PLUGIN_PATH = str(PLUGIN)


async def start(env, cwd, *args):
    client = await RpcClient.start(["-e", PLUGIN_PATH, *args], cwd=str(cwd), env=env)
    first = await client.next_event()  # the plugin's session_start notification: the plugin is live
    assert first["method"] == "notify" and first["message"] == "session_start startup"
    return client


def answer(client, request_id, **fields):
    client.write_raw(json.dumps({"type": "extension_ui_response", "id": request_id, **fields}).encode() + b"\n")


async def next_request(client, method=None):
    """The next `extension_ui_request` (of `method`), skipping other events."""
    while True:
        event = await client.next_event()
        if event["type"] == "extension_ui_request" and method in (None, event["method"]):
            return event


async def notification(client):
    return (await next_request(client, "notify"))["message"]


async def test_plugin_command_runs_at_once_while_the_agent_streams(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "a long answer that hangs half way", "hang_after": 3, "hang_ms": 30000}])
    async with await start(agent_env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "write"})
        async for _ in client.events_until("message_update"):
            pass
        reply = await client.send({"type": "prompt", "message": "/echo  hello there "})
        assert reply["success"] is True and reply["data"] == {"disposition": "handled"}
        assert await notification(client) == "echo: hello there (streaming: True)"
        assert (await client.send({"type": "get_state"}))["data"]["isStreaming"] is True
        steer = await client.send({"type": "steer", "message": "/echo queued"})
        follow = await client.send({"type": "follow_up", "message": "/echo later"})
        fake_llm.release_hangs()
        events = await client.wait_for("agent_settled")
        queue_state = (await client.send({"type": "get_state"}))["data"]["pendingMessageCount"]
    assert steer["success"] is False and "/echo" in steer["error"] and "prompt" in steer["error"]
    assert follow["success"] is False and "/echo" in follow["error"]
    assert events[-1] == {"type": "agent_settled", "aborted": False} and queue_state == 0
    assert len(fake_llm.requests) == 1  # the command never reached the model


async def test_plugin_commands_are_listed_by_get_commands(agent_env, tmp_path):
    async with await start(agent_env, tmp_path) as client:
        commands = (await client.send({"type": "get_commands"}))["data"]["commands"]
    echo = next(c for c in commands if c["name"] == "echo")
    assert echo == {"name": "echo", "description": "Notify the arguments", "source": "capability",
                    "sourceInfo": {"path": "<plugin:e2e_plugin:echo>", "source": "e2e_plugin", "scope": "temporary",
                                   "origin": "top-level"}, "path": PLUGIN_PATH}
    assert "description" not in next(c for c in commands if c["name"] == "boom")


async def test_the_model_calls_a_plugin_tool_that_streams_updates(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"tool_calls": [{"name": "count_words", "arguments": {"text": "one two three"}}]},
                         {"tool_calls": [{"name": "count_words", "arguments": {"words": 3}}]},
                         {"text": "Three words."}])
    async with await start(agent_env, tmp_path) as client:
        events = await client.prompt_and_wait("count")
    updates = [e["partialResult"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_update"]
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert updates == ["counted 1", "counted 2", "counted 3"]
    assert ends[0]["result"] == {"content": [{"type": "text", "text": "3 words"}], "details": {"count": 3}}
    assert ends[0]["isError"] is False
    assert ends[1]["isError"] is True and "Missing required parameter 'text'" in ends[1]["result"]["content"][0]["text"]
    tools = {t["function"]["name"]: t["function"] for t in fake_llm.requests[0]["body"]["tools"]}
    assert tools["count_words"]["parameters"]["required"] == ["text"] and "bash" in tools
    assert "count_words: Count the words of a text" in fake_llm.requests[0]["body"]["messages"][0]["content"]


async def test_a_plugin_blocks_one_bash_call_and_rewrites_another(agent_env, fake_llm, tmp_path):
    (tmp_path / "keep.txt").write_text("precious")
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "rm keep.txt"}},
                                         {"name": "bash", "arguments": {"command": "echo plain"}}]},
                         {"text": "ok"}])
    async with await start(agent_env, tmp_path) as client:
        events = await client.prompt_and_wait("clean up")
        messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    ends = {e["toolCallId"]: e for e in events if e["type"] == "tool_execution_end"}
    blocked, rewritten = ends["call_fake_1_0"], ends["call_fake_1_1"]
    assert blocked["isError"] is True
    assert blocked["result"]["content"] == [{"type": "text", "text": "rm is not allowed by the e2e plugin"}]
    assert (tmp_path / "keep.txt").read_text() == "precious"
    assert rewritten["isError"] is False and rewritten["result"]["content"][0]["text"] == "rewritten\n"
    calls = [b for b in messages[1]["content"] if b["type"] == "toolCall"]
    assert calls[1]["arguments"] == {"command": "echo plain"}  # the conversation keeps what the model sent


@pytest.mark.parametrize("action", ["fork", "clone", "new_session", "switch_session"])
async def test_a_plugin_vetoes_a_session_change(agent_env, fake_llm, tmp_path, action):
    fake_llm.set_script([{"text": "first answer"}])
    async with await start(agent_env, tmp_path) as client:
        await client.prompt_and_wait("first question")
        before = (await client.send({"type": "get_state"}))["data"]
        other = before["sessionFile"]
        await client.send({"type": "prompt", "message": f"/veto {action}"})
        assert await notification(client) == f"vetoing ['{action}']"
        entry = (await client.send({"type": "get_fork_messages"}))["data"]["messages"][0]["entryId"]
        command = {"fork": {"type": "fork", "entryId": entry}, "clone": {"type": "clone"},
                   "new_session": {"type": "new_session"},
                   "switch_session": {"type": "switch_session", "sessionPath": other}}[action]
        reply = await client.send(command)
        after = (await client.send({"type": "get_state"}))["data"]
        bad_fork = await client.send({"type": "fork", "entryId": "no-such-entry"})
    assert reply["success"] is True and reply["data"]["cancelled"] is True
    if action == "fork":
        assert reply["data"] == {"text": "first question", "cancelled": True}
    assert after["sessionFile"] == before["sessionFile"] and after["messageCount"] == 2
    assert bad_fork["success"] is False  # an unknown entry stays an error, veto or not


async def test_an_allowed_fork_starts_the_session_again_for_plugins(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "first answer"}])
    async with await start(agent_env, tmp_path) as client:
        await client.prompt_and_wait("first question")
        before = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
        entry = (await client.send({"type": "get_fork_messages"}))["data"]["messages"][0]["entryId"]
        reply = await client.send({"type": "fork", "entryId": entry})
        started = await notification(client)
        after = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert reply["data"] == {"text": "first question", "cancelled": False}
    assert started == "session_start fork" and after != before


async def test_a_failing_plugin_handler_is_reported_and_the_session_goes_on(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "still answering"}])
    async with await start(agent_env, tmp_path) as client:
        reply = await client.send({"type": "prompt", "message": "/boom"})
        command_error = await client.next_event()
        assert await client.next_event() == {"type": "agent_settled", "aborted": False}  # the command is over
        events = await client.prompt_and_wait("please explode")
    assert reply["data"] == {"disposition": "handled"}
    assert command_error == {"type": "extension_error", "extensionPath": PLUGIN_PATH, "event": "command:boom",
                             "error": "RuntimeError: the boom command exploded"}
    input_error = events[0]
    assert input_error == {"type": "extension_error", "extensionPath": PLUGIN_PATH, "event": "input",
                           "error": "ValueError: the input handler exploded"}
    final = [e for e in events if e["type"] == "message_end"][-1]["message"]
    assert final["content"][0]["text"] == "still answering"
    assert "failed in input" in client.stderr.decode()


async def test_input_handlers_transform_or_handle_and_before_run_adds_context(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "HI"}, {"text": "noted"}])
    async with await start(agent_env, tmp_path) as client:
        handled = await client.send({"type": "prompt", "message": "ping"})
        pong = await notification(client)
        await client.wait_for("agent_settled")  # a handled prompt settles too
        await client.prompt_and_wait("shout hi there")
        await client.prompt_and_wait("run with context")
        state = (await client.send({"type": "get_state"}))["data"]
    assert handled["data"] == {"disposition": "handled"} and pong == "pong"
    first, second = (r["body"]["messages"] for r in fake_llm.requests)
    assert first[-1]["content"] == [{"type": "text", "text": "HI THERE"}]
    assert [m["content"] for m in second[-2:]] == [[{"type": "text", "text": "run with context"}],
                                                  [{"type": "text", "text": "Context added by the e2e plugin."}]]
    assert second[0]["content"].endswith("E2E-MARK") and not first[0]["content"].endswith("E2E-MARK")
    lines = [json.loads(line) for line in Path(state["sessionFile"]).read_text().splitlines()]
    custom = [line for line in lines if line["type"] == "custom_message"]
    assert custom and custom[0]["customType"] == "e2e_plugin" and custom[0]["content"].startswith("Context")


async def next_error(client):
    """The next `extension_error`, skipping other events."""
    while True:
        event = await client.next_event()
        if event["type"] == "extension_error":
            return event


async def test_plugin_code_raising_systemexit_or_keyboardinterrupt_never_ends_the_agent(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"tool_calls": [{"name": "strict_options", "arguments": {"argv": ["--bogus"]}}]},
                         {"text": "survived"}])
    async with await start(agent_env, tmp_path) as client:
        exit_reply = await client.send({"type": "prompt", "message": "/exit 5"})
        exit_error = await next_error(client)
        await client.wait_for("agent_settled")
        interrupt_reply = await client.send({"type": "prompt", "message": "/interrupt"})
        interrupt_error = await next_error(client)
        await client.wait_for("agent_settled")
        events = await client.prompt_and_wait("exit please")
        state = await client.send({"type": "get_state"})
    assert exit_reply["data"] == interrupt_reply["data"] == {"disposition": "handled"}
    assert (exit_error["event"], exit_error["error"]) == ("command:exit", "SystemExit: 5")
    assert (interrupt_error["event"], interrupt_error["error"]) == ("command:interrupt", "KeyboardInterrupt")
    input_error = next(e for e in events if e["type"] == "extension_error")
    assert (input_error["event"], input_error["error"]) == ("input", "SystemExit: 5")
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["isError"] is True and end["result"]["content"] == [{"type": "text", "text": "SystemExit: 2"}]
    assert [e for e in events if e["type"] == "message_end"][-1]["message"]["content"][0]["text"] == "survived"
    assert state["success"] is True and client.returncode == 0


@pytest.mark.parametrize("escaped_type", [b"extension\\u005fui_response", b"extension_ui\\u005fresponse"])
async def test_an_answer_whose_type_has_json_escapes_reaches_the_waiting_dialog(agent_env, fake_llm, tmp_path,
                                                                                escaped_type):
    fake_llm.set_script([{"text": "shipped"}])
    async with await start(agent_env, tmp_path) as client:
        reply = client.send_nowait({"type": "prompt", "message": "confirm: ship it"})
        request = await next_request(client, "confirm")
        client.write_raw(b'{"type":"' + escaped_type + b'","id":' + json.dumps(request["id"]).encode()
                         + b',"confirmed":true}\n')
        assert (await asyncio.wait_for(reply, 30))["data"] == {"disposition": "started"}
        await client.wait_for("agent_settled")
    assert fake_llm.requests[0]["body"]["messages"][-1]["content"] == [
        {"type": "text", "text": "ship it (confirmed: True)"}]


DIALOGS = {
    "select": ({"value": "Allow"}, '"Allow"', "null",
               {"title": "Pick one", "options": ["Allow", "Block"]}),
    "confirm": ({"confirmed": True}, "true", "false", {"title": "Sure?", "message": "It cannot be undone"}),
    "input": ({"value": "Ann"}, '"Ann"', "null", {"title": "Name?", "placeholder": "type here"}),
    "editor": ({"value": "new text"}, '"new text"', "null", {"title": "Edit", "prefill": "line 1\nline 2"}),
}


async def test_each_dialog_is_answered_cancelled_and_timed_out(agent_env, tmp_path):
    async with await start(agent_env, tmp_path) as client:
        for method, (fields, answered, default, shape) in DIALOGS.items():
            await client.send({"type": "prompt", "message": f"/ask {method}"})
            request = await next_request(client)
            assert request == {"type": "extension_ui_request", "id": request["id"], "method": method, **shape}
            answer(client, request["id"], **fields)
            assert await notification(client) == f"{method} -> {answered}"

            await client.send({"type": "prompt", "message": f"/ask {method}"})
            request = await next_request(client)
            answer(client, request["id"], cancelled=True)
            assert await notification(client) == f"{method} -> {default}"

            await client.send({"type": "prompt", "message": f"/ask {method} 0.05"})
            request = await next_request(client)
            assert request["timeout"] == 50  # milliseconds on the wire; the agent resolves it
            assert await notification(client) == f"{method} -> {default}"
            answer(client, request["id"], **fields)  # too late: ignored
        state = await client.send({"type": "get_state"})
    assert state["success"] is True
    responses = [r for r in client.records if r.get("type") == "response"]
    assert len(responses) == 3 * len(DIALOGS) + 1  # dialog answers are never answered themselves
    assert client.invalid_lines == []


async def test_unknown_and_malformed_answers_are_ignored_or_count_as_cancelled(agent_env, tmp_path):
    async with await start(agent_env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "/ask select"})
        request = await next_request(client)
        answer(client, "no-such-id", value="Allow")
        answer(client, request["id"], value="Neither")  # not one of the options
        result = await notification(client)
        await client.send({"type": "prompt", "message": "/ask confirm"})
        request = await next_request(client)
        client.write_raw(b'{"type":"extension_ui_response","id":' + json.dumps(request["id"]).encode()
                         + b',"confirmed":"yes"}\n')
        confirm = await notification(client)
        state = await client.send({"type": "get_state"})
    assert result == "select -> null" and confirm == "confirm -> false" and state["success"] is True


async def test_an_answer_holding_an_unusable_number_counts_as_cancelled(agent_env, tmp_path):
    """`1e999` is valid JSON beyond the float range: the answer is dropped as malformed, the agent goes on."""
    async with await start(agent_env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "/ask input"})
        request = await next_request(client)
        client.write_raw(b'{"type":"extension_ui_response","id":' + json.dumps(request["id"]).encode()
                         + b',"value":1e999}\n')
        result = await notification(client)
        state = await client.send({"type": "get_state"})
    assert result == "input -> null" and state["success"] is True


async def test_abort_cancels_a_command_waiting_for_a_dialog(agent_env, tmp_path):
    async with await start(agent_env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "/ask confirm"})
        request = await next_request(client)
        reply = await client.send({"type": "abort"})
        settled = await client.wait_for("agent_settled")
        answer(client, request["id"], confirmed=True)  # after the abort: ignored
        state = await client.send({"type": "get_state"})
    assert reply["success"] is True and state["success"] is True
    assert settled[-1] == {"type": "agent_settled", "aborted": True}
    assert not [e for e in settled if e.get("method") == "notify"]  # cancelled at its await: it never went on


async def test_a_dialog_pending_at_stdin_eof_resolves_and_the_agent_exits(agent_env, tmp_path):
    client = await start(agent_env, tmp_path)
    await client.send({"type": "prompt", "message": "/ask input"})
    await next_request(client)
    code = await asyncio.wait_for(client.close(), 30)
    assert code == 0
    messages = [r.get("message") for r in client.records if r.get("method") == "notify"]
    assert "input -> null" in messages


async def test_fire_and_forget_requests_are_emitted(agent_env, tmp_path):
    async with await start(agent_env, tmp_path) as client:
        await client.send({"type": "prompt", "message": "/decorate"})
        requests = [await next_request(client) for _ in range(7)]
    for request in requests:
        assert request.pop("type") == "extension_ui_request" and isinstance(request.pop("id"), str)
    assert requests == [
        {"method": "notify", "message": "careful", "notifyType": "warning"},
        {"method": "setStatus", "statusKey": "e2e", "statusText": "working"},
        {"method": "setStatus", "statusKey": "e2e"},
        {"method": "setWidget", "widgetKey": "e2e", "widgetPlacement": "belowEditor",
         "widgetLines": ["line one", "line two"]},
        {"method": "setWidget", "widgetKey": "e2e", "widgetPlacement": "aboveEditor"},
        {"method": "setTitle", "title": "agent-forge e2e"},
        {"method": "set_editor_text", "text": "prefilled"},
    ]
    ids = [r.get("id") for r in client.records if r.get("type") == "extension_ui_request"]
    assert len(ids) == len(set(ids))


# -- discovery and project trust ---------------------------------------------------------------------------

PROJECT_PLUGIN = "def setup(plugin):\n    plugin.register_command({name!r}, lambda args, ctx: None)\n"


async def command_names(env, cwd, *args):
    async with await RpcClient.start(list(args), cwd=str(cwd), env=env) as client:
        names = [c["name"] for c in (await client.send({"type": "get_commands"}))["data"]["commands"]]
    return names, client.stderr.decode()


def trust_cli(env, cwd, flag):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "agent_forge", flag], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    plugins = root / ".agent-forge" / "agent" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "project_cmds.py").write_text(PROJECT_PLUGIN.format(name="from-project"))
    (root / "sub").mkdir()
    return root


async def test_project_plugins_need_trust(agent_env, project):
    names, stderr = await command_names(agent_env, project)
    assert "from-project" not in names
    assert "project_cmds.py" in stderr and "not trusted" in stderr and "--approve" in stderr
    approved, _ = await command_names(agent_env, project, "--approve")
    assert "from-project" in approved


async def test_recorded_trust_applies_to_subdirectories_and_no_approve_overrides_it(agent_env, project):
    recorded = trust_cli(agent_env, project, "--trust-project")
    assert recorded.returncode == 0 and "trusted" in recorded.stdout and "trust.json" in recorded.stdout
    trusted, stderr = await command_names(agent_env, project)
    assert "from-project" in trusted and "not trusted" not in stderr
    nested = project / "sub" / ".agent-forge" / "agent" / "plugins"
    nested.mkdir(parents=True)
    (nested / "nested_cmds.py").write_text(PROJECT_PLUGIN.format(name="from-sub"))
    below, _ = await command_names(agent_env, project / "sub")
    assert "from-sub" in below
    overridden, _ = await command_names(agent_env, project, "--no-approve")
    assert "from-project" not in overridden
    assert trust_cli(agent_env, project, "--distrust-project").returncode == 0
    distrusted, stderr = await command_names(agent_env, project)
    assert "from-project" not in distrusted and "distrusted for" in stderr


async def test_default_project_trust_counts_only_from_the_agent_dir(agent_env_factory, project):
    (project / ".agent-forge" / "agent" / "settings.json").write_text('{"defaultProjectTrust": "always"}')
    self_trusting, _ = await command_names(agent_env_factory(), project)
    assert "from-project" not in self_trusting
    always, _ = await command_names(agent_env_factory(settings={"defaultProjectTrust": "always"}), project)
    assert "from-project" in always


async def test_user_plugins_load_and_no_plugins_keeps_only_explicit_ones(agent_env, tmp_path):
    user_dir = Path(agent_env["AGENT_FORGE_DIR"]) / "plugins"
    user_dir.mkdir()
    (user_dir / "mine.py").write_text(PROJECT_PLUGIN.format(name="from-user"))
    (user_dir / "broken.py").write_text("raise ImportError('broken on purpose')\n")
    names, stderr = await command_names(agent_env, tmp_path)
    assert "from-user" in names and "broken on purpose" in stderr
    explicit, _ = await command_names(agent_env, tmp_path, "--no-plugins", "-e", PLUGIN_PATH)
    assert "from-user" not in explicit and "echo" in explicit


SETTLING_PLUGIN = '''
from agent_forge.plugins import HANDLED


def setup(plugin):
    @plugin.command("note")
    async def note(args, ctx):
        ctx.ui.notify("noted " + args)

    @plugin.command("ask")
    def ask(args, ctx):
        ctx.session.send_user_message(args)

    @plugin.on("input")
    def swallow(event, ctx):
        return HANDLED if event.text == "swallow" else None
'''


def settled_after_response(client, request_id) -> list[dict]:
    """The records after the response to `request_id`."""
    index = next(i for i, r in enumerate(client.records) if r.get("id") == request_id)
    return client.records[index + 1:]


async def test_a_handled_prompt_ends_with_one_agent_settled(agent_env, fake_llm, tmp_path):
    """Issue 10 point 8: clients wait for `agent_settled` after every accepted prompt (the ACP adapter does)."""
    plugin = tmp_path / "settling.py"
    plugin.write_text(SETTLING_PLUGIN)
    fake_llm.set_script([{"text": "asked and answered"}])
    async with await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=agent_env) as client:
        replies = []
        for request_id, message in (("note", "/note a"), ("swallow", "swallow"), ("ask", "/ask question")):
            replies.append(await client.send({"type": "prompt", "message": message, "id": request_id}))
            await client.wait_for("agent_settled")
        final = (await client.send({"type": "get_state", "id": "state"}))["data"]
    assert [r["data"] for r in replies] == [{"disposition": "handled"}] * 3
    note = settled_after_response(client, "note")
    assert [r["type"] for r in note[:2]] == ["extension_ui_request", "agent_settled"]  # after the handler ran
    assert note[1] == {"type": "agent_settled", "aborted": False}
    assert settled_after_response(client, "swallow")[0] == {"type": "agent_settled", "aborted": False}
    asked = [r["type"] for r in settled_after_response(client, "ask") if r.get("id") != "state"]
    assert asked[0] == "agent_start" and asked[-2:] == ["agent_end", "agent_settled"]
    assert asked.count("agent_settled") == 1  # the run the command started is what settles
    assert len(fake_llm.requests) == 1 and final["isStreaming"] is False


async def test_plugin_warnings_reach_stderr_without_control_sequences(agent_env, tmp_path):
    (tmp_path / "broken.py").write_text('raise RuntimeError("\\x1b]0;pwned\\x07import \\x1b[2Jfailed")\n')
    async with await start(agent_env, tmp_path, "-e", "broken.py") as client:
        await client.send({"type": "get_state"})
    stderr = client.stderr.decode()
    assert "Plugin not loaded: " in stderr and "\x1b" not in stderr
    assert "\\x1b]0;pwned\\x07import \\x1b[2Jfailed" in stderr  # shown as text, not obeyed
