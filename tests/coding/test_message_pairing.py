"""Every tool call reaches the provider with exactly one result (a session killed mid-tool has gaps)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_forge.coding.messages import INTERRUPTED_RESULT, convert_to_llm


def assistant(*call_ids, stop="toolUse"):
    return {"role": "assistant", "stopReason": stop, "content": [
        {"type": "toolCall", "id": c, "name": "bash", "arguments": {}} for c in call_ids]}


def result(call_id):
    return {"role": "toolResult", "toolCallId": call_id, "toolName": "bash", "isError": False,
            "content": [{"type": "text", "text": "ok"}]}


def user(text):
    return {"role": "user", "content": text}


def shape(messages):
    return [(m["role"], m.get("toolCallId")) for m in messages]


def test_missing_result_is_answered_with_an_error_before_the_next_user_message():
    out = convert_to_llm([user("go"), assistant("a", "b"), result("a"), user("resumed")])
    assert shape(out) == [("user", None), ("assistant", None), ("toolResult", "a"), ("toolResult", "b"),
                          ("user", None)]
    assert out[3]["isError"] is True and out[3]["content"][0]["text"] == INTERRUPTED_RESULT


def test_trailing_call_without_result_is_closed():
    out = convert_to_llm([user("go"), assistant("a")])
    assert shape(out)[-1] == ("toolResult", "a")


def test_orphan_and_duplicate_results_are_dropped():
    out = convert_to_llm([user("go"), result("x"), assistant("a"), result("a"), result("a"), user("next")])
    assert shape(out) == [("user", None), ("assistant", None), ("toolResult", "a"), ("user", None)]


def test_results_of_an_aborted_assistant_message_are_dropped_with_it():
    out = convert_to_llm([user("go"), assistant("a", stop="aborted"), result("a"), user("next")])
    assert shape(out) == [("user", None), ("user", None)]


def test_complete_conversation_is_unchanged():
    messages = [user("go"), assistant("a"), result("a"), {"role": "assistant", "stopReason": "stop",
                                                          "content": [{"type": "text", "text": "done"}]}]
    assert convert_to_llm(messages) == messages


def test_malformed_messages_are_left_out_of_the_model_context():
    good = [user("go"), {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "ok"}]}]
    damaged = [
        {"role": "assistant", "stopReason": "stop", "content": 7},
        {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": None}]},
        {"role": "user", "content": None},
        {"role": "user", "content": [{"type": "image", "data": 5}]},
        {"role": "assistant", "stopReason": "toolUse", "content": [{"type": "toolCall", "id": "a", "name": "x",
                                                                     "arguments": "notadict"}]},
        "not even a dict",
    ]
    assert convert_to_llm([*good, *damaged, user("next")]) == [*good, user("next")]


def test_results_stored_in_completion_order_reach_the_provider_in_call_order():
    out = convert_to_llm([user("go"), assistant("a", "b", "c"), result("c"), result("a"), user("next")])
    assert shape(out) == [("user", None), ("assistant", None), ("toolResult", "a"), ("toolResult", "b"),
                          ("toolResult", "c"), ("user", None)]
    assert out[2]["content"][0]["text"] == "ok" and out[3]["content"][0]["text"] == INTERRUPTED_RESULT


def test_a_resumed_context_lists_a_batch_s_results_in_call_order():
    from agent_forge.coding.session.context import results_in_call_order

    messages = [user("go"), assistant("a", "b"), result("b"), result("x"), result("a"), user("next")]
    assert [m.get("toolCallId") for m in results_in_call_order(messages)] == [None, None, "a", "b", "x", None]


def _one_message_at_a_time(messages):
    """The order `results_in_call_order` gives, found one message at a time (its first version): the oracle."""
    out, index = [], 0
    while index < len(messages):
        message = messages[index]
        out.append(message)
        index += 1
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        end = index
        while end < len(messages) and messages[end].get("role") == "toolResult":
            end += 1
        if end - index > 1:
            calls = [b.get("id") for b in message["content"] if isinstance(b, dict) and b.get("type") == "toolCall"]
            rank = {call_id: position for position, call_id in reversed(list(enumerate(calls)))}
            out += sorted(messages[index:end], key=lambda m: rank.get(m.get("toolCallId"), len(calls)))
            index = end
    return out


_CALL_IDS = st.sampled_from(["a", "b", "c", None, 7])
_MESSAGES = st.lists(st.one_of(
    st.builds(lambda ids: assistant(*ids), st.lists(st.sampled_from(["a", "b", "c", "a"]), max_size=4)),
    st.builds(lambda call_id: {"role": "toolResult", "toolCallId": call_id, "content": []}, _CALL_IDS),
    st.builds(lambda content: {"role": "assistant", "content": content}, st.sampled_from(["text", None, [{}]])),
    st.builds(user, st.just("u")),
    st.builds(lambda role: {"role": role, "content": []}, st.sampled_from([["toolResult"], None, "custom", 3])),
), max_size=12)


@settings(max_examples=300, deadline=None)
@given(messages=_MESSAGES)
def test_results_are_ordered_as_when_found_one_message_at_a_time(messages):
    from agent_forge.coding.session.context import results_in_call_order

    out = results_in_call_order(messages)
    assert [id(m) for m in out] == [id(m) for m in _one_message_at_a_time(messages)]
    assert out is not messages
