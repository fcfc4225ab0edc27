"""End to end: the model's `edit` tool through the real CLI, matching tolerantly when it must (issue 10.4)."""

from __future__ import annotations

from agent_forge.modes.rpc.client import RpcClient


async def test_an_edit_with_dropped_trailing_spaces_and_straight_quotes_lands(agent_env, fake_llm, tmp_path):
    source = tmp_path / "greet.py"
    original = "def greet():   \r\n    return “hi”\r\n\r\nNOTE = ‘keep’\u00a0 \r\n".encode()
    source.write_bytes(original)
    fake_llm.set_script([
        {"tool_calls": [{"name": "edit", "arguments": {"path": "greet.py", "edits": [
            {"oldText": 'def greet():\n    return "hi"', "newText": 'def greet():\n    return "hello"'}]}}]},
        {"text": "Done."},
    ])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("say hello")
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["isError"] is False
    note = ("oldText matched only after ignoring trailing whitespace and reading curly quotes, dashes and "
            "non-breaking spaces as plain ones.")
    assert end["result"]["content"][0]["text"] == f"Successfully replaced 1 block in greet.py. {note}"
    assert source.read_bytes() == 'def greet():\r\n    return "hello"\r\n\r\nNOTE = ‘keep’\u00a0 \r\n'.encode()
    [tool_message] = [m for m in fake_llm.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert note in str(tool_message["content"])


async def test_matches_sharing_a_line_name_it_once(agent_env, fake_llm, tmp_path):
    """Issue 10: two tolerant twins on one line were reported "at lines 1, 1"; each line is named once, with how
    often it holds a match."""
    source = tmp_path / "quotes.txt"
    original = "“q” and „q“\nplain\n“q”\n".encode()
    source.write_bytes(original)
    fake_llm.set_script([
        {"tool_calls": [{"name": "edit", "arguments": {"path": "quotes.txt", "edits": [
            {"oldText": '"q"', "newText": "Q"}]}}]},
        {"text": "Done."},
    ])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        events = await client.prompt_and_wait("replace q")
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    text = end["result"]["content"][0]["text"]
    assert end["isError"] is True and source.read_bytes() == original
    assert text.startswith("oldText occurs 3 times in quotes.txt (not exactly, but after ")
    assert ", at lines 1 (twice), 3; it must occur exactly once." in text
