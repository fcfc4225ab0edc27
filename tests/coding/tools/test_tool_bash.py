"""The bash tool: result text, errors for exit codes and timeouts, truncation notice, progress updates."""

from __future__ import annotations

import asyncio
import os
import re

import pytest

from agent_forge.agent.types import ToolError
from agent_forge.coding.tools.bash import BashTool


class Updates:
    def __init__(self):
        self.texts: list[str] = []
        self.details: list[object] = []
        self._changed = asyncio.Event()

    def __call__(self, result) -> None:
        assert [block["type"] for block in result.content] == ["text"]
        self.texts.append(result.content[0]["text"])
        self.details.append(result.details)
        self._changed.set()

    async def wait_for(self, needle: str) -> None:
        async def until():
            while not self.texts or needle not in self.texts[-1]:
                self._changed.clear()
                await self._changed.wait()
        await asyncio.wait_for(until(), 10)


async def run(tmp_path, args, on_update=None, **options):
    return await BashTool(str(tmp_path), **options).execute("call", args, on_update)


async def test_output_and_details(tmp_path):
    result = await run(tmp_path, {"command": "echo hello; echo oops >&2"})
    assert result.content == [{"type": "text", "text": "hello\noops\n"}]
    assert result.details == {"truncation": None, "fullOutputPath": None}


async def test_empty_output(tmp_path):
    result = await run(tmp_path, {"command": "true"})
    assert result.content[0]["text"] == "(no output)"


async def test_non_zero_exit_is_an_error_with_the_output(tmp_path):
    with pytest.raises(ToolError) as info:
        await run(tmp_path, {"command": "echo out; echo err >&2; exit 3"})
    assert str(info.value) == "out\nerr\n\nCommand exited with code 3"
    assert info.value.details == {"truncation": None, "fullOutputPath": None}
    with pytest.raises(ToolError, match="^Command exited with code 1$"):
        await run(tmp_path, {"command": "false"})


async def test_timeout_is_an_error_and_kills_the_group(tmp_path, group_members):
    with pytest.raises(ToolError) as info:
        await asyncio.wait_for(run(tmp_path, {"command": "echo pgid=$$; sleep 30 & sleep 30", "timeout": 0.5}), 10)
    message = str(info.value)
    assert message.endswith("\n\nCommand timed out after 0.5 seconds")
    assert group_members(int(re.search(r"pgid=(\d+)", message).group(1))) == []


async def test_truncated_output_names_the_full_output_file(tmp_path):
    result = await run(tmp_path, {"command": "seq 1 10234"})
    text = result.content[0]["text"]
    path = result.details["fullOutputPath"]
    assert text.startswith("8235\n") and f"10234\n\n[Showing last 2000 lines of 10234. Full output: {path}]" in text
    assert result.details["truncation"]["truncatedBy"] == "lines"
    with open(path) as f:
        assert f.read() == "".join(f"{i}\n" for i in range(1, 10_235))
    os.unlink(path)


async def test_truncated_by_bytes_and_failing(tmp_path):
    with pytest.raises(ToolError) as info:
        await run(tmp_path, {"command": "yes 0123456789012345678901234567890123456789 | head -n 5000; exit 2"})
    message = str(info.value)
    assert re.search(r"\[Showing last 1248 lines of 5000 \(50KB limit\)\. Full output: \S+\]\n\n"
                     r"Command exited with code 2$", message)
    os.unlink(info.value.details["fullOutputPath"])


async def test_progress_updates_carry_the_accumulated_output(tmp_path, make_gate):
    gate, updates = make_gate(), Updates()
    task = asyncio.create_task(run(tmp_path, {"command": f"echo one; {gate.wait}; echo two"}, updates,
                                   update_interval_s=0))
    await updates.wait_for("one\n")
    gate.open()
    result = await asyncio.wait_for(task, 10)
    assert updates.texts == ["one\n", "one\ntwo\n"]
    assert updates.details == [{"truncation": None, "fullOutputPath": None}] * 2
    assert result.content[0]["text"] == "one\ntwo\n"


async def test_progress_updates_are_coalesced_within_the_interval(tmp_path, make_gate):
    gate, updates = make_gate(), Updates()
    task = asyncio.create_task(run(tmp_path, {"command": f"echo one; {gate.wait}; echo two"}, updates,
                                   update_interval_s=3600))
    await updates.wait_for("one\n")
    gate.open()
    result = await asyncio.wait_for(task, 10)
    assert updates.texts == ["one\n"]  # "two" arrived within the interval; the final result carries it
    assert result.content[0]["text"] == "one\ntwo\n"


async def test_progress_of_long_output_is_the_truncated_tail(tmp_path):
    updates = Updates()
    await run(tmp_path, {"command": "seq 1 50000"}, updates, update_interval_s=0)
    assert updates.texts[-1].endswith("\n50000\n")
    assert all(len(text.encode()) <= 51200 for text in updates.texts)


async def test_cancelling_the_tool_kills_the_group(tmp_path, group_members):
    updates = Updates()
    task = asyncio.create_task(run(tmp_path, {"command": "echo pgid=$$; sleep 30 & sleep 30"}, updates,
                                   update_interval_s=0))
    await updates.wait_for("pgid=")
    pgid = int(re.search(r"pgid=(\d+)", updates.texts[-1]).group(1))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert group_members(pgid) == []


async def test_unicode_output(tmp_path):
    result = await run(tmp_path, {"command": "printf 'héllo 世界 😀\\n'"})
    assert result.content[0]["text"] == "héllo 世界 😀\n"


async def test_missing_working_directory(tmp_path):
    with pytest.raises(ToolError, match="^Cannot run the command: working directory .* does not exist$"):
        await BashTool(str(tmp_path / "gone")).execute("c", {"command": "true"}, None)


@pytest.mark.parametrize(
    "args, message",
    [
        ({}, "Missing required parameter 'command'"),
        ({"command": ["ls"]}, "'command' must be a string, got array"),
        ({"command": "true", "timeout": "soon"}, "'timeout' must be a number, got string"),
        ({"command": "true", "timeout": -1}, "'timeout' must be >= 0"),
    ],
)
async def test_bad_arguments_name_the_field(tmp_path, args, message):
    with pytest.raises(ToolError) as info:
        await run(tmp_path, args)
    assert message in str(info.value)


async def test_timeout_as_numeric_string_and_zero_mean_what_they_say(tmp_path):
    assert (await run(tmp_path, {"command": "echo ok", "timeout": "5"})).content[0]["text"] == "ok\n"
    assert (await run(tmp_path, {"command": "echo ok", "timeout": 0})).content[0]["text"] == "ok\n"
