"""A line that is not JSON but starts as an object gives its `id` back (`shallow_json.member_text`, read by
`framing._salvage_id`): on valid objects the lenient walk finds exactly what `json.loads` reads, and breaking the
line after the id (or in any other member) never changes what is found."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agent_forge.modes.rpc import framing
from agent_forge.modes.rpc import shallow_json
from agent_forge.modes.rpc.shallow_json import member_text

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner,
                                                                                            max_size=3), max_leaves=8)
_members = st.dictionaries(st.sampled_from(["id", "type", "x", "i\"d", "\\id"]) | st.text(max_size=4), _json,
                           max_size=5)
_breakage = st.sampled_from(['"\x00"', '"\\x"', '"\\u12"', "NaN", '[1,}', '"cut short'])


@settings(max_examples=100, deadline=None)
@given(_members, st.booleans())
def test_on_a_valid_object_the_id_found_is_the_one_json_reads(members, spaced):
    text = json.dumps(members, ensure_ascii=spaced, separators=(", ", ": ") if spaced else (",", ":"))
    found = member_text(text, "id")
    if "id" in members:
        assert found is not None and json.loads(found) == members["id"]
    else:
        assert found is None


@settings(max_examples=100, deadline=None)
@given(_members, _json, _breakage)
def test_a_broken_member_after_the_id_keeps_it(members, request_id, broken):
    members = {key: value for key, value in members.items() if key != "id"}
    text = json.dumps({**members, "id": request_id}, separators=(",", ":"))
    line = (text[:-1] + ',"bad":' + broken + "}").encode()
    try:
        framing.decode(line)
    except framing.MalformedRecord as exc:
        assert exc.request_id == (request_id,)
    else:
        raise AssertionError("a broken line was parsed")


def test_no_id_when_the_line_is_no_object_or_its_id_is_not_json():
    for line in [b'[{"id":1}]', b'"id"', b'{"id":tru,"x":"\x00"}', b'{"id":"a\\q"}', b'{"x":1,"id"}']:
        try:
            framing.decode(line)
        except framing.MalformedRecord as exc:
            assert exc.request_id is None, line


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(['"', "\\", "a", "\x00", "\n"]) | st.text(max_size=3), max_size=200),
       st.text(max_size=5))
@example(['"'] * 100, '"x"')  # past 64 escaped quotes
@example(["\\"] * 100 + ['"'], '"')  # a run of 200 backslashes, then an escaped quote
def test_a_string_ends_at_its_closing_quote_however_many_escapes_come_first(pieces, rest):
    """Past 64 escaped quotes or a run of 64 backslashes the end is found by a regex instead of str.find:
    both give the end json reads."""
    string = json.dumps("".join(pieces))
    assert shallow_json._string_end(string + rest, 1) == len(string)


def test_a_broken_member_too_long_to_match_by_hand_ends_the_walk():
    broken = "[" + '"a",' * (shallow_json._HAND_TOKENS + 1) + '"\x00"'  # never closed
    assert member_text('{"id":"before","x":' + broken + ',"id":"after"}', "id") == '"before"'
    short = "[" + '"a",' * 10 + '"\x00"]'
    assert member_text('{"id":"before","x":' + short + ',"id":"after"}', "id") == '"after"'
