"""Cross-provider history normalisation: what each target API receives from another API's messages."""

from __future__ import annotations

import copy
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_forge.ai.transform import (
    IMAGE_OMITTED,
    MISSING_START,
    NO_RESULT,
    normalize_tool_call_id,
    transform_messages,
)


def model(api: str, provider: str = "p", model_id: str = "m", **extra) -> dict:
    return {"id": model_id, "api": api, "provider": provider, "input": ["text", "image"], **extra}


ANTHROPIC = model("anthropic-messages", "anthropic", "claude")
RESPONSES = model("openai-responses", "openai", "gpt")
COMPLETIONS = model("openai-completions", "openai", "gpt-4o")
GEMINI = model("google-generative-ai", "google", "gemini")
IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
USER = {"role": "user", "content": "q", "timestamp": 0}


def assistant(origin: dict, *content: dict, stop: str = "toolUse") -> dict:
    return {"role": "assistant", "api": origin["api"], "provider": origin["provider"], "model": origin["id"],
            "content": list(content), "stopReason": stop, "timestamp": 1}


def result(call_id: str, *content: dict) -> dict:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": "read",
            "content": list(content) or [{"type": "text", "text": "ok"}], "isError": False, "timestamp": 2}


def call(call_id: str, **extra) -> dict:
    return {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "a"}, **extra}


def test_own_messages_pass_through_as_the_same_objects():
    messages = [{"role": "user", "content": "q", "timestamp": 0},
                assistant(ANTHROPIC, {"type": "thinking", "thinking": "t", "thinkingSignature": "s"}, call("toolu_1")),
                result("toolu_1")]
    out = transform_messages(ANTHROPIC, messages)
    assert all(a is b for a, b in zip(out, messages)) and len(out) == 3


