"""The write tool: parents created, UTF-8 bytes counted, overwrite, refusals."""

from __future__ import annotations

import os

import pytest

from agent_forge.agent.types import ToolError
from agent_forge.coding.tools.write import WriteTool


async def write(tmp_path, **args):
    return await WriteTool(str(tmp_path)).execute("call", args, None)


async def test_creates_nested_directories_and_writes_utf8(tmp_path):
    content = "héllo wörld 中文 😀\n"
    result = await write(tmp_path, path="a/b/c/ファイル.txt", content=content)
    target = tmp_path / "a" / "b" / "c" / "ファイル.txt"
    assert target.read_bytes() == content.encode("utf-8")
    assert result.content == [{"type": "text", "text": f"Successfully wrote {len(content.encode())} bytes to "
                                                        "a/b/c/ファイル.txt"}]


async def test_overwrites_and_keeps_content_exact(tmp_path):
    (tmp_path / "f.txt").write_text("old content that is longer\n")
    await write(tmp_path, path="f.txt", content="new\r\nlines\n")
    assert (tmp_path / "f.txt").read_bytes() == b"new\r\nlines\n"


async def test_empty_content_is_allowed(tmp_path):
    result = await write(tmp_path, path="empty.txt", content="")
    assert (tmp_path / "empty.txt").read_bytes() == b""
    assert result.content[0]["text"] == "Successfully wrote 0 bytes to empty.txt"


async def test_lone_surrogate_does_not_crash(tmp_path):
    await write(tmp_path, path="s.txt", content="a\ud800b")
    assert (tmp_path / "s.txt").read_bytes() == b"a?b"


async def test_directory_target_and_file_in_the_way_are_errors(tmp_path):
    (tmp_path / "dir").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await write(tmp_path, path="dir", content="x")
    (tmp_path / "plain").write_text("x")
    with pytest.raises(ToolError, match=f"Not a directory: {tmp_path}/plain "):
        await write(tmp_path, path="plain/child.txt", content="x")


@pytest.mark.parametrize("target", ["dup.txt/child", "dup.txt/a/b/child", "sub/dup.txt/child"])
async def test_a_file_where_a_directory_should_be_is_named(tmp_path, target):
    (tmp_path / "sub").mkdir()
    for parent in (tmp_path, tmp_path / "sub"):
        (parent / "dup.txt").write_text("keep\n")
    blocker = tmp_path / target.rsplit("dup.txt", 1)[0] / "dup.txt"
    with pytest.raises(ToolError) as info:
        await write(tmp_path, path=target, content="x")
    assert str(info.value).startswith(f"Not a directory: {os.path.normpath(blocker)} ")
    assert blocker.read_text() == "keep\n"


async def test_a_symlink_to_a_regular_file_is_written_through(tmp_path):
    (tmp_path / "real.txt").write_text("old\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    await write(tmp_path, path="link.txt", content="new\n")
    assert (tmp_path / "real.txt").read_text() == "new\n" and (tmp_path / "link.txt").is_symlink()


@pytest.mark.parametrize(
    "args, message",
    [
        ({"content": "x"}, "Missing required parameter 'path'"),
        ({"path": "a.txt"}, "Missing required parameter 'content'"),
        ({"path": "a.txt", "content": 5}, "'content' must be a string, got number"),
        ({"path": ["a"], "content": ""}, "'path' must be a string, got array"),
    ],
)
async def test_bad_arguments_name_the_field(tmp_path, args, message):
    with pytest.raises(ToolError) as info:
        await write(tmp_path, **args)
    assert message in str(info.value)
    assert not (tmp_path / "a.txt").exists()
