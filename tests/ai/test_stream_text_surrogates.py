"""`MessageBuilder`: UTF-16 surrogate halves from `\\uXXXX` escapes never reach a message or an event."""

from __future__ import annotations

import pytest

from agent_forge.ai.providers._common import MessageBuilder

pytestmark = pytest.mark.usefixtures("json_backend")  # the JSON codec rules hold on both backends


MODEL = {"id": "m", "api": "openai-completions", "provider": "p", "maxTokens": 100}


def stream(chunks: list[str], kind: str = "text") -> tuple[list[str], str]:
    builder = MessageBuilder(MODEL)  # type: ignore[arg-type]
    index, _ = builder.start_text() if kind == "text" else builder.start_thinking()
    events = [builder.delta(index, chunk) for chunk in chunks] + builder.finish(index)
    deltas = [e["delta"] for e in events if e["type"].endswith("_delta")]
    return deltas, events[-1]["content"]


def test_a_pair_split_across_deltas_is_joined():
    deltas, text = stream(["A\ud83d", "\ude00B"])
    assert text == "A\U0001F600B" and "".join(deltas) == text and deltas[0] == "A"


def test_lone_halves_become_replacement_characters():
    assert stream(["\udc00x", "y\ud83d", "z"])[1] == "\ufffdxy\ufffdz"
    deltas, text = stream(["end\ud83d"], kind="thinking")
    assert text == "end\ufffd" and "".join(deltas) == text


def test_a_pair_inside_one_delta_and_plain_text_pass_unchanged():
    assert stream(["a\ud83d\ude00b", "plain"]) == (["a\U0001F600b", "plain"], "a\U0001F600bplain")


def test_tool_call_ids_names_and_arguments_are_scrubbed():
    builder = MessageBuilder(MODEL)  # type: ignore[arg-type]
    index, start = builder.start_tool_call("id\ud800", "na\udc00me")
    builder.delta(index, '{"k": "v\ud83d')
    builder.delta(index, '\ude00"}')
    end = builder.finish(index)[-1]
    assert (start["id"], start["toolName"]) == ("id\ufffd", "na\ufffdme")
    assert end["toolCall"]["arguments"] == {"k": "v\U0001F600"}
