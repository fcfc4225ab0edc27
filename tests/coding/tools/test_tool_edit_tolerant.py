"""The edit tool's tolerant fallback (issue 10.4): trailing whitespace, then quotes, dashes and spaces."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_forge.agent.types import ToolError
from agent_forge.coding.tools.edit import EditTool
from agent_forge.coding.tools.edit_apply import Replacement, apply_replacements

NO_TRAILING = "matched only after ignoring trailing whitespace."
TYPOGRAPHY = "reading curly quotes, dashes and non-breaking spaces as plain ones."


async def edit_file(tmp_path, content: bytes, old: str, new: str) -> tuple[str, bytes]:
    """(result text, file bytes afterwards) for one edit of a file holding `content`."""
    path = tmp_path / "f.txt"
    path.write_bytes(content)
    result = await EditTool(str(tmp_path)).execute("call", {"path": "f.txt", "edits": [
        {"oldText": old, "newText": new}]}, None)
    return result.content[0]["text"], path.read_bytes()


async def test_dropped_trailing_spaces_still_match(tmp_path):
    text, after = await edit_file(tmp_path, b"def f():   \n    return 1\n", "def f():\n    return 1",
                                  "def f():\n    return 2")
    assert after == b"def f():\n    return 2\n"
    assert text == f"Successfully replaced 1 block in f.txt. oldText {NO_TRAILING}"


async def test_straight_quotes_match_curly_ones_and_the_rest_of_the_line_keeps_them(tmp_path):
    content = "print(“hi”)  # it’s — fine\n".encode()
    text, after = await edit_file(tmp_path, content, 'print("hi")', 'print("bye")')
    assert after == "print(\"bye\")  # it’s — fine\n".encode()
    assert TYPOGRAPHY in text


async def test_only_the_matched_lines_change_crlf_and_nbsp_elsewhere_stay(tmp_path):
    content = "a\u00a0b\r\nkeep ‘this’  \r\nx = “1” \r\ny\u00a0=\u00a02\r\n".encode()
    text, after = await edit_file(tmp_path, content, 'x = "1"\ny = 2', 'x = "3"\ny = 4')
    assert after == "a\u00a0b\r\nkeep ‘this’  \r\nx = \"3\"\r\ny = 4\r\n".encode()
    assert TYPOGRAPHY in text


async def test_an_exact_match_wins_over_its_curly_twin(tmp_path):
    content = "a = 'x'\nb = ‘x’\n".encode()
    text, after = await edit_file(tmp_path, content, "'x'", "'y'")
    assert after == "a = 'y'\nb = ‘x’\n".encode()
    assert text == "Successfully replaced 1 block in f.txt."
    _, after = await edit_file(tmp_path, content, "‘x’", "‘z’")
    assert after == "a = 'x'\nb = ‘z’\n".encode()


async def test_trailing_whitespace_wins_over_typography(tmp_path):
    """The strictest level that finds anything decides: a typography twin is no second occurrence."""
    content = "say 'hi'  \nsay ‘hi’\n".encode()
    text, after = await edit_file(tmp_path, content, "say 'hi'\n", "say 'ho'\n")
    assert after == "say 'ho'\nsay ‘hi’\n".encode() and NO_TRAILING in text


async def test_tolerant_ambiguity_names_the_candidate_lines(tmp_path):
    content = b"foo  \nbar\nfoo \nbar\n"
    with pytest.raises(ToolError, match=r"occurs 2 times in f.txt \(not exactly, but after ignoring trailing "
                                        r"whitespace\), at lines 1, 3; it must occur exactly once"):
        await edit_file(tmp_path, content, "foo\nbar", "x")
    assert (tmp_path / "f.txt").read_bytes() == content


async def test_exact_ambiguity_names_the_candidate_lines(tmp_path):
    with pytest.raises(ToolError, match=r"oldText occurs 2 times in f.txt, at lines 2, 4;"):
        await edit_file(tmp_path, b"a\nb\nc\nb\n", "b", "x")


@pytest.mark.parametrize("content, where", [
    ("“q” and „q“\n", "2 times in f.txt (not exactly, but after ignoring trailing whitespace and reading curly "
                       "quotes, dashes and non-breaking spaces as plain ones), at line 1 (twice);"),
    ("b b b\nc\nb\n", "4 times in f.txt, at lines 1 (3 times), 3;"),  # exact matches share lines too
])
async def test_matches_sharing_a_line_name_it_once(tmp_path, content, where):
    with pytest.raises(ToolError) as exc:
        await edit_file(tmp_path, content.encode(), '"q"' if "q" in content else "b", "x")
    assert f"oldText occurs {where} it must occur exactly once" in str(exc.value)


async def test_many_candidates_name_the_first_ten_lines(tmp_path):
    with pytest.raises(ToolError, match=r"occurs 12 times in f.txt, at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, \.\.\.;"):
        await edit_file(tmp_path, b"x\n" * 12, "x", "y")


def test_counting_millions_of_candidates_keeps_only_a_few():
    from agent_forge.coding.tools.edit_match import find_matches

    found = find_matches("a" * 2_000_000, "a")
    assert (found.count, len(found.spans)) == (2_000_000, 10)


async def test_trailing_spaces_typed_after_the_last_line_must_end_a_line(tmp_path):
    text, after = await edit_file(tmp_path, b"value = 10\nvalue = 1 \n", "value = 1  ", "value = 2")
    assert after == b"value = 10\nvalue = 2\n" and NO_TRAILING in text


async def test_a_match_starting_at_a_line_break_keeps_the_previous_line(tmp_path):
    _, after = await edit_file(tmp_path, b"a  \nb\nc", "\nb  \nc", "\nB\nC")
    assert after == b"a  \nB\nC"


async def test_a_whitespace_only_last_line_is_the_next_line_s_indentation(tmp_path):
    _, after = await edit_file(tmp_path, b"if x:\n    pass  \n    y\n", "    pass\n    ", "    go\n    ")
    assert after == b"if x:\n    go\n    y\n"


async def test_still_missing_is_the_usual_error(tmp_path):
    with pytest.raises(ToolError, match="Could not find oldText in f.txt"):
        await edit_file(tmp_path, "it’s here\n".encode(), "it's gone", "x")


# -- properties ------------------------------------------------------------------------------------------

CURLY = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u00a0": " "}
WORD = st.text(alphabet="ab '\"-" + "".join(CURLY), min_size=1, max_size=6)
LINE = st.builds(lambda words, trailing: " ".join(words) + trailing,
                 st.lists(WORD, min_size=1, max_size=4), st.sampled_from(["", " ", "  ", "\t", "\u00a0"]))


def plain(line: str) -> str:
    """What a model types for a file line: no trailing whitespace, ASCII quotes, dashes and spaces."""
    return "".join(CURLY.get(c, c) for c in line.rstrip())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(LINE, min_size=1, max_size=8), endings=st.lists(st.sampled_from(["\n", "\r\n"]), min_size=8,
       max_size=8), first=st.integers(0, 7), size=st.integers(1, 3))
def test_a_tolerant_edit_changes_only_the_matched_lines(lines, endings, first, size):
    first = min(first, len(lines) - 1)
    lines[first] = "UNIQUE " + lines[first]  # so the block occurs once
    block = lines[first:first + size]
    content = "".join(line + ending for line, ending in zip(lines, endings))
    old = "\n".join(plain(line) for line in block)
    try:
        updated, notes = apply_replacements(content, [Replacement(old, "NEW")], "f")
    except ToolError as exc:  # a shorter plain line can match inside a longer one: then the lines are named
        assert "at line" in str(exc)
        return
    before = "".join(line + ending for line, ending in zip(lines[:first], endings))
    last = first + len(block) - 1
    after = "".join(line + ending for line, ending in zip(lines[last + 1:], endings[last + 1:]))
    kept_tail = lines[last][len(lines[last].rstrip()):]  # after the match's end, as in an exact match
    assert updated == before + "NEW" + kept_tail + endings[last] + after


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(LINE, min_size=1, max_size=6), pick=st.integers(0, 5))
def test_an_exact_match_is_always_used_as_is(lines, pick):
    content = "\n".join(lines) + "\n"
    old = lines[min(pick, len(lines) - 1)]
    if content.count(old) != 1 or not old.strip():
        return
    updated, notes = apply_replacements(content, [Replacement(old, "NEW")], "f")
    assert notes == [] and updated == content.replace(old, "NEW")