def test_foreign_thinking_becomes_text_and_signatures_are_dropped():
    message = assistant(RESPONSES,
                        {"type": "thinking", "thinking": "Reason.", "thinkingSignature": "{...}"},
                        {"type": "thinking", "thinking": "", "thinkingSignature": "{...}"},
                        {"type": "thinking", "thinking": "[redacted]", "redacted": True},
                        {"type": "text", "text": "Hi", "textSignature": "msg_1"},
                        call("call_1|fc_1", thoughtSignature="x"), stop="toolUse")
    before = copy.deepcopy(message)
    out = transform_messages(ANTHROPIC, [USER, message, result("call_1|fc_1")])[1:]
    assert out[0]["content"] == [{"type": "text", "text": "Reason."}, {"type": "text", "text": "Hi"},
                                 {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a"}}]
    assert out[1]["toolCallId"] == "call_1"
    assert message == before  # inputs are never mutated


@pytest.mark.parametrize(("target", "given", "expected"), [
    (ANTHROPIC, "call_1|fc_1", "call_1"),
    (ANTHROPIC, "toolu 1/ä", "toolu_1__"),
    (COMPLETIONS, "call_1|fc_1", "call_1"),
    (RESPONSES, "toolu_1", "toolu_1"),
    (RESPONSES, "a.b", "a_b"),
])
def test_tool_call_ids_per_target_api(target, given, expected):
    assert normalize_tool_call_id(target, given) == expected


def test_long_ids_are_cut_with_a_hash_so_they_stay_distinct():
    first, second = "x" * 80 + "1", "x" * 80 + "2"
    a, b = normalize_tool_call_id(COMPLETIONS, first), normalize_tool_call_id(COMPLETIONS, second)
    assert len(a) == len(b) == 40 and a != b
    assert len(normalize_tool_call_id(ANTHROPIC, first)) == 64


def test_mistral_hosts_get_nine_alphanumerics():
    mistral = model("openai-completions", "mistral", "devstral")
    new_id = normalize_tool_call_id(mistral, "toolu_01ABC")
    assert re.fullmatch(r"[A-Za-z0-9]{9}", new_id)
    assert normalize_tool_call_id(mistral, "toolu_01ABC") == new_id


@given(st.text(min_size=1, max_size=120))
def test_normalised_ids_always_match_the_anthropic_pattern(call_id):
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", normalize_tool_call_id(ANTHROPIC, call_id))


def test_images_become_one_note_per_run_for_text_only_models():
    text_only = {**GEMINI, "input": ["text"]}
    user = {"role": "user", "content": [{"type": "text", "text": "a"}, IMAGE, IMAGE, {"type": "text", "text": "b"},
                                        IMAGE], "timestamp": 0}
    tool = assistant(GEMINI, call("c1"))
    out = transform_messages(text_only, [user, tool, result("c1", {"type": "text", "text": "r"}, IMAGE)])
    note = {"type": "text", "text": IMAGE_OMITTED}
    assert out[0]["content"] == [{"type": "text", "text": "a"}, note, {"type": "text", "text": "b"}, note]
    assert out[2]["content"] == [{"type": "text", "text": "r"}, note]
    assert transform_messages(GEMINI, [user])[0] is user


def test_failed_turns_and_orphans_are_repaired():
    messages = [
        {"role": "user", "content": "q", "timestamp": 0},
        assistant(ANTHROPIC, call("lost"), stop="aborted"),
        result("lost"),  # its call was in the aborted turn
        assistant(ANTHROPIC, call("a"), call("b")),
        result("b"),
        {"role": "user", "content": "next", "timestamp": 3},
    ]
    out = transform_messages(ANTHROPIC, messages)
    assert [m["role"] for m in out] == ["user", "assistant", "toolResult", "toolResult", "user"]
    assert out[2]["toolCallId"] == "b"
    assert out[3]["toolCallId"] == "a" and out[3]["isError"] and out[3]["content"][0]["text"] == NO_RESULT


def test_trailing_unanswered_call_gets_an_error_result():
    out = transform_messages(GEMINI, [assistant(GEMINI, call("x"))])
    assert out[-1]["role"] == "toolResult" and out[-1]["toolCallId"] == "x" and out[-1]["isError"]


@pytest.mark.parametrize("target", [ANTHROPIC, RESPONSES, COMPLETIONS, GEMINI])
def test_every_api_gets_a_conversation_that_starts_with_the_user(target):
    """A damaged branch: a result without its call, an emptied turn, then the assistant speaks first."""
    redacted = assistant(model("other-api", "other"), {"type": "thinking", "thinking": "[x]", "redacted": True},
                         stop="stop")
    answer = assistant(target, {"type": "text", "text": "A."}, call("c1"))
    out = transform_messages(target, [result("orphan"), redacted, answer, result("c1"), USER])
    assert [m["role"] for m in out] == ["user", "assistant", "toolResult", "user"]
    assert out[0]["content"] == [{"type": "text", "text": MISSING_START}] and out[1] is answer
    assert transform_messages(target, [USER, answer, result("c1")])[0] is USER  # a valid start is kept


# ---- tool-call ids unique on the wire over the whole request ------------------------------------------------


def _call(call_id: str) -> dict:
    return {"type": "toolCall", "id": call_id, "name": "read", "arguments": {}}


def _wire(target: dict, messages: list[dict]) -> tuple[list[str], list[str]]:
    out = transform_messages(target, messages)
    calls = [b["id"] for m in out if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall"]
    return calls, [m["toolCallId"] for m in out if m["role"] == "toolResult"]


def test_a_responses_call_id_under_two_items_goes_to_another_api_as_two_ids():
    calls = [_call("call_x|fc_1"), _call("call_x|fc_2")]
    messages = [USER, assistant(RESPONSES, *calls), result("call_x|fc_1"), result("call_x|fc_2")]
    assert _wire(COMPLETIONS, messages) == (["call_x", "call_x_2"], ["call_x", "call_x_2"])


def test_an_id_stored_twice_in_one_message_pairs_each_result_with_its_own_call():
    messages = [USER, assistant(COMPLETIONS, _call("dup"), _call("dup")), result("dup"), result("dup")]
    assert _wire(COMPLETIONS, messages) == (["dup", "dup_2"], ["dup", "dup_2"])


def test_renaming_keeps_earlier_ids_and_mistral_ids_nine_characters():
    mistral = model("openai-completions", "mistral", "m", compat={"toolCallIdFormat": "mistral"})
    turn = [assistant(COMPLETIONS, _call("call_0")), result("call_0"), USER]
    calls, results = _wire(mistral, [USER, *turn, *turn, *turn])
    assert len(set(calls)) == 3 and all(re.fullmatch("[0-9a-f]{9}", c) for c in calls) and results == calls
    shorter, _ = _wire(mistral, [USER, *turn, *turn])
    assert shorter == calls[:2]  # an id, once sent, stays the same as the conversation grows


def test_gemini_ids_are_not_renamed_as_its_requests_carry_none():
    messages = [USER, assistant(GEMINI, _call("c"), _call("c")), result("c"), result("c")]
    assert _wire(GEMINI, messages) == (["c", "c"], ["c", "c"])


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-completions", "openai-responses",
                                 "google-generative-ai"])
def test_every_api_sends_a_text_only_model_the_note_for_user_and_tool_result_images(api):
    """The omission rule lives only in `transform_messages`: each API's request for a text-only model carries
    its note where the user's image and the tool result's image were, and no image data."""
    import importlib
    import json

    from agent_forge.ai.options import StreamOptions

    module = importlib.import_module(f"agent_forge.ai.providers.{api.replace('-', '_')}")
    model = {"id": "text-model", "name": "T", "api": api, "provider": "p", "baseUrl": "http://127.0.0.1:9/v1",
             "reasoning": False, "input": ["text"], "contextWindow": 100_000, "maxTokens": 1000,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}
    picture = {"type": "image", "data": "SU1BR0VEQVRB", "mimeType": "image/png"}
    call = {"role": "assistant", "api": api, "provider": "p", "model": "text-model", "stopReason": "toolUse",
            "timestamp": 2, "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}]}
    messages = [{"role": "user", "content": [{"type": "text", "text": "see"}, picture], "timestamp": 1}, call,
                {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "isError": False, "timestamp": 3,
                 "content": [{"type": "text", "text": "file"}, picture]}]
    body = module.build_request(model, {"systemPrompt": "", "messages": messages}, StreamOptions(api_key="k")).body
    text = json.dumps(json.loads(body))
    assert text.count(json.dumps(IMAGE_OMITTED)[1:-1]) == 2
    assert "SU1BR0VEQVRB" not in text
