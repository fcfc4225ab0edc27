"""`coding.paths.same_file`: the one inode comparison the switching, MCP config, export and file tools share."""

from __future__ import annotations

import os

from agent_forge.coding.paths import same_file


def test_one_file_under_two_names_or_a_stat_result_is_the_same_file(tmp_path):
    original = tmp_path / "a.txt"
    original.write_text("x")
    os.link(original, tmp_path / "hard.txt")
    (tmp_path / "soft.txt").symlink_to(original)
    (tmp_path / "other.txt").write_text("x")
    assert same_file(original, tmp_path / "hard.txt")
    assert same_file(str(tmp_path / "soft.txt"), os.stat(original))
    assert same_file(os.stat(original), os.stat(tmp_path / "hard.txt"))
    assert not same_file(original, tmp_path / "other.txt")


def test_a_name_that_cannot_be_examined_is_no_file(tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert not same_file(tmp_path / "missing", tmp_path / "missing")
    assert not same_file(tmp_path / "loop", tmp_path / "loop")
