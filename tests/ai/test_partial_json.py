"""Best-effort parsing of truncated tool-call argument JSON."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_forge.ai.partial_json import parse_partial_json


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"path": "src/ma', {"path": "src/ma"}),
        ('{"a": 1, "b', {"a": 1}),
        ('{"a": 1, "b":', {"a": 1}),
        ('{"a": 1,', {"a": 1}),
        ('{"list": [1, 2, {"x": tr', {"list": [1, 2, {"x": True}]}),
        ('{"n": nu', {"n": None}),
        ('{"n": 12.', {"n": 12}),
        ('{"n": -', {}),
        ('{"s": "tab\\tnew\\nquote\\"', {"s": 'tab\tnew\nquote"'}),
        ('{"s": "cut escape\\', {"s": "cut escape"}),
        ('{"s": "cut \\u00e', {"s": "cut "}),
        ('{"e": "\\ud83d\\ude00!', {"e": "\U0001f600!"}),
        ('{"a": {"b": {"c": "deep', {"a": {"b": {"c": "deep"}}}),
        ('{"ok": 1} trailing', {"ok": 1}),
    ],
)
def test_truncated_objects_are_completed(text, expected):
    assert parse_partial_json(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "[1, 2]", '"str"', "42", "nonsense", "{", "{{{", "[" * 5000])
def test_nothing_usable_gives_empty_dict(text):
    assert parse_partial_json(text) == {}


def test_deep_nesting_does_not_raise():
    assert isinstance(parse_partial_json('{"a":' * 5000), dict)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _json, max_size=4), st.booleans())
def test_every_prefix_parses_and_the_whole_round_trips(obj, ascii_only):
    text = json.dumps(obj, ensure_ascii=ascii_only)
    for end in range(len(text)):
        assert isinstance(parse_partial_json(text[:end]), dict)
    assert parse_partial_json(text) == obj


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40))
def test_a_cut_string_value_is_a_prefix_of_the_full_value(value):
    text = json.dumps({"k": value})
    for end in range(len('{"k": "'), len(text)):
        got = parse_partial_json(text[:end])
        assert value.startswith(got.get("k", ""))
