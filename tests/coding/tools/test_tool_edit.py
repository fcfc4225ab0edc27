"""The edit tool: exact unique matches against the original, overlaps, line endings, BOM, diff."""

from __future__ import annotations

import pytest

from agent_forge.agent.types import ToolError
from agent_forge.coding.tools.edit import EditTool

SOURCE = "def greet(name):\n    return 'Hello, ' + name\n\nprint(greet('world'))\n"


async def edit(tmp_path, **args):
    return await EditTool(str(tmp_path)).execute("call", args, None)


@pytest.fixture
def hello(tmp_path):
    path = tmp_path / "hello.py"
    path.write_text(SOURCE)
    return path


async def test_replaces_a_unique_block_and_reports_a_diff(tmp_path, hello):
    result = await edit(tmp_path, path="hello.py", edits=[{"oldText": "'Hello, '", "newText": "'Hi, '"}])
    assert hello.read_text() == SOURCE.replace("Hello", "Hi")
    assert result.content == [{"type": "text", "text": "Successfully replaced 1 block in hello.py."}]
    assert result.details["firstChangedLine"] == 2
    assert result.details["diff"].splitlines() == [
        "--- hello.py",
        "+++ hello.py",
        "@@ -1,4 +1,4 @@",
        " def greet(name):",
        "-    return 'Hello, ' + name",
        "+    return 'Hi, ' + name",
        " ",
        " print(greet('world'))",
    ]


async def test_diff_hunk_header_has_the_line_numbers(tmp_path):
    (tmp_path / "n.txt").write_text("".join(f"{i}\n" for i in range(1, 31)))
    result = await edit(tmp_path, path="n.txt", edits=[{"oldText": "\n20\n", "newText": "\ntwenty\n"}])
    assert "@@ -17,7 +17,7 @@" in result.details["diff"]
    assert result.details["firstChangedLine"] == 20


async def test_missing_text_suggests_rereading_and_leaves_the_file(tmp_path, hello):
    with pytest.raises(ToolError, match="Could not find oldText in hello.py.*re-read the file"):
        await edit(tmp_path, path="hello.py", edits=[{"oldText": "does not exist", "newText": "x"}])
    assert hello.read_text() == SOURCE


async def test_ambiguous_text_reports_the_count(tmp_path, hello):
    with pytest.raises(ToolError, match=r"edits\[1\].oldText occurs 2 times in hello.py.*more surrounding"):
        await edit(tmp_path, path="hello.py",
                   edits=[{"oldText": "print", "newText": "echo"}, {"oldText": "greet", "newText": "hail"}])
    assert hello.read_text() == SOURCE


async def test_self_overlapping_occurrences_are_not_unique(tmp_path):
    (tmp_path / "a.txt").write_text("aaa")
    with pytest.raises(ToolError, match="occurs 2 times"):
        await edit(tmp_path, path="a.txt", edits=[{"oldText": "aa", "newText": "b"}])


async def test_overlapping_edits_are_refused(tmp_path, hello):
    with pytest.raises(ToolError, match=r"edits\[0\] and edits\[1\] overlap"):
        await edit(tmp_path, path="hello.py", edits=[{"oldText": "def greet(name)", "newText": "x"},
                                                     {"oldText": "greet(name):", "newText": "y"}])
    assert hello.read_text() == SOURCE


async def test_edits_match_the_original_not_each_other(tmp_path):
    (tmp_path / "f.txt").write_text("alpha\nbeta\n")
    result = await edit(tmp_path, path="f.txt", edits=[{"oldText": "beta", "newText": "BETA"},
                                                       {"oldText": "alpha", "newText": "beta"}])
    assert (tmp_path / "f.txt").read_text() == "beta\nBETA\n"
    assert result.content[0]["text"] == "Successfully replaced 2 blocks in f.txt."
    assert result.details["firstChangedLine"] == 1


async def test_crlf_file_matches_lf_text_and_stays_crlf(tmp_path):
    path = tmp_path / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await edit(tmp_path, path="win.txt", edits=[{"oldText": "two\nthree", "newText": "2\n3\n3.5"}])
    assert path.read_bytes() == b"one\r\n2\r\n3\r\n3.5\r\n"
    assert "\r" not in result.details["diff"] and "+3.5" in result.details["diff"]


