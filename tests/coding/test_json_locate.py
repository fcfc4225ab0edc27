"""json_locate: the line and column of a key path in JSON text (for configuration-file messages)."""

from __future__ import annotations

from agent_forge.coding.json_locate import line_column, locate

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
