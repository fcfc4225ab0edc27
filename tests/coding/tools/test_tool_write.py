"""The write tool: parents created, UTF-8 bytes counted, overwrite, refusals."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

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


# All or nothing (issue 10 tester finding 1): a temp file renamed over the target, or in place with the space
# reserved first; a failure leaves the old bytes, or nothing.

LIMITED_WRITE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
from agent_forge.agent.types import ToolError
from agent_forge.coding.tools.write import write_bytes
try:
    write_bytes(sys.argv[1], b"n" * int(sys.argv[2]))
except ToolError as exc:
    print(exc)
"""


def write_with_a_4k_file_size_limit(path, size: int) -> str:
    """`write_bytes` in a child process whose files cannot grow past 4 KB (RLIMIT_FSIZE): its error text."""
    done = subprocess.run([sys.executable, "-c", LIMITED_WRITE, str(path), str(size)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def tree(directory) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def test_a_failed_overwrite_leaves_the_old_file_byte_for_byte(tmp_path):
    old = "".join(f"line {i}\n" for i in range(2000)).encode()
    (tmp_path / "f.txt").write_bytes(old)
    error = write_with_a_4k_file_size_limit(tmp_path / "f.txt", 20_000)
    assert error == f"Cannot write {tmp_path}/f.txt: File too large"
    assert (tmp_path / "f.txt").read_bytes() == old
    assert tree(tmp_path) == ["f.txt"]  # the temp file is gone


def test_a_failed_new_file_leaves_nothing_not_even_its_new_directories(tmp_path):
    (tmp_path / "keep").mkdir()
    error = write_with_a_4k_file_size_limit(tmp_path / "keep" / "a" / "b" / "new.txt", 20_000)
    assert error.endswith("File too large")
    assert tree(tmp_path) == ["keep"]


def test_a_hard_linked_file_that_cannot_grow_keeps_its_bytes_and_its_links(tmp_path):
    (tmp_path / "f.txt").write_bytes(b"old\n" * 500)
    os.link(tmp_path / "f.txt", tmp_path / "twin.txt")
    error = write_with_a_4k_file_size_limit(tmp_path / "f.txt", 20_000)
    assert error.endswith("File too large")
    assert (tmp_path / "f.txt").read_bytes() == (tmp_path / "twin.txt").read_bytes() == b"old\n" * 500
    assert os.stat(tmp_path / "f.txt").st_nlink == 2


async def test_a_hard_linked_file_is_written_in_place_so_every_name_sees_the_new_content(tmp_path):
    (tmp_path / "f.txt").write_text("old content, longer than the new\n")
    os.link(tmp_path / "f.txt", tmp_path / "twin.txt")
    inode = os.stat(tmp_path / "f.txt").st_ino
    await write(tmp_path, path="f.txt", content="new\n")
    assert (tmp_path / "twin.txt").read_text() == "new\n"
    assert os.stat(tmp_path / "f.txt").st_ino == inode
    assert tree(tmp_path) == ["f.txt", "twin.txt"]


async def test_an_overwrite_keeps_the_permission_bits_and_the_owner(tmp_path):
    target = tmp_path / "run.sh"
    target.write_text("echo old\n")
    if os.geteuid() == 0:
        os.chown(target, 4321, 4322)
    os.chmod(target, 0o4751)  # after chown, which clears the setuid bit
    await write(tmp_path, path="run.sh", content="echo new\n")
    info = os.stat(target)
    assert stat.S_IMODE(info.st_mode) == 0o4751 and target.read_text() == "echo new\n"
    if os.geteuid() == 0:
        assert (info.st_uid, info.st_gid) == (4321, 4322)
    assert tree(tmp_path) == ["run.sh"]


async def test_a_new_file_gets_the_umask_mode(tmp_path):
    umask = os.umask(0o027)
    try:
        await write(tmp_path, path="new.txt", content="x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == 0o640


async def test_a_symlink_chain_stays_and_the_final_target_gets_the_content(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "file.txt").write_text("old\n")
    (tmp_path / "hop").symlink_to("real/file.txt")
    (tmp_path / "link.txt").symlink_to("hop")
    await write(tmp_path, path="link.txt", content="new\n")
    assert (tmp_path / "real" / "file.txt").read_text() == "new\n"
    assert os.readlink(tmp_path / "link.txt") == "hop" and os.readlink(tmp_path / "hop") == "real/file.txt"
    assert tree(tmp_path / "real") == ["file.txt"]


async def test_a_file_in_a_read_only_directory_is_still_written_in_place(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes into any directory")
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "f.txt").write_text("old\n")
    os.chmod(tmp_path / "ro", 0o555)
    try:
        await write(tmp_path, path="ro/f.txt", content="new\n")
    finally:
        os.chmod(tmp_path / "ro", 0o755)
    assert (tmp_path / "ro" / "f.txt").read_text() == "new\n"



async def test_another_user_s_file_is_written_in_place_so_it_keeps_its_owner(tmp_path, monkeypatch):
    (tmp_path / "shared.txt").write_text("old\n")
    inode = os.stat(tmp_path / "shared.txt").st_ino
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(tmp_path / "shared.txt").st_uid + 1)  # not root, not its owner
    await write(tmp_path, path="shared.txt", content="new\n")
    assert os.stat(tmp_path / "shared.txt").st_ino == inode and (tmp_path / "shared.txt").read_text() == "new\n"
    assert tree(tmp_path) == ["shared.txt"]


async def test_a_bind_mounted_file_which_cannot_be_renamed_over_is_written_in_place(tmp_path):
    (tmp_path / "source.txt").write_text("old\n")
    (tmp_path / "mounted.txt").write_text("")
    done = subprocess.run(["mount", "--bind", str(tmp_path / "source.txt"), str(tmp_path / "mounted.txt")],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {done.stderr.decode(errors='replace').strip()}")
    try:
        await write(tmp_path, path="mounted.txt", content="new\n")
        assert (tmp_path / "mounted.txt").read_text() == "new\n"
    finally:
        subprocess.run(["umount", str(tmp_path / "mounted.txt")], capture_output=True)
    assert (tmp_path / "source.txt").read_text() == "new\n"
    assert tree(tmp_path) == ["mounted.txt", "source.txt"]