async def test_crlf_in_old_text_matches_an_lf_file(tmp_path):
    path = tmp_path / "unix.txt"
    path.write_bytes(b"one\ntwo\n")
    await edit(tmp_path, path="unix.txt", edits=[{"oldText": "one\r\ntwo", "newText": "1\r\n2"}])
    assert path.read_bytes() == b"1\n2\n"


async def test_mixed_line_endings_outside_the_edit_are_untouched(tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"a\r\nb\nc\r\nd\n")
    await edit(tmp_path, path="mixed.txt", edits=[{"oldText": "c", "newText": "C"}])
    assert path.read_bytes() == b"a\r\nb\nC\r\nd\n"


async def test_bom_is_kept(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfkey = 1\n")
    await edit(tmp_path, path="bom.txt", edits=[{"oldText": "key = 1", "newText": "key = 2"}])
    assert path.read_bytes() == b"\xef\xbb\xbfkey = 2\n"


async def test_invalid_utf8_elsewhere_is_preserved_byte_for_byte(tmp_path):
    path = tmp_path / "legacy.txt"
    path.write_bytes(b"caf\xe9\nvalue = 1\n\xff\xfe\n")
    await edit(tmp_path, path="legacy.txt", edits=[{"oldText": "value = 1", "newText": "valeur = 2"}])
    assert path.read_bytes() == b"caf\xe9\nvaleur = 2\n\xff\xfe\n"


async def test_unicode_content_and_path(tmp_path):
    path = tmp_path / "übung" / "文件.md"
    path.parent.mkdir()
    path.write_text("Grüße 😀 end\n")
    await edit(tmp_path, path="übung/文件.md", edits=[{"oldText": "😀", "newText": "🎉"}])
    assert path.read_text() == "Grüße 🎉 end\n"


async def test_no_op_edit_is_an_error(tmp_path, hello):
    with pytest.raises(ToolError, match="No changes made to hello.py"):
        await edit(tmp_path, path="hello.py", edits=[{"oldText": "def greet", "newText": "def greet"}])


async def test_legacy_top_level_form(tmp_path, hello):
    result = await edit(tmp_path, path="hello.py", oldText="world", newText="there")
    assert "greet('there')" in hello.read_text()
    assert result.details["firstChangedLine"] == 4


async def test_edits_sent_as_a_json_string(tmp_path, hello):
    await edit(tmp_path, path="hello.py", edits='[{"oldText": "world", "newText": "json"}]')
    assert "greet('json')" in hello.read_text()


async def test_missing_file(tmp_path):
    with pytest.raises(ToolError, match="File not found"):
        await edit(tmp_path, path="ghost.py", edits=[{"oldText": "a", "newText": "b"}])


@pytest.mark.parametrize(
    "args, message",
    [
        ({"edits": []}, "Missing required parameter 'path'"),
        ({"path": "hello.py"}, "Missing required parameter 'edits'"),
        ({"path": "hello.py", "edits": []}, "Missing required parameter 'edits'"),
        ({"path": "hello.py", "edits": {"oldText": "a"}}, "'edits' must be an array, got object"),
        ({"path": "hello.py", "edits": "not json"}, "'edits' must be an array"),
        ({"path": "hello.py", "edits": [1]}, "edits[0] must be an object"),
        ({"path": "hello.py", "edits": [{"oldText": "a"}]}, "edits[0].newText is missing"),
        ({"path": "hello.py", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": 3, "newText": "b"}]},
         "edits[1].oldText must be a string, got number"),
        ({"path": "hello.py", "edits": [{"oldText": "", "newText": "b"}]}, "oldText must not be empty"),
        ({"path": "hello.py", "oldText": "greet"}, "Missing required parameter 'newText'"),
    ],
)
async def test_bad_arguments_name_the_field(tmp_path, hello, args, message):
    with pytest.raises(ToolError) as info:
        await edit(tmp_path, **args)
    assert message in str(info.value)
    assert hello.read_text() == SOURCE
