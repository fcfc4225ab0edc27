"""End to end: the edit tool's diff (`details.diff`, `firstChangedLine`) for the changes a plain line diff
misses: adding or removing only the final newline, and removed or added lines that look like diff headers.
The same diff reaches RPC clients, ACP editors (the change's location) and the terminal UI."""

from __future__ import annotations

from support.acp_client import AcpClient
from support.tui import needs_tmux

from agent_forge.modes.rpc.client import RpcClient

NO_NEWLINE = "\\ No newline at end of file"
DROP_NEWLINE = {"path": "tn.txt", "edits": [{"oldText": "two\n", "newText": "two"}]}
ADD_NEWLINE = {"path": "tn.txt", "edits": [{"oldText": "two", "newText": "two\n"}]}


async def edit_details(env, project, fake_llm, arguments) -> dict:
    fake_llm.set_script([{"tool_calls": [{"name": "edit", "arguments": arguments}]}, {"text": "Done."}])
    async with await RpcClient.start([], cwd=str(project), env=env) as client:
        events = await client.prompt_and_wait("edit it")
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["isError"] is False, end
    return end["result"]["details"]


async def test_removing_the_final_newline_is_a_change_on_the_last_line(agent_env, project, fake_llm):
    (project / "tn.txt").write_text("one\ntwo\n")
    details = await edit_details(agent_env, project, fake_llm, DROP_NEWLINE)
    assert (project / "tn.txt").read_text() == "one\ntwo"
    assert details["diff"].split("\n")[2:] == ["@@ -1,2 +1,2 @@", " one", "-two", "+two", NO_NEWLINE]
    assert details["firstChangedLine"] == 2


async def test_adding_the_final_newline_is_a_change_on_the_last_line(agent_env, project, fake_llm):
    (project / "tn.txt").write_text("one\ntwo")
    details = await edit_details(agent_env, project, fake_llm, ADD_NEWLINE)
    assert (project / "tn.txt").read_text() == "one\ntwo\n"
    assert details["diff"].split("\n")[2:] == ["@@ -1,2 +1,2 @@", " one", "-two", NO_NEWLINE, "+two"]
    assert details["firstChangedLine"] == 2


async def test_removing_trailing_lines_points_inside_the_file(agent_env, project, fake_llm):
    (project / "tn.txt").write_text("one\ntwo\nthree\n")
    details = await edit_details(agent_env, project, fake_llm,
                                 {"path": "tn.txt", "edits": [{"oldText": "one\ntwo\nthree\n", "newText": "one\n"}]})
    assert details["diff"].split("\n")[2:] == ["@@ -1,3 +1 @@", " one", "-two", "-three"]
    assert details["firstChangedLine"] == 1  # the file has one line now


async def test_an_acp_editor_is_pointed_at_the_changed_last_line(agent_env, project, fake_llm):
    (project / "tn.txt").write_text("one\ntwo\n")
    fake_llm.set_script([{"tool_calls": [{"id": "e1", "name": "edit", "arguments": DROP_NEWLINE}]},
                         {"text": "Done."}])
    client = await AcpClient.start([], cwd=str(project), env=agent_env)
    try:
        await client.initialize()
        session_id = await client.new_session(str(project))
        assert await client.prompt(session_id, "edit it") == {"stopReason": "end_turn"}
        updates = [u for u in client.updates(session_id) if u.get("toolCallId") == "e1"]
    finally:
        await client.close()
    assert updates[-1]["status"] == "completed"
    assert updates[-1]["locations"] == [{"path": str(project / "tn.txt"), "line": 2}]


@needs_tmux
def test_the_terminal_ui_shows_header_like_rows_and_the_newline_marker(terminal, fake_llm):
    work = terminal.work
    (work / "q.sql").write_text("select 1;\n-- old note\n++counter\nend")
    fake_llm.set_script([{"tool_calls": [{"name": "edit", "arguments": {"path": "q.sql", "edits": [
        {"oldText": "-- old note\n", "newText": ""}, {"oldText": "end", "newText": "END\n"}]}}]},
        {"text": "Edited the query."}])
    term = terminal()
    term.type("edit q.sql")
    term.press("Enter")
    screen = term.wait_for("Edited the query.")
    assert (work / "q.sql").read_text() == "select 1;\n++counter\nEND\n"
    rows = [row.strip() for row in screen.split("\n")]
    assert "--- old note" in rows  # the removed `-- old note` line, not taken for a file-name header
    assert "-end" in rows and NO_NEWLINE in rows and "+END" in rows
