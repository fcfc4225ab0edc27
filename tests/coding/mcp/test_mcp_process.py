"""What a stdio MCP server gets: the safe environment, a stderr pipe whose kept tail is capped; and a call's
own time limit (`CallDeadlines.run(limit=...)`)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from agent_forge.coding.mcp.deadline import CallDeadlines, CallExpired
from agent_forge.coding.mcp.process import StderrTail, server_environment


def test_the_environment_is_the_extra_safe_set_plus_the_entry():
    environ = {"LANG": "C.UTF-8", "TZ": "UTC", "SECRET": "x", "LC_ALL": "() { evil; }", "TMPDIR": "/t",
               "HOME": "/h", "PATH": "/bin", "SHELL": "() { evil; }", "OPENAI_API_KEY": "k"}
    assert server_environment({"A": "1", "TZ": "Asia/Tokyo"}, environ) == {
        "HOME": "/h", "PATH": "/bin", "LANG": "C.UTF-8", "TMPDIR": "/t", "TZ": "Asia/Tokyo", "A": "1"}


async def test_stderr_keeps_only_its_tail():
    tail = StderrTail(keep=1000)
    await tail.start()
    script = "import sys\nfor i in range(5000): sys.stderr.write(f'line {i}\\n')\nsys.stderr.write('the end\\n')"
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", script, stderr=tail.writer)
    tail.spawned()
    await process.wait()
    await asyncio.wait_for(tail.ended.wait(), 30)  # end of file: every byte was read
    text = tail.text()
    tail.close()
    tail.close()  # idempotent
    assert text.endswith("line 4999\nthe end\n") and len(text) <= 1000


async def test_a_call_over_its_limit_is_cancelled_and_says_so():
    deadlines = CallDeadlines()
    cancelled = asyncio.Event()

    async def hang() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(CallExpired) as caught:
        await deadlines.run(hang(), 0.05)
    assert caught.value.limit and caught.value.seconds == 0.05 and cancelled.is_set()
    assert await deadlines.run(asyncio.sleep(0, "fast"), 5) == "fast"
