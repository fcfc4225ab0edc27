"""Unit tests of ACP mode's pure translations: tool call titles, kinds and content, prompt content, the
client's MCP servers, replayed history, JSON-RPC message shapes. Each result is checked against the official
schema where it is a protocol object (tests/support/acp_schema.py)."""

from __future__ import annotations

import pytest

from agent_forge.modes.acp import content, replay, sessions, tool_calls, transport
from agent_forge.modes.acp.protocol import AcpError
from support.acp_schema import problems_of


def test_titles_are_one_short_line():
    assert tool_calls.title_of("bash", {"command": "make\nmake test"}) == "make …"
    assert tool_calls.title_of("bash", {"command": 5}) == "bash"
    assert tool_calls.title_of("grep", {"pattern": "TODO", "path": "src"}) == "grep TODO in src"
    assert tool_calls.title_of("ls", {}) == "Ls ."
    assert tool_calls.title_of("mcp_thing", {"x": 1}) == "mcp_thing"
    assert len(tool_calls.title_of("bash", {"command": "x" * 500})) == tool_calls.MAX_TITLE


@pytest.mark.parametrize("name, args, title", [
    ("write", {"path": "evil\nWarning: x\x1b]0;t\x07.txt"}, "Write evil\\nWarning: x\\x1b]0;t\\x07.txt"),
    ("grep", {"pattern": "a\tb", "path": "s\nrc"}, "grep a\\tb in s\\nrc"),
    ("bash", {"command": "echo\tx\x1b[2J\nrm y"}, "echo\\tx\\x1b[2J …"),
    ("ev\nil\x1b]0;PWN\x07", {}, "ev\\nil\\x1b]0;PWN\\x07"),
])
def test_a_title_shows_a_hostile_path_pattern_or_name_on_one_line_without_control_bytes(name, args, title):
    assert tool_calls.title_of(name, args) == title


@pytest.mark.parametrize(("name", "kind"), [("read", "read"), ("write", "edit"), ("edit", "edit"),
                                            ("bash", "execute"), ("find", "search"), ("web_fetch", "fetch"),
                                            ("srv_tool", "other")])
def test_kinds(name, kind):
    assert tool_calls.kind_of(name) == kind


def test_bash_output_fence_outgrows_backticks_in_the_output():
    [item] = tool_calls.output_content({"content": [{"type": "text", "text": "a ``` b\n"}]}, fenced=True)
    assert item["content"]["text"] == "````\na ``` b\n````"
    assert problems_of("ToolCallContent", item) == []


def test_locations_are_absolute_and_skip_bad_lines(tmp_path):
    assert tool_calls.locations_of("read", {"path": "a/../b.txt", "offset": -1}, str(tmp_path)) == [
        {"path": str(tmp_path / "b.txt")}]
    assert tool_calls.locations_of("bash", {"path": "x"}, str(tmp_path)) == []
    assert tool_calls.locations_of("srv_tool", {"path": "x"}, str(tmp_path)) == []


