"""A long answer's list (`get_messages`, `get_entries`) encoded batch by batch off the loop is written exactly as
the record's own encoding would write the list, with either JSON backend (issue 15: the records' encoder)."""

from __future__ import annotations

import json

import pytest

from agent_forge.ai import json_wire
from agent_forge.modes.rpc import framing
from agent_forge.modes.rpc.raw_json import BATCH, InRecord, RawJson, list_json


def _deep(levels: int) -> object:
    value: object = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def _items() -> list[object]:
    items: list[object] = [{"role": "user", "content": f"m{i} caf\u00e9 \u2028 \U0001f600", "timestamp": i}
                           for i in range(BATCH * 2 + 3)]
    items += [{"n": float("nan"), "s": {1}, "t": (1, 2), 3: "int key"}, "lone \ud83d surrogate", [], {}, None]
    return items


@pytest.mark.parametrize("backend", ["orjson", "stdlib"])
def test_list_json_writes_what_the_record_would(monkeypatch, backend):
    monkeypatch.setattr(json_wire, "_backend", False if backend == "stdlib" else None)
    items = _items()
    record = {"type": "response", "id": "1", "data": {"messages": items}}
    raw = {"type": "response", "id": "1", "data": {"messages": RawJson(list_json(items))}}
    assert framing.encode(raw) == framing.encode(record)
    decoded = json.loads(framing.encode(raw))["data"]["messages"]
    assert decoded[-5] == {"n": None, "s": [1], "t": [1, 2], "3": "int key"}
    assert decoded[-4] == "lone \ufffd surrogate"


def test_list_json_of_values_nested_deeper_than_the_encoders_go():
    items = [_deep(5000), "after"]
    text = list_json(items)
    assert text == framing.encode(items).rstrip(b"\n")
    assert text.startswith(b"[" * 5001 + b'"leaf"') and text.endswith(b',"after"]')


def test_empty_list():
    assert list_json([]) == b"[]"


@pytest.mark.parametrize("source", [b'[1,"caf\xc3\xa9"]', '[1,"caf\u00e9"]'])
def test_raw_json_and_bad_values_are_written_alike_by_both_backends(monkeypatch, source):
    """The fast backend embeds verbatim texts as orjson fragments, the stdlib through placeholders: one output."""
    record = {"type": "response", "id": framing.BadValue("big number", "123456789012345678901234567890"),
              "data": {"messages": RawJson(source), "rest": ["x", float("inf"), {1, 2}]}}
    outputs = []
    for backend in ("orjson", "stdlib"):
        json_wire.set_backend(backend)
        try:
            outputs.append(framing.encode(record))
        finally:
            json_wire.set_backend("auto")
    assert outputs[0] == outputs[1]
    assert outputs[0] == (b'{"type":"response","id":123456789012345678901234567890,'
                          b'"data":{"messages":[1,"caf\xc3\xa9"],"rest":["x",null,[1,2]]}}\n')


def test_a_record_the_fast_backend_declines_is_written_the_stdlib_way():
    json_wire.set_backend("orjson")
    try:
        line = framing.encode({"text": "lone \ud83d surrogate", "big": 1 << 70, "raw": RawJson(b"[]")})
    finally:
        json_wire.set_backend("auto")
    assert line == ('{"text":"lone \ufffd surrogate","big":%d,"raw":[]}\n' % (1 << 70)).encode()


def test_a_list_is_encoded_whole_or_by_batches_alike(monkeypatch):
    """One fast call for a list up to `WHOLE` items; batches past it, or when one item is declined (a lone
    surrogate): the same text either way."""
    from agent_forge.modes.rpc import raw_json

    items = [{"n": i, "t": f"caf\u00e9 {i}"} for i in range(BATCH + 5)]
    json_wire.set_backend("orjson")
    try:
        whole = list_json(items)
        monkeypatch.setattr(raw_json, "WHOLE", 4)
        assert list_json(items) == whole
        monkeypatch.setattr(raw_json, "WHOLE", 20_000)
        declined = list_json([*items, "lone \ud83d"])
    finally:
        json_wire.set_backend("auto")
    assert whole == json.dumps(items, separators=(",", ":"), ensure_ascii=False).encode()
    assert declined == whole[:-1] + ',"lone \ufffd"]'.encode()


@pytest.mark.parametrize("backend", ["orjson", "stdlib"])
@pytest.mark.parametrize("extra", [[], ["lone \ud83d surrogate"], [_deep(5000)]])
def test_a_list_left_in_its_record_is_written_as_the_list_itself(backend, extra):
    """`InRecord`: the fast backend encodes the items with the record in one call; what it declines (a lone
    surrogate, nesting past its depth) and the stdlib write `list_json`'s text in its place: the same line."""
    items = [*_items()[:-5], *extra]
    expected = b'{"type":"response","id":"1","data":{"messages":' + list_json(items) + b',"leafId":"x"}}\n'
    json_wire.set_backend(backend)
    try:
        line = framing.encode({"type": "response", "id": "1", "data": {"messages": InRecord(items), "leafId": "x"}})
    finally:
        json_wire.set_backend("auto")
    assert line == expected
