"""json_locate: the line and column of a key path in JSON text (for configuration-file messages)."""

from __future__ import annotations

import pytest

from agent_forge.coding.json_locate import duplicate_keys, line_column, locate

TEXT = """{
  "providers": {
    "local": {
      "baseUrl": "localhost:8080/v1",
      "models": [ {"id": "a"},
        {"id": "m", "x": [1, {"y": 2}]} ]
    },
    "local": {"api": "x"}
  }
}"""


def test_keys_and_indexes_are_found_at_their_line_and_column():
    assert locate(TEXT, ("providers", "local", "api")) == (8, 15)  # duplicate keys: the last one, as json.loads
    assert locate(TEXT, ()) == (1, 1)
    assert line_column(TEXT, TEXT.index('"baseUrl"')) == (4, 7)


def test_a_path_that_does_not_exist_gives_its_deepest_existing_part():
    first = TEXT.replace('"local": {"api": "x"}', '"other": 1')
    assert locate(first, ("providers", "local", "models", 1, "id")) == (6, 10)
    assert locate(first, ("providers", "local", "models", 1)) == (6, 9)
    assert locate(first, ("providers", "local", "models", 7)) == (5, 17)  # the array itself
    assert locate(first, ("providers", "missing")) == (2, 16)
    assert locate("{}", ("a",)) == (1, 1) and locate("[]", (0,)) == (1, 1)


def test_text_that_is_not_json_gives_none():
    assert locate('{"a": [1, 2', ("a", 5)) is None


def test_repeated_keys_are_found_in_every_object_with_each_occurrence():
    text = """{
  "x": [{"k": 1,
         "k": 2,
         "k": 3}],
  "y": {"z": {}, "z": {"w": 1, "w": 2}}, "v": 1,
  "\\u0076": 0
}"""
    found = duplicate_keys(text)
    assert [(d.where, d.key, d.positions) for d in found] == [
        (("x", 0), "k", ((2, 10), (3, 10), (4, 10))),
        (("y",), "z", ((5, 9), (5, 18))),
        (("y", "z"), "w", ((5, 24), (5, 32))),
        ((), "v", ((5, 42), (6, 3))),  # an escaped name is the same key
    ]
    assert found[0].line == 3
    assert found[0].message() == ('x[0]: duplicate key "k" (lines 2, 3 and 4); only the last one (line 4) is used, '
                                  "the earlier ones ignored")


def test_repeats_inside_a_replaced_value_are_not_reported():
    text = '{"p": {"a": 1, "a": 2},\n "p": {"b": 1}}'
    assert [(d.where, d.key, d.line) for d in duplicate_keys(text)] == [((), "p", 2)]
    assert duplicate_keys('[1, "a", {"a": [true, null]}, 2.5]') == []


def test_repeats_in_text_that_is_not_json_raise_value_error():
    with pytest.raises(ValueError):
        duplicate_keys('{"a": 1, "a"')
