"""`json_wire`'s two backends (orjson, the stdlib fallback) follow the same rules: compact UTF-8 out, non-finite
floats as null, lone surrogates as U+FFFD, strict parsing of what comes in, the same values and the same
errors; what orjson would read or write differently goes the stdlib's way."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_forge.ai import json_wire
from agent_forge.coding.session.reading import encode_line, parse_line
from agent_forge.modes.rpc import framing

pytestmark = pytest.mark.usefixtures("json_backend")


def test_the_fixture_chose_the_backend(json_backend):
    assert json_wire.backend() == json_backend


@pytest.mark.parametrize(("value", "expected"), [
    ({"a": [1, 2.5, None, True], "é": "ü\u2028"}, '{"a":[1,2.5,null,true],"é":"ü\u2028"}'.encode()),
    ({"x": math.nan, "y": [math.inf, -math.inf]}, b'{"x":null,"y":[null,null]}'),
    ({"lone": "a\ud83db", "pair": "\ud83d\ude00"[0] + "\ude00"}, '{"lone":"a\ufffdb","pair":"\ufffd\ufffd"}'.encode()),
    ({"big": 2**70, "neg": -(2**64)}, b'{"big":1180591620717411303424,"neg":-18446744073709551616}'),
    ({3: "int key", False: "bool key", None: "none key"}, b'{"3":"int key","false":"bool key","null":"none key"}'),
    ((1, "two"), b'[1,"two"]'),
    ("\x00\x1f\"\\", b'"\\u0000\\u001f\\"\\\\"'),
])
def test_encode_output(value, expected):
    assert json_wire.encode(value) == expected
    assert json_wire.encode_body(value) == expected


def test_encode_sends_dataclasses_and_datetimes_to_default_as_json_does():
    @dataclasses.dataclass
    class Point:
        x: int

    value = {"p": Point(1), "t": datetime.datetime(2026, 1, 2, 3, 4, 5)}
    assert json_wire.encode(value, default=lambda v: f"<{type(v).__name__}>") == b'{"p":"<Point>","t":"<datetime>"}'
    with pytest.raises(TypeError):
        json_wire.encode({"p": Point(1)})


def test_encode_errors_are_the_stdlib_ones():
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        json_wire.encode(loop)
    with pytest.raises(TypeError):
        json_wire.encode({"s": {1, 2}})
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        json_wire.encode(deep)


@pytest.mark.parametrize("text", ['{"a": NaN}', "[Infinity]", "[-Infinity]", "1e400", "[-1e999]", '{"a": 1,}',
                                  "\ufeff{}", "", "[1] [2]"])
def test_strict_loads_rejects_what_is_not_json(text):
    with pytest.raises(ValueError):
        json_wire.loads(text)


@pytest.mark.parametrize(("text", "expected"), [
    ('{"n": 123456789012345678901234567890}', {"n": 123456789012345678901234567890}),
    ('{"n": -9223372036854775809, "m": 18446744073709551616}', {"n": -(2**63) - 1, "m": 2**64}),
    ('{"a": 1, "a": 2, "b": [0.1, -0.0, 1E2]}', {"a": 2, "b": [0.1, -0.0, 100.0]}),
    ('"\\ud83d\\ude00"', "\U0001f600"),
    (' {"a" : "\\u2028"} \r\n', {"a": "\u2028"}),
])
def test_loads_values(text, expected):
    value = json_wire.loads(text)
    assert value == expected and type(value) is type(expected)
    assert json_wire.loads(text.encode()) == expected
    assert json_wire.parse(text) == expected


def test_a_lone_surrogate_escape_parses_as_the_stdlib_does_and_callers_scrub_it():
    assert json_wire.loads('"a\\ud83d"') == "a\ud83d"
    assert framing.decode(b'{"type":"prompt","message":"half \\ud83d"}') == {"type": "prompt", "message": "half \ufffd"}
    assert parse_line('{"type":"x","s":"\\udc00"}') == {"type": "x", "s": "\ufffd"}


def test_framing_decode_keeps_its_rules():
    assert framing.decode(b'\xef\xbb\xbf{"type":"get_state"}\r') == {"type": "get_state"}
    record = framing.decode(b'{"id": 1e400, "n": 1' + b"0" * 5000 + b"}")
    assert isinstance(record["id"], framing.BadValue) and isinstance(record["n"], framing.BadValue)
    assert framing.encode({"id": record["id"], "ok": True}) == b'{"id":1e400,"ok":true}\n'
    with pytest.raises(framing.MalformedRecord, match="UTF-8") as bad_utf8:
        framing.decode(b'{"type":"\xff"}')
    assert bad_utf8.value.request_id is None
    with pytest.raises(ValueError, match="NaN is not valid JSON"):
        framing.decode(b'{"id": NaN}')


def test_session_lines_keep_their_rules():
    assert encode_line({"type": "x", "v": math.nan, "s": "\udc00"}) == '{"type":"x","v":null,"s":"\ufffd"}\n'.encode()
    assert parse_line('{"type": "x", "v": NaN}')["v"] != parse_line('{"type": "x", "v": NaN}')["v"]  # old files
    assert parse_line("") is None and parse_line('{"type": "x"') is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_both_backends_write_the_same_values(value):
    """Each backend's bytes are valid UTF-8 strict JSON meaning the stdlib's `finite` copy, surrogates fixed."""
    encoded = json_wire.encode(value)
    expected = json.loads(json_wire.encode_utf8(json.dumps(json_wire.finite(value), ensure_ascii=False)))
    assert json.loads(encoded.decode("utf-8"), parse_constant=pytest.fail) == expected
    assert json_wire.loads(encoded) == expected


def test_without_orjson_installed_the_stdlib_serves(monkeypatch, json_backend):
    monkeypatch.setitem(sys.modules, "orjson", None)  # `import orjson` raises ImportError
    json_wire.set_backend("auto")
    for _ in range(20):
        assert json_wire.encode({"a": math.nan}) == b'{"a":null}' and json_wire.loads("[1]") == [1]
    assert json_wire.backend() == "stdlib"
    with pytest.raises(ImportError):
        json_wire.set_backend("orjson")


def test_auto_takes_orjson_after_the_first_calls(monkeypatch, json_backend):
    monkeypatch.delenv("AGENT_FORGE_JSON", raising=False)
    json_wire.set_backend("auto")
    json_wire.encode({})
    assert json_wire.backend() == "auto"  # start-up's first records do not pay for importing orjson
    for _ in range(20):
        json_wire.fast_loads(b"{}")
    assert json_wire.backend() == "orjson"
    monkeypatch.setenv("AGENT_FORGE_JSON", "stdlib")
    json_wire.set_backend("auto")
    for _ in range(20):
        json_wire.encode({})
    assert json_wire.backend() == "stdlib"


@pytest.mark.parametrize("at", [0, json_wire._SCAN_CHUNK - 19, json_wire._SCAN_CHUNK - 10, json_wire._SCAN_CHUNK - 1,
                                2 * json_wire._SCAN_CHUNK - 5, 3 * json_wire._SCAN_CHUNK - 19])
def test_long_numbers_are_found_across_the_scan_chunks(at):
    """A large text is scanned a chunk at a time: 19 digits straddling two chunks are still found, 18 are not."""
    text = bytearray(b"a" * (3 * json_wire._SCAN_CHUNK))
    text[at:at + 19] = b"1234567890123456789"
    for data in (bytes(text), memoryview(bytes(text)), text.decode()):
        assert json_wire.has_long_number(data)
    text[at + 18] = ord("x")
    assert not json_wire.has_long_number(bytes(text)) and not json_wire.has_long_number(memoryview(bytes(text)))


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.one_of(st.text("0123456789", min_size=1, max_size=25), st.text("abcdef0123456789", max_size=60),
                                st.sampled_from(["1a" * 40, "a1" * 40, "x", "\"", "é"])), max_size=200),
       pad=st.integers(0, 3))
def test_long_numbers_are_found_as_a_regex_finds_them(parts, pad):
    """The even-offset screen of a large text (`_has_run`) misses no run of 19 digits and reports no shorter one,
    wherever it lies (digits alternating with other bytes too: hexadecimal hashes)."""
    data = ("_" * pad + "".join(parts)).encode()
    for text in (data, b"x" * json_wire._SAMPLED_FROM + data, data + b"x" * json_wire._SAMPLED_FROM):
        assert json_wire.has_long_number(text) == bool(re.search(rb"[0-9]{19}", text)), text
