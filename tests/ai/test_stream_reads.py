"""The SSE driver reads a body a network read at a time (`providers/_sse_exchange.py`): one search for long
numbers a read stands for one an event, and a number split between reads is still read exactly."""

from __future__ import annotations

from test_provider_contract import call

from agent_forge.ai.providers._common import MessageBuilder
from agent_forge.ai.providers._sse_exchange import _Reading
from agent_forge.ai.providers.openai_completions import _Handler

MODEL = {"id": "m", "api": "openai-completions", "provider": "p"}


def reading() -> _Reading:
    return _Reading(_Handler(MessageBuilder(MODEL)), "http://127.0.0.1:1/v1/chat/completions")


def test_reads_without_a_run_of_19_digits_leave_the_events_screened():
    read = reading()
    for chunk in (b'data: {"created":1733353000,"n":123456789012345678}\n\n', b"data: 1234567890\n\n"):
        read.screen(chunk)
        assert read.handler.screened


def test_a_run_of_19_digits_split_between_reads_ends_the_screening_for_good():
    read = reading()
    read.screen(b'data: {"n":1234567890')
    assert read.handler.screened
    read.screen(b'123456789}\n\n')
    assert not read.handler.screened
    read.screen(b"data: {}\n\n")
    assert not read.handler.screened


async def test_a_huge_integer_in_tool_arguments_is_read_exactly(fake_llm):
    # A local server sending the arguments as an object: orjson would read the integer as a float.
    head = 'data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":'
    frames = [head + '{"name":"count","arguments":{"n":1234567890', '1234567890123}}}]}}]}\n\n',
              'data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n',
              "data: [DONE]\n\n"]
    fake_llm.set_script([{"frames": frames}])
    events = await call("openai-completions", fake_llm)
    assert events[-1]["type"] == "done", events[-1]
    call_block = events[-1]["message"]["content"][0]
    assert call_block["arguments"] == {"n": 12345678901234567890123} and isinstance(call_block["arguments"]["n"], int)
