"""safe_read: only regular files, never a blocking open, bounded reads, bounded JSON nesting."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_forge.coding.errors import ConfigFileError, UnsafeFileError
from agent_forge.coding.safe_read import (
    MAX_CONFIG_BYTES,
    MAX_JSON_DEPTH,
    MAX_REPORTED_DUPLICATES,
    format_size,
    parse_json,
    parse_json_document,
    read_json_document,
    read_json_file,
    read_prefix,
    read_text_file,
)


def link(path: Path, target: str | Path) -> Path:
    path.symlink_to(target)
    return path


def test_regular_file_is_read_whole_and_prefix_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"0123456789")
    assert read_text_file(path, 10) == "0123456789"
    assert read_prefix(path, 4) == b"01234"  # one byte past the limit says "longer"
    with pytest.raises(UnsafeFileError, match=r"larger than 4 bytes \(the limit for prompt files\)"):
        read_text_file(path, 4)


@pytest.mark.parametrize("target, kind", [("/dev/zero", "a character device"), ("/dev/null", "a character device")])
def test_link_to_a_device_is_refused_before_it_is_read(tmp_path: Path, target: str, kind: str) -> None:
    path = link(tmp_path / "settings.json", target)
    with pytest.raises(UnsafeFileError, match=f"not a regular file but {kind}"):
        read_prefix(path, 10)
    with pytest.raises(ConfigFileError, match=f"not a regular file but {kind}"):
        read_json_file(path)


def test_fifo_without_a_writer_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeFileError, match="FIFO"):
        read_text_file(fifo)


def test_link_to_standard_input_is_refused(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        path = link(tmp_path / "settings.json", f"/proc/self/fd/{read_end}")
        os.write(write_end, b'{"type": "get_state"}\n')
        with pytest.raises(ConfigFileError, match="FIFO"):
            read_json_file(path)
        assert os.read(read_end, 100) == b'{"type": "get_state"}\n'  # nothing was taken from the pipe
    finally:
        os.close(read_end)
        os.close(write_end)


def test_directory_missing_file_and_link_loop(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match="a directory"):
        read_json_file(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_json_file(tmp_path / "absent.json")
    with pytest.raises(FileNotFoundError):
        read_json_file(link(tmp_path / "dangling.json", tmp_path / "nowhere"))
    loop = link(tmp_path / "loop.json", tmp_path / "loop.json")
    with pytest.raises(ConfigFileError, match="cannot read: Too many levels of symbolic links"):
        read_json_file(loop)


def test_json_file_over_the_limit_names_it(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"a": "' + "x" * MAX_CONFIG_BYTES + '"}')
    with pytest.raises(ConfigFileError, match=r"larger than 1 MB \(the limit for configuration files\)"):
        read_json_file(path)


def test_json_blank_invalid_and_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(" \n")
    assert read_json_file(path) is None and read_json_file(path, if_blank={}) == {}
    path.write_text("null")
    assert read_json_file(path, if_blank={}) is None
    path.write_text('{"a": 1,\n oops}')
    with pytest.raises(ConfigFileError, match="invalid JSON at line 2 column 2"):
        read_json_file(path)
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ConfigFileError, match="cannot read: not UTF-8 text"):
        read_json_file(path)


def test_a_trailing_comma_is_named_at_the_comma() -> None:
    with pytest.raises(ConfigFileError, match=r"^invalid JSON at line 1 column 8: trailing comma before '}' "):
        parse_json('{"a": 1,\n }')
    with pytest.raises(ConfigFileError, match=r"^invalid JSON at line 2 column 6: trailing comma before ']' "):
        parse_json('[1,\n  2  ,\n]')
    with pytest.raises(ConfigFileError, match=r"^invalid JSON at line 1 column 1: Expecting value$"):
        parse_json(']')


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_deep_nesting_is_an_error_not_a_crash(depth: int) -> None:
    with pytest.raises(ConfigFileError, match=f"nested more than {MAX_JSON_DEPTH} levels"):
        parse_json("[" * depth + "]" * depth)
    with pytest.raises(ConfigFileError, match="nested more than"):
        parse_json('{"a":' * depth + "1" + "}" * depth)


def test_nesting_at_the_limit_is_accepted() -> None:
    assert parse_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None


def test_format_size() -> None:
    assert [format_size(n) for n in (1024 * 1024, 256 * 1024, 1000)] == ["1 MB", "256 KB", "1000 bytes"]


def test_a_leading_byte_order_mark_is_ignored(tmp_path):
    path = tmp_path / "c.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"a": 1}')
    assert read_json_file(path) == {"a": 1}
    path.write_bytes(b"\xef\xbb\xbf \n")
    assert read_json_file(path, if_blank="blank") == "blank"


def test_an_integer_past_the_digit_limit_reads_as_infinity_not_an_error(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"a": ' + "9" * 5000 + ', "b": -' + "9" * 50 + ', "c": 12}')
    assert read_json_file(path) == {"a": float("inf"), "b": float("-inf"), "c": 12}


def test_repeated_keys_keep_the_last_value_and_are_listed_with_their_lines(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('{"a": 1,\n "b": {"c": 1, "c": 2},\n "a": 3}')
    document = read_json_document(path)
    assert document.data == {"a": 3, "b": {"c": 2}}
    assert [(d.where, d.key, d.line) for d in document.duplicates] == [(("b",), "c", 2), ((), "a", 3)]
    assert document.duplicate_warnings(path) == [
        f'{path}:2: b: duplicate key "c" (line 2 column 8 and line 2 column 16); only the last one (line 2 '
        "column 16) is used, the earlier one ignored",
        f'{path}:3: duplicate key "a" (lines 1 and 3); only the last one (line 3) is used, the earlier one ignored']
    assert read_json_file(path) == {"a": 3, "b": {"c": 2}}  # for files the agent writes itself: no report


def test_a_sound_document_has_no_repeats_and_deep_repeats_still_hit_the_depth_limit():
    assert parse_json_document('{"a": {"a": {"a": 1}}, "b": [{"a": 1}, {"a": 2}]}')[2] == []
    deep = '{"a":' * (MAX_JSON_DEPTH + 1) + '1, "a": 2' + "}" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(ConfigFileError, match="nested more than"):
        parse_json_document(deep)


def test_thousands_of_repeats_are_reported_ten_by_ten_and_quickly(tmp_path):
    path = tmp_path / "e.json"
    path.write_text("[\n" + ",\n".join(['{"a": 1, "a": 2}'] * 20000) + "]")
    document = read_json_document(path)
    assert len(document.duplicates) == 20000 and document.data[0] == {"a": 2}
    warnings = document.duplicate_warnings(path)
    assert len(warnings) == MAX_REPORTED_DUPLICATES + 1
    assert warnings[0].startswith(f'{path}:2: [0]: duplicate key "a" (line 2 column 2 and line 2 column 10)')
    assert warnings[-1] == f"{path}: 19990 more duplicate keys not listed (the last value of each is used)"


def test_probes_of_a_path_the_os_refuses_say_no_instead_of_raising(tmp_path):
    from agent_forge.coding.safe_read import examine, exists, found_text, is_dir, is_file

    long_name = tmp_path / ("x" * 300)  # ENAMETOOLONG, which Path.exists() raises
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for path in (long_name, loop, str(tmp_path / "a\0b")):
        assert (exists(path), is_file(path), is_dir(path)) == (False, False, False)
    assert found_text(examine(long_name)) == "cannot be examined: File name too long"
    assert found_text(examine(loop)) == "cannot be examined: Too many levels of symbolic links"
    assert found_text(examine(tmp_path / "absent")) == "does not exist"
    assert (is_file(__file__), is_dir(tmp_path), exists(tmp_path)) == (True, True, True)


def test_an_os_error_naming_a_file_is_said_as_that_file_and_the_os_reason():
    from agent_forge.coding.paths import os_failure

    assert os_failure(OSError(36, "File name too long", "a\nb")) == "cannot use a\\nb: File name too long"
    assert os_failure(OSError("no file named")) is None and os_failure(KeyError("x")) is None