def test_edit_diffs_skip_malformed_edits(tmp_path):
    args = {"path": "f", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": 1}, "junk"]}
    assert tool_calls.pending_content("edit", args, str(tmp_path)) == [
        {"type": "diff", "path": str(tmp_path / "f"), "oldText": "a", "newText": "b"}]


def test_the_witness_says_new_unknown_or_text_before_and_after(tmp_path):
    from agent_forge.modes.acp.witness import DiskWitness, FileChange

    (tmp_path / "bin").write_bytes(b"\xff\x00")
    (tmp_path / "t").write_text("hi")
    witness = DiskWitness()
    for call, name, after in (("new", "new", "made"), ("bin", "bin", None), ("t", "t", "there")):
        with witness.changing(call, str(tmp_path / name)):
            if after is not None:
                (tmp_path / name).write_text(after)
    assert witness.take("new") == FileChange(str(tmp_path / "new"), None, "made")
    assert witness.take("bin") == FileChange(str(tmp_path / "bin"), False, None)
    assert witness.take("t") == FileChange(str(tmp_path / "t"), "hi", "there")
    assert witness.take("t") is None


def test_prompt_content_keeps_order_and_names_links():
    text, images = content.prompt_input([
        {"type": "text", "text": "/review"},
        {"type": "resource_link", "name": "a b.py", "uri": "file:///src/a%20b.py"},
        {"type": "resource", "resource": {"uri": "https://x/doc", "text": "body"}},
        {"type": "resource", "resource": {"uri": "file:///i.png", "blob": "iVBORw0KGgo=", "mimeType": "image/png"}},
    ])
    assert text == '/review\n[a b.py](</src/a b.py>)\n<file name="https://x/doc">\nbody\n</file>'
    assert images == [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]


@pytest.mark.parametrize("blocks", [
    [{"type": "image", "data": "x", "mimeType": "image/tiff"}],
    [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
    [{"type": "resource", "resource": {"uri": "file:///a.zip", "blob": "AAAA", "mimeType": "application/zip"}}],
    [{"type": "resource", "resource": {"uri": "file:///a"}}],
    [{"type": "video"}], ["text"], {"type": "text"},
])
def test_prompt_content_that_cannot_reach_the_model_is_refused(blocks):
    with pytest.raises(AcpError) as caught:
        content.prompt_input(blocks)
    assert caught.value.code == -32602


def test_mcp_servers_become_mcp_json_entries():
    servers, notes = sessions.mcp_servers([
        {"name": "a", "command": "srv", "args": ["-x"], "env": [{"name": "K", "value": "v"}]},
        {"type": "http", "name": "b", "url": "http://h/mcp", "headers": [{"name": "H", "value": "1"}]},
    ])
    assert servers == {"a": {"command": "srv", "args": ["-x"], "env": {"K": "v"}},
                       "b": {"url": "http://h/mcp", "headers": {"H": "1"}}}
    assert notes == []
    names = ("a b", "a/b", "x" * 70, "x" * 64, "a_b_2", "a_b_2")
    renamed, notes = sessions.mcp_servers([{"name": n, "command": "srv"} for n in names])
    # the mcp.json rule, each name unique; a name that fits it is kept (its first server's)
    assert list(renamed) == ["a_b", "a_b_3", "x" * 62 + "_2", "x" * 64, "a_b_2", "a_b_2_2"]
    assert len(notes) == 4 and "'a/b' is named a_b_3 here" in notes[1]
    for bad in ([{"command": "x"}], [{"name": "a", "command": "x", "args": [1]}],
                [{"name": "a", "type": "http"}], [{"name": "a", "command": "x", "env": [{"name": "K"}]}], "x"):
        with pytest.raises(AcpError):
            sessions.mcp_servers(bad)


def test_replay_tells_each_kind_of_message_in_schema_shape(tmp_path):
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image", "data": "AA", "mimeType": "image/png"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}, {"type": "text", "text": "a"},
                                          {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}],
         "stopReason": "toolUse"},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": True,
         "content": [{"type": "text", "text": "boom"}]},
        {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "overloaded"},
        {"role": "bashExecution", "command": "pwd", "output": "/x\n", "exitCode": 0},
        {"role": "compactionSummary", "summary": "s"},
        {"role": "custom", "customType": "note", "content": "shown", "display": True},
        {"role": "custom", "content": "hidden", "display": False},
    ]
    updates = list(replay.replay(messages, str(tmp_path)))
    assert [u["sessionUpdate"] for u in updates] == [
        "user_message_chunk", "user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "tool_call",
        "agent_message_chunk", "tool_call", "agent_thought_chunk", "agent_thought_chunk"]
    assert updates[-1]["content"]["text"] == "[note] shown"
    assert updates[4]["status"] == "failed" and "boom" in updates[4]["content"][0]["content"]["text"]
    assert updates[5]["content"]["text"].endswith("Error: overloaded")
    for update in updates:
        assert problems_of("SessionUpdate", update) == []


@pytest.mark.parametrize(("message", "problem"), [
    ({"jsonrpc": "2.0", "method": "m", "params": 3}, "params"),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "m"}, "id"),
    ({"jsonrpc": "2.0", "id": True, "method": "m"}, "id"),
    ({"jsonrpc": "2.0", "method": 7}, "method"),
    ({"jsonrpc": "2.0", "id": 1}, "result"),
    ({"id": 1, "method": "m"}, "jsonrpc"),
])
def test_json_rpc_shape_problems(message, problem):
    assert problem in transport._shape_problem(message)


def test_json_rpc_messages_that_are_fine():
    for message in ({"jsonrpc": "2.0", "id": None, "method": "m"}, {"jsonrpc": "2.0", "method": "n"},
                    {"jsonrpc": "2.0", "id": "a", "result": None}, {"jsonrpc": "2.0", "id": 2, "error": {}}):
        assert transport._shape_problem(message) is None
