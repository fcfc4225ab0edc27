"""Changes to one file one after another (`file_queue.py`), and edit's check just before it writes a file from
the disk: a real `sed -i` run between the edit's read and its write, through the tool's own hook point (its
`files` access is asked before each read of the disk, so the change lands exactly there). The same race through
the real CLI, with the editor serving the file, is in tests/e2e/test_same_file_calls.py."""

from __future__ import annotations

import asyncio
import os
import subprocess

import pytest

from agent_forge.agent.types import ToolError
from agent_forge.coding.tools import file_queue
from agent_forge.coding.tools.edit import EditTool
from agent_forge.coding.tools.file_access import LocalFiles
from agent_forge.coding.tools.write import WriteTool

START = "AAA\nBBB\nCCC\n"


class SedBeforeRead(LocalFiles):
    """A `FileAccess` that leaves every file to the disk and runs `sed -i <script>` on it before read `at`."""

    def __init__(self, script: str, at: int = 2):
        self.script, self.at, self.reads = script, at, 0

    async def read_text(self, path: str) -> None:
        self.reads += 1
        if self.reads == self.at:
            subprocess.run(["sed", "-i", self.script, path], check=True)

    async def write_text(self, path: str, text: str) -> bool:
        return False


async def edit(tool: EditTool, path: str, old: str, new: str):
    return await tool.execute("call", {"path": path, "edits": [{"oldText": old, "newText": new}]})


@pytest.fixture
def par(tmp_path):
    path = tmp_path / "par.txt"
    path.write_text(START)
    return path


async def test_a_change_between_read_and_write_is_kept(tmp_path, par):
    tool = EditTool(str(tmp_path))
    tool.files = SedBeforeRead("s/CCC/ccc/")
    result = await edit(tool, "par.txt", "AAA", "aaa")
    assert par.read_text() == "aaa\nBBB\nccc\n"
    assert result.content[0]["text"] == ("Successfully replaced 1 block in par.txt. par.txt changed while it "
                                         "was being edited; the edits were applied to its new content.")
    assert result.details["diff"].splitlines()[3:] == ["-AAA", "+aaa", " BBB", " ccc"]  # against what it edited


async def test_a_change_the_edits_no_longer_fit_fails_and_writes_nothing(tmp_path, par):
    tool = EditTool(str(tmp_path))
    tool.files = SedBeforeRead("s/AAA/xyz/")
    with pytest.raises(ToolError) as info:
        await edit(tool, "par.txt", "AAA", "aaa")
    assert str(info.value).startswith("par.txt changed while it was being edited, and the edits no longer apply "
                                      "to its new content: Could not find oldText in par.txt.")
    assert str(info.value).endswith("Nothing was written.")
    assert par.read_text() == "xyz\nBBB\nCCC\n"


class DeleteBeforeRead(SedBeforeRead):
    """Removes the file before read `at` instead."""

    async def read_text(self, path: str) -> None:
        self.reads += 1
        if self.reads == self.at:
            os.unlink(path)


async def test_a_file_deleted_between_read_and_write_is_not_made_again(tmp_path, par):
    tool = EditTool(str(tmp_path))
    tool.files = DeleteBeforeRead("")
    with pytest.raises(ToolError, match=r"^par.txt changed while it was being edited: File not found: .*par.txt\. "
                                        r"Nothing was written\.$"):
        await edit(tool, "par.txt", "AAA", "aaa")
    assert not par.exists()


async def test_an_unchanged_file_is_written_with_the_usual_result(tmp_path, par):
    tool = EditTool(str(tmp_path))
    tool.files = SedBeforeRead("s/CCC/ccc/", at=0)  # never runs
    result = await edit(tool, "par.txt", "AAA", "aaa")
    assert result.content[0]["text"] == "Successfully replaced 1 block in par.txt."
    assert tool.files.reads == 2 and par.read_text() == "aaa\nBBB\nCCC\n"


class Buffers(LocalFiles):
    """An editor's buffers whose writes to `slow` wait for `release`; `log` records every request in order."""

    def __init__(self, texts: dict[str, str], slow: str):
        self.texts, self.slow, self.log = texts, slow, []
        self.writing, self.release = asyncio.Event(), asyncio.Event()

    async def read_text(self, path: str) -> str:
        self.log.append(("read", path))
        return self.texts[path]

    async def write_text(self, path: str, text: str) -> bool:
        self.log.append(("write", path))
        if path == self.slow:
            self.writing.set()
            await self.release.wait()
        self.texts[path] = text
        self.log.append(("wrote", path))
        return True


async def test_changes_of_one_file_wait_in_call_order_and_other_files_do_not(tmp_path):
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    buffers = Buffers({a: START, b: ""}, slow=a)
    edit_tool, write_tool = EditTool(str(tmp_path)), WriteTool(str(tmp_path))
    edit_tool.files = write_tool.files = buffers
    first = asyncio.ensure_future(edit(edit_tool, "a.txt", "AAA", "aaa"))
    second = asyncio.ensure_future(edit(edit_tool, "./a.txt", "CCC", "ccc"))
    third = asyncio.ensure_future(write_tool.execute("call", {"path": "a.txt", "content": "last\n"}))
    await buffers.writing.wait()
    await write_tool.execute("call", {"path": "b.txt", "content": "other\n"})  # while a.txt is being written
    assert buffers.log == [("read", a), ("read", a), ("write", a), ("write", b), ("wrote", b)]
    buffers.release.set()
    await asyncio.gather(first, second, third)
    assert buffers.log[5:] == [("wrote", a), ("read", a), ("read", a), ("write", a), ("wrote", a),
                               ("write", a), ("wrote", a)]
    assert buffers.texts == {a: "last\n", b: "other\n"}
    assert file_queue.held() == 0  # nothing is kept per path once the changes are done


async def test_a_cancelled_wait_leaves_the_queue_clean(tmp_path):
    path = str(tmp_path / "a.txt")
    async with file_queue.hold(path):
        waiting = asyncio.ensure_future(file_queue.hold(path).__aenter__())
        await asyncio.sleep(0)  # one loop step: the waiter is queued behind the holder (no timing involved)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert file_queue.held() == 1
    assert file_queue.held() == 0
