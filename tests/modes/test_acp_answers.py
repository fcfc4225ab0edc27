"""The checks of the client's answers (`modes/acp/answers.py`) against the official schema: every client method
of the schema has a check, and a check accepts an answer exactly when the schema does (null for an empty result
is the one leniency: SDKs send it for a handler that returns nothing)."""

from __future__ import annotations

import asyncio

import pytest

from agent_forge.modes.acp.answers import SHAPES, BadAnswer, checked
from support.acp_schema import _definitions, problems_of

SAMPLES = {
    "fs/read_text_file": [{"content": "x"}, {"content": ""}, {"content": 5}, {}, "x", None, [],
                          {"content": "x", "_meta": {"a": 1}, "extra": True}],
    "fs/write_text_file": [{}, {"_meta": None}, "garbage", 0, [1], True],
    "terminal/create": [{"terminalId": "t"}, {"terminalId": 7}, {}, "t"],
    "terminal/output": [{"output": "o", "truncated": False}, {"output": "o", "truncated": True,
                        "exitStatus": {"exitCode": 0, "signal": None}}, {"output": "o", "truncated": False,
                        "exitStatus": None}, {"output": 123, "truncated": False}, {"output": "o"},
                        {"output": "o", "truncated": "no"}, {"truncated": False}],
    "terminal/wait_for_exit": [{"exitCode": 0, "signal": None}, {"exitCode": None, "signal": "SIGKILL"}, {},
                               {"exitCode": "zero"}, {"exitCode": -1}, {"signal": 9}, []],
    "terminal/kill": [{}, "x"],
    "terminal/release": [{}, 1],
    "session/request_permission": [{"outcome": {"outcome": "cancelled"}},
                                   {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
                                   {"outcome": {"outcome": "selected"}}, {"outcome": "cancelled"}, {},
                                   {"outcome": {"outcome": "maybe"}}],
    "elicitation/create": [{"action": "accept", "content": {"text": "x"}}, {"action": "decline"},
                           {"action": "cancel"}, {}, {"action": 3}, "accept"],
}


def test_every_client_method_of_the_schema_is_checked():
    client_methods = {method for (method, kind), name in _definitions().items() if kind == "Response"
                      and name in _client_responses()}
    assert set(SHAPES) == client_methods == set(SAMPLES)


def _client_responses() -> set[str]:
    from support.acp_schema import _schema

    return {name for name, d in _schema()["$defs"].items() if d.get("x-side") == "client" and name.endswith("Response")}


@pytest.mark.parametrize("method, answer", [(m, a) for m, answers in SAMPLES.items() for a in answers])
def test_a_check_accepts_what_the_schema_accepts(method, answer):
    name = _definitions()[(method, "Response")]
    assert (SHAPES[method](answer) is None) == (not problems_of(name, answer)), SHAPES[method](answer)


@pytest.mark.parametrize("method", ["fs/write_text_file", "terminal/kill", "terminal/release"])
def test_null_is_taken_for_an_empty_result(method):
    assert SHAPES[method](None) is None


def test_checked_raises_a_bad_answer_naming_method_and_problem():
    async def request(method, params):
        return {"output": 123, "truncated": False}

    with pytest.raises(BadAnswer) as caught:
        asyncio.run(checked(request)("terminal/output", {}))
    assert caught.value.message == ("the editor's answer to terminal/output is malformed: \"output\" must be a "
                                    "string, got a number 123")
