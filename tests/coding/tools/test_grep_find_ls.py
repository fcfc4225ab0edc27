"""grep, find and ls on real trees: .gitignore honoured (grep, find), limits and notices, errors; the rg/fd
path and the pure-Python path give the same answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_forge.agent.types import ToolError
from agent_forge.coding.tools.external_search import fd, ripgrep
from agent_forge.coding.tools.find import FindTool
from agent_forge.coding.tools.grep import GrepTool
from agent_forge.coding.tools.ls import LsTool
from agent_forge.coding.tools.search_output import MAX_LINE_CHARS

ENGINES = [
    pytest.param(False, id="python"),
    pytest.param(True, id="external", marks=pytest.mark.skipif(ripgrep() is None or fd() is None,
                                                               reason="rg and fd are not on PATH")),
]


def build(root: Path) -> Path:
    files = {
        ".gitignore": "*.log\nbuild/\n!keep.log\n",
        "src/app.py": "def main():\n    print('hello world')\n    return 0\n",
        "src/util.py": "HELLO = 1\n",
        "src/.hidden.py": "hello hidden\n",
        "build/out.py": "hello built\n",
        "debug.log": "hello log\n",
        "keep.log": "hello keep\n",
        "sub/.gitignore": "secret.txt\n",
        "sub/secret.txt": "hello secret\n",
        "sub/public.txt": "hello public\n",
        ".git/config": "hello git internals\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "blob.bin").write_bytes(b"hello\x00binary")
    return root


async def grep(root: Path, external: bool, **args):
    result = await GrepTool(str(root), use_external=external).execute("t", args)
    return result.content[0]["text"], result.details


async def find(root: Path, external: bool, **args):
    result = await FindTool(str(root), use_external=external).execute("t", args)
    return result.content[0]["text"], result.details


@pytest.mark.parametrize("external", ENGINES)
async def test_grep_respects_gitignore_and_skips_binary_and_git(tmp_path, external):
    text, details = await grep(build(tmp_path), external, pattern="hello")
    assert text.splitlines() == [
        "keep.log:1: hello keep",
        "src/.hidden.py:1: hello hidden",
        "src/app.py:2:     print('hello world')",
        "sub/public.txt:1: hello public",
    ]
    assert details == {"matchLimitReached": None, "linesTruncated": False}


@pytest.mark.parametrize("external", ENGINES)
async def test_grep_options(tmp_path, external):
    root = build(tmp_path)
    text, _ = await grep(root, external, pattern="hello", ignoreCase=True, glob="*.py")
    assert text.splitlines() == ["src/.hidden.py:1: hello hidden", "src/app.py:2:     print('hello world')",
                                 "src/util.py:1: HELLO = 1"]
    text, _ = await grep(root, external, pattern="print(", literal=True, context=1)
    assert text.splitlines() == ["src/app.py-1- def main():", "src/app.py:2:     print('hello world')",
                                 "src/app.py-3-     return 0"]
    text, _ = await grep(root / "src", external, pattern="hello", path="app.py")
    assert text == "app.py:2:     print('hello world')"
    assert (await grep(root, external, pattern="zebra"))[0] == "No matches found"


@pytest.mark.parametrize("external", ENGINES)
async def test_grep_limit_keeps_trailing_context_and_says_how_to_see_more(tmp_path, external):
    (tmp_path / "many.txt").write_text("".join(f"match {i}\nafter {i}\n" for i in range(10)))
    text, details = await grep(tmp_path, external, pattern="match", limit=3, context=1)
    body, notice = text.split("\n\n")
    assert body.splitlines() == ["many.txt:1: match 0", "many.txt-2- after 0", "many.txt:3: match 1",
                                 "many.txt-4- after 1", "many.txt:5: match 2", "many.txt-6- after 2"]
    assert "limit=6" in notice and details["matchLimitReached"] == 3


@pytest.mark.parametrize("external", ENGINES)
async def test_grep_long_lines_and_the_byte_cap(tmp_path, external):
    (tmp_path / "wide.txt").write_text("needle " + "x" * 2000 + "\n")
    text, details = await grep(tmp_path, external, pattern="needle")
    assert details["linesTruncated"] is True and f"over {MAX_LINE_CHARS} characters" in text
    assert len(text.splitlines()[0]) < MAX_LINE_CHARS + 50
    (tmp_path / "wide.txt").write_text("".join(f"needle {i} {'y' * 400}\n" for i in range(400)))
    text, details = await grep(tmp_path, external, pattern="needle", limit=1000)
    assert details["truncation"]["truncatedBy"] == "bytes" and "Output cut at 50KB" in text
    assert len(text.encode()) < 51 * 1024


@pytest.mark.parametrize("external", ENGINES)
async def test_grep_errors(tmp_path, external):
    with pytest.raises(ToolError, match="Path not found"):
        await grep(tmp_path, external, pattern="x", path="missing")
    with pytest.raises(ToolError, match="(?i)regular expression|regex"):
        await grep(tmp_path, external, pattern="(unclosed")
    with pytest.raises(ToolError, match="'pattern'"):
        await grep(tmp_path, external, pattern=3)


@pytest.mark.parametrize("external", ENGINES)
async def test_find_globs_gitignore_and_directories(tmp_path, external):
    root = build(tmp_path)
    assert (await find(root, external, pattern="*.py"))[0].splitlines() == ["src/.hidden.py", "src/app.py",
                                                                            "src/util.py"]
    assert (await find(root, external, pattern="*.log"))[0] == "keep.log"
    assert (await find(root, external, pattern="sub/*"))[0].splitlines() == ["sub/.gitignore", "sub/public.txt"]
    assert (await find(root, external, pattern="s*"))[0].splitlines() == ["src/", "sub/"]
    assert (await find(root, external, pattern="*.py", path="src"))[0].splitlines() == [".hidden.py", "app.py",
                                                                                        "util.py"]
    assert (await find(root, external, pattern="*.rs"))[0] == "No files found matching the pattern"


@pytest.mark.parametrize("external", ENGINES)
async def test_find_limit_and_errors(tmp_path, external):
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("")
    text, details = await find(tmp_path, external, pattern="*.txt", limit=2)
    lines = text.splitlines()
    assert len([line for line in lines if line.endswith(".txt")]) == 2 and "limit=4" in lines[-1]
    assert details["resultLimitReached"] == 2
    with pytest.raises(ToolError, match="Not a directory"):
        await find(tmp_path, external, pattern="*", path="f0.txt")
    with pytest.raises(ToolError, match="Path not found"):
        await find(tmp_path, external, pattern="*", path="nope")


@pytest.mark.parametrize("external", ENGINES)
async def test_an_ignored_directory_named_explicitly_is_searched(tmp_path, external):
    root = build(tmp_path)
    (root / "build" / "trace.log").write_text("hello trace\n")
    text, _ = await grep(root, external, pattern="hello", path="build")
    assert text == "out.py:1: hello built"  # build/ is ignored, but it was asked for; *.log still applies
    assert (await find(root, external, pattern="*", path="build"))[0] == "out.py"


async def test_engines_agree_outside_a_git_repository(tmp_path):
    if ripgrep() is None:
        pytest.skip("rg is not on PATH")
    root = build(tmp_path)
    (root / ".git" / "config").unlink()
    (root / ".git").rmdir()
    for args in ({"pattern": "hello"}, {"pattern": "o", "context": 2}, {"pattern": "HELLO", "ignoreCase": True}):
        assert await grep(root, True, **args) == await grep(root, False, **args)
    assert await find(root, True, pattern="*") == await find(root, False, pattern="*")


async def test_ls_lists_everything_sorted(tmp_path):
    root = build(tmp_path)
    (root / "Zeta.md").write_text("")
    result = await LsTool(str(root)).execute("t", {})
    assert result.content[0]["text"].splitlines() == [
        ".git/", ".gitignore", "blob.bin", "build/ (ignored)", "debug.log (ignored)", "keep.log", "src/", "sub/",
        "Zeta.md"]
    limited = await LsTool(str(root)).execute("t", {"path": "src", "limit": 2})
    assert limited.content[0]["text"].splitlines()[:2] == [".hidden.py", "app.py"]
    assert "Showing 2 of 3 entries" in limited.content[0]["text"] and limited.details["entryLimitReached"] == 2
    (root / "empty").mkdir()
    assert (await LsTool(str(root)).execute("t", {"path": "empty"})).content[0]["text"] == "(empty directory)"
    with pytest.raises(ToolError, match="Not a directory"):
        await LsTool(str(root)).execute("t", {"path": "keep.log"})
    with pytest.raises(ToolError, match="Path not found"):
        await LsTool(str(root)).execute("t", {"path": "nowhere"})


@pytest.mark.parametrize("name, properties, required", [
    ("grep", {"pattern", "path", "glob", "ignoreCase", "literal", "context", "limit"}, ["pattern"]),
    ("find", {"pattern", "path", "limit"}, ["pattern"]),
    ("ls", {"path", "limit"}, None),
])
def test_schemas(tmp_path, name, properties, required):
    tool = {"grep": GrepTool, "find": FindTool, "ls": LsTool}[name](str(tmp_path))
    assert tool.name == name and set(tool.parameters["properties"]) == properties
    assert tool.parameters.get("required") == required


async def test_ls_marks_gitignored_entries_without_hiding_them(tmp_path):
    from agent_forge.coding.tools.ls import LsTool

    (tmp_path / ".git").mkdir()
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / ".env").write_text("SECRET=1\n")
    (tmp_path / "main.py").write_text("")
    (tmp_path / ".gitignore").write_text("node_modules/\n.env\n")
    result = await LsTool(str(tmp_path)).execute("call", {})
    lines = result.content[0]["text"].splitlines()
    assert ".env (ignored)" in lines and "node_modules/ (ignored)" in lines
    assert "main.py" in lines and "src/" in lines and ".gitignore" in lines


LOOP = "Too many levels of symbolic links"


@pytest.mark.parametrize("external", ENGINES)
async def test_find_and_grep_name_why_a_path_cannot_be_searched(tmp_path, external):
    """A link loop was "Path not found" for find; a FIFO or device was "No matches found" for grep (or blocked)."""
    import os

    os.symlink("loop", tmp_path / "loop")
    os.mkfifo(tmp_path / "fifo")
    os.symlink("/dev/zero", tmp_path / "zero")
    for tool in (find, grep):
        with pytest.raises(ToolError) as error:
            await tool(tmp_path, external, pattern="x", path="loop")
        assert str(error.value) == f"Cannot search {tmp_path}/loop: {LOOP}"
    for name, kind in (("fifo", "a FIFO (named pipe)"), ("zero", "a character device")):
        with pytest.raises(ToolError) as error:
            await grep(tmp_path, external, pattern="x", path=name)
        assert str(error.value) == f"{tmp_path}/{name} is {kind}, not a regular file."
    with pytest.raises(ToolError, match="^Not a directory: "):
        await find(tmp_path, external, pattern="x", path="fifo")


def test_the_paths_rg_and_fd_say_the_os_refused_are_told_from_real_failures():
    """rg 13 printed its refusals without the `rg: ` prefix rg 14 has (they were taken for a failure), fd's
    `--show-errors` lines were not read at all, and rg names a directory as `IO error for operation on`."""
    from agent_forge.coding.tools.external_search import os_refusals

    stderr = ("./sub/deep.txt: Permission denied (os error 13)\n"
              "rg: ./locked.txt: Permission denied (os error 13)\n"
              "rg: ./a: b: IO error for operation on ./a: b: Permission denied (os error 13)\n"
              "[fd error]: ./sub/hidden: Too many levels of symbolic links (os error 40)\n"
              "rg: regex parse error:\n    (\n    ^\nerror: unclosed group\n")
    refused, rest = os_refusals(stderr)
    assert [(path, exc.errno, exc.strerror) for path, exc in refused] == [
        ("sub/deep.txt", 13, "Permission denied"), ("locked.txt", 13, "Permission denied"),
        ("a: b", 13, "Permission denied"), ("sub/hidden", 40, "Too many levels of symbolic links")]
    assert rest == "rg: regex parse error:\n    (\n    ^\nerror: unclosed group"


def test_skipped_entries_are_named_in_path_order_and_the_rest_counted():
    from agent_forge.coding.tools.search_output import MAX_NAMED_SKIPS, skip_notices

    names = [f"d{i} (Permission denied)" for i in range(MAX_NAMED_SKIPS + 2, 0, -1)]
    [files, dirs] = skip_notices(["b (x)", "a (x)"], names)
    assert files == "2 files could not be read: a (x), b (x)"
    assert dirs == (f"{len(names)} directories could not be listed (skipped): "
                    + ", ".join(sorted(names)[:MAX_NAMED_SKIPS]) + " and 2 more")
