"""lazy_re.py: a LazyPattern compiles at its first use, once, and then answers as the compiled pattern does."""

from __future__ import annotations

import copy
import re

import pytest

from agent_forge.lazy_re import LazyPattern


def test_a_lazy_pattern_compiles_at_its_first_use_and_keeps_the_compiled_methods(monkeypatch):
    compiled: list[object] = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda *args: compiled.append(args) or real(*args))
    pattern = LazyPattern(r"(?P<word>[a-z]+)-(\d+)", re.IGNORECASE)
    assert compiled == [] and pattern.pattern == r"(?P<word>[a-z]+)-(\d+)" and pattern.flags == re.IGNORECASE
    assert pattern.search("x ABC-12")["word"] == "ABC" and pattern.fullmatch("a-1") and not pattern.match(" a-1")
    assert pattern.sub("_", "a-1 b-2") == "_ _" and pattern.groups == 2 and pattern.groupindex == {"word": 1}
    assert pattern.findall("a-1 b-2") == [("a", "1"), ("b", "2")] and pattern.split("a-1") == ["", "a", "1", ""]
    assert compiled == [(r"(?P<word>[a-z]+)-(\d+)", re.IGNORECASE)]  # once, whatever was read since


def test_an_invalid_pattern_fails_at_its_first_use_and_a_copy_is_a_pattern():
    broken = LazyPattern("(")
    with pytest.raises(re.error):
        broken.search("x")
    assert copy.deepcopy(LazyPattern("a+")).search("caab").group() == "aa"
