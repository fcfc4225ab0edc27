"""File tools against FIFOs, devices and pipes (refused, never blocking), and their file I/O kept off the event
loop."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading

import pytest

from agent_forge.agent.types import ToolError
from agent_forge.coding.tools import edit, write
from agent_forge.coding.tools.edit import EditTool
from agent_forge.coding.tools.read import ReadTool
from agent_forge.coding.tools.write import WriteTool

EDIT_ARGS = {"edits": [{"oldText": "a", "newText": "b"}]}


def tool_call(kind: str, cwd, path: str):
    """The execute() coroutine of tool `kind` on `path`."""
    if kind == "write":
        return WriteTool(str(cwd)).execute("c", {"path": path, "content": "FORGED\n"}, None)
    if kind == "edit":
        return EditTool(str(cwd)).execute("c", {"path": path, **EDIT_ARGS}, None)
    return ReadTool(str(cwd)).execute("c", {"path": path}, None)


class FifoUnblocker:
    """If a tool wrongly opens the FIFO and blocks there (and with it the event loop), a reader appears after
    a while, so the test fails on its assertions instead of hanging forever."""

    def __init__(self, path):
        self.path, self.fds = path, []
        self.timer = threading.Timer(5, self._open_both_ends)
        self.timer.start()

    def _open_both_ends(self) -> None:
        self.fds.append(os.open(self.path, os.O_RDONLY | os.O_NONBLOCK))
        self.fds.append(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))

    def close(self) -> None:
        self.timer.cancel()
        self.timer.join()
        for fd in self.fds:
            os.close(fd)


@pytest.mark.parametrize("kind", ["write", "edit", "read"])
async def test_fifo_without_a_peer_is_refused_and_the_loop_keeps_running(tmp_path, kind):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    unblocker = FifoUnblocker(fifo)
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    other = asyncio.create_task(ticker())
    try:
        task = asyncio.create_task(tool_call(kind, tmp_path, "pipe"))
        with pytest.raises(ToolError) as info:
            await asyncio.wait_for(task, 4)
    finally:
        other.cancel()
        unblocker.close()
    assert str(info.value) == f"{fifo} is a FIFO (named pipe), not a regular file."
    assert ticks > 0 and unblocker.fds == []  # the other coroutine ran; nobody had to unblock the tool


@pytest.mark.parametrize("kind", ["write", "edit", "read"])
async def test_character_device_is_refused(tmp_path, kind):
    with pytest.raises(ToolError, match="^/dev/null is a character device, not a regular file.$"):
        await tool_call(kind, tmp_path, "/dev/null")


@pytest.mark.parametrize("kind", ["write", "edit"])
async def test_symlink_to_a_pipe_is_refused_and_nothing_reaches_the_pipe(tmp_path, kind):
    read_end, write_end = os.pipe()  # what /dev/stdout is in RPC mode: a pipe to the client
    try:
        (tmp_path / "out").symlink_to(f"/proc/self/fd/{write_end}")
        with pytest.raises(ToolError, match="is a FIFO"):
            await tool_call(kind, tmp_path, "out")
        os.set_blocking(read_end, False)
        with pytest.raises(BlockingIOError):
            os.read(read_end, 100)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_write_to_dev_stdout_does_not_reach_stdout(tmp_path):
    script = (
        "import asyncio, sys\n"
        "from agent_forge.agent.types import ToolError\n"
        "from agent_forge.coding.tools.write import WriteTool\n"
        "call = WriteTool('.').execute('c', {'path': '/dev/stdout', 'content': '{\"type\":\"response\"}\\n'}, None)\n"
        "try:\n"
        "    asyncio.run(call)\n"
        "except ToolError as exc:\n"
        "    print(exc, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, timeout=60)
    assert result.stdout == b""
    assert b"/dev/stdout is a FIFO (named pipe), not a regular file." in result.stderr


class Gate:
    """Blocks the (patched) file I/O in its thread until a coroutine on the event loop opens it."""

    def __init__(self):
        self.entered = threading.Event()
        self.released = threading.Event()
        self.threads: list[threading.Thread] = []

    def hold(self) -> bool:
        self.threads.append(threading.current_thread())
        self.entered.set()
        return self.released.wait(10)  # on the loop thread, nothing could release it: False after 10 s

    async def release_from_the_loop(self) -> None:
        while not self.entered.is_set():
            await asyncio.sleep(0)
        self.released.set()


async def test_write_does_its_file_io_off_the_event_loop(tmp_path, monkeypatch):
    gate, real = Gate(), write.write_bytes
    monkeypatch.setattr(write, "write_bytes", lambda path, data: gate.hold() and real(path, data))
    task = asyncio.create_task(tool_call("write", tmp_path, "slow.txt"))
    await asyncio.wait_for(gate.release_from_the_loop(), 10)
    await asyncio.wait_for(task, 10)
    assert (tmp_path / "slow.txt").read_text() == "FORGED\n"
    assert gate.threads[0] is not threading.current_thread()


async def test_edit_reads_and_writes_off_the_event_loop(tmp_path, monkeypatch):
    (tmp_path / "slow.txt").write_text("a\n")
    reading, writing = Gate(), Gate()
    real_read, real_write = edit._read_text, edit.write_bytes
    monkeypatch.setattr(edit, "_read_text", lambda path: reading.hold() and real_read(path))
    monkeypatch.setattr(edit, "write_bytes", lambda path, data: writing.hold() and real_write(path, data))
    task = asyncio.create_task(tool_call("edit", tmp_path, "slow.txt"))
    await asyncio.wait_for(reading.release_from_the_loop(), 10)
    await asyncio.wait_for(writing.release_from_the_loop(), 10)
    await asyncio.wait_for(task, 10)
    assert (tmp_path / "slow.txt").read_text() == "b\n"
    assert threading.current_thread() not in reading.threads + writing.threads


def test_write_to_dev_stdout_redirected_to_a_file_leaves_the_file_alone(tmp_path):
    script = (
        "import asyncio, sys\n"
        "from agent_forge.agent.types import ToolError\n"
        "from agent_forge.coding.tools.write import WriteTool\n"
        "print('protocol line', flush=True)\n"
        "call = WriteTool('.').execute('c', {'path': '/dev/stdout', 'content': 'FORGED\\n'}, None)\n"
        "try:\n"
        "    asyncio.run(call)\n"
        "except ToolError as exc:\n"
        "    print(exc, file=sys.stderr)\n"
    )
    with open(tmp_path / "out.jsonl", "wb") as out:
        result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, stdout=out, stderr=subprocess.PIPE,
                                timeout=60)
    assert (tmp_path / "out.jsonl").read_bytes() == b"protocol line\n"
    assert b"/dev/stdout is this process's standard output; writing to it is refused." in result.stderr
