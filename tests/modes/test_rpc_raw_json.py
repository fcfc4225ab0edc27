"""A long answer's list (`get_messages`, `get_entries`) encoded batch by batch off the loop is written exactly as
the record's own encoding would write the list, with either JSON backend (issue 15: the records' encoder)."""

from __future__ import annotations

import json

import pytest

from agent_forge.ai import json_wire
from agent_forge.modes.rpc import framing
from agent_forge.modes.rpc.raw_json import BATCH, RawJson, list_json


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
