"""Session statistics: message counts, token/cost totals over the whole file, context-usage estimate."""

from __future__ import annotations

import math

import pytest

from agent_forge.coding.compaction.tokens import context_tokens
from agent_forge.coding.messages import bash_execution_text
from agent_forge.coding.session.listing import file_messages
from agent_forge.coding.session.stats import (
    IMAGE_CHARS,
    context_usage,
    estimate_tokens,
    message_counts,
    session_stats,
    usage_totals,
)
from agent_forge.coding.session.store import SessionStore

MODEL = {"id": "m", "provider": "p", "api": "faux", "contextWindow": 200_000}


def usage(input_: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0, cost: float = 0.0) -> dict:
    return {"input": input_, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
            "totalTokens": input_ + output + cache_read + cache_write,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str = "", *, calls: int = 0, used: dict | None = None, stop: str = "stop") -> dict:
    content = [{"type": "text", "text": text}] if text else []
    content += [{"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"path": "a"}} for i in range(calls)]
    return {"role": "assistant", "content": content, "api": "faux", "provider": "p", "model": "m",
            "usage": used or usage(), "stopReason": "toolUse" if calls else stop, "timestamp": 2}


def tool_result(text: str, used: dict | None = None) -> dict:
    message = {"role": "toolResult", "toolCallId": "c0", "toolName": "read",
               "content": [{"type": "text", "text": text}], "isError": False, "timestamp": 3}
    if used is not None:
        message["usage"] = used
    return message


def stats_of(store: SessionStore, messages: list[dict], model: dict | None = MODEL) -> dict:
    return session_stats(session_file=str(store.path) if store.path else None, session_id=store.session_id,
                         entries=store.entries, branch=store.branch(), model=model,
                         context_tokens=context_tokens(messages))


# -- counts -------------------------------------------------------------------------------------------


def test_counts_roles_and_tool_call_blocks():
    messages = [user("a"), assistant("x", calls=2), tool_result("1"), tool_result("2"), assistant("done"),
                {"role": "bashExecution", "command": "ls", "output": "", "timestamp": 4}]
    assert message_counts(messages) == {"userMessages": 1, "assistantMessages": 2, "toolCalls": 2,
                                        "toolResults": 2, "totalMessages": 6}


def test_empty_session_matches_the_reference_shape(tmp_path):
    store = SessionStore.create(tmp_path, tmp_path / "sessions")
    stats = stats_of(store, [])
    assert stats == {
        "sessionFile": str(store.path), "sessionId": store.session_id, "userMessages": 0, "assistantMessages": 0,
        "toolCalls": 0, "toolResults": 0, "totalMessages": 0,
        "tokens": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}, "cost": 0,
        "contextUsage": {"tokens": 0, "contextWindow": 200_000, "percent": 0},
    }


# -- tokens and cost ----------------------------------------------------------------------------------


def test_totals_cover_assistants_tools_summaries_and_usage_entries():
    store = SessionStore.in_memory("/w")
    store.append_message(user("q"))
    store.append_message(assistant("a", calls=1, used=usage(100, 10, 5, 1, cost=0.5)))
    store.append_message(tool_result("r", used=usage(7, 3, cost=0.01)))
    store.append_compaction(summary="s", first_kept_entry_id=None, tokens_before=9, usage=usage(20, 2, cost=0.1))
    store.append_branch_summary(from_id=None, summary="b", usage=usage(30, 3, cost=0.2))
    store.append_usage(kind="cache_warm", provider="p", model="m", usage=usage(0, 0, 50, cost=0.015))
    store.append_custom(custom_type="x", data={"usage": usage(999)})  # plugin data is not billing
    tokens, cost = usage_totals(store.entries)
    assert tokens == {"input": 157, "output": 18, "cacheRead": 55, "cacheWrite": 1, "total": 231}
    assert cost == pytest.approx(0.825)


def test_totals_and_counts_include_abandoned_branches():
    store = SessionStore.in_memory("/w")
    first = store.append_message(user("one"))
    store.append_message(assistant("old answer", calls=1, used=usage(100, 10, cost=1.0)))
    store.append_message(tool_result("r"))
    store.set_leaf(first["id"])  # branch away: the old answer is abandoned but was paid for, and is in the file
    store.append_message(assistant("new answer", used=usage(200, 20, cost=2.0)))
    messages = store.build_context().messages
    stats = stats_of(store, messages)
    assert stats["tokens"]["input"] == 300 and stats["cost"] == pytest.approx(3.0)
    assert (stats["userMessages"], stats["assistantMessages"], stats["toolCalls"], stats["toolResults"],
            stats["totalMessages"]) == (1, 2, 1, 1, 4)
    assert len(messages) == 2  # the conversation: get_state's messageCount


def test_total_messages_is_the_count_session_listings_show():
    """One count of a file's messages: `get_session_stats.totalMessages` and a listing's `messageCount`."""
    store = SessionStore.in_memory("/w")
    first = store.append_message(user("one"))
    store.append_message(assistant("old", calls=1))
    store.append_message(tool_result("r"))
    store.set_leaf(first["id"])
    store.append_message(assistant("new"))
    store.append_compaction(summary="s", first_kept_entry_id=first["id"], tokens_before=9)
    stats = stats_of(store, store.build_context().messages)
    assert stats["totalMessages"] == len(file_messages(store.entries)) == 4


def test_counts_include_what_a_compaction_summarised():
    store = SessionStore.in_memory("/w")
    store.append_message(user("one"))
    store.append_message(assistant("a1"))
    kept = store.append_message(user("two"))
    store.append_message(assistant("a2"))
    store.append_compaction(summary="s", first_kept_entry_id=kept["id"], tokens_before=9)
    store.append_message(user("three"))
    stats = stats_of(store, store.build_context().messages)
    assert (stats["userMessages"], stats["assistantMessages"], stats["totalMessages"]) == (3, 2, 5)


def test_malformed_usage_in_a_hand_edited_file_counts_as_zero():
    store = SessionStore.in_memory("/w")
    store.append_message(assistant("a", used={"input": "many", "output": -5, "cacheRead": True,
                                              "cost": {"total": "free"}}))
    store.append_message(assistant("b", used={"input": float("nan"), "output": 4, "cost": [1]}))
    store.append_message({"role": "assistant", "content": "text", "usage": None})
    store.append_message(assistant("c", used={"input": 10 ** 400, "cost": {"total": 10 ** 400}}))  # float overflow
    tokens, cost = usage_totals(store.entries)
    assert tokens == {"input": 0, "output": 4, "cacheRead": 0, "cacheWrite": 0, "total": 4}
    assert cost == 0.0 and math.isfinite(cost)


def test_totals_survive_reopening_the_file(tmp_path):
    store = SessionStore.create(tmp_path, tmp_path / "sessions")
    store.append_message(user("q"))
    store.append_message(assistant("a", used=usage(1200, 12, cost=0.00378)))
    store.close()
    reopened = SessionStore.open(store.path)
    assert usage_totals(reopened.entries) == usage_totals(store.entries)
    assert usage_totals(reopened.entries)[0]["total"] == 1212


# -- context usage ------------------------------------------------------------------------------------


def test_context_is_last_reported_usage_plus_estimate_of_later_messages():
    messages = [user("q"), assistant("a", calls=1, used=usage(1000, 200)), tool_result("x" * 400),
                user("y" * 41)]
    assert context_tokens(messages) == 1200 + 100 + 11  # 41 chars round up to 11 tokens


def test_failed_and_aborted_turns_do_not_measure_the_context():
    messages = [user("q" * 8), assistant("a", used=usage(500, 50)), user("r" * 8),
                assistant("partial", used=usage(9999), stop="aborted"),
                assistant("", used=usage(8888), stop="error")]
    assert context_tokens(messages) == 550 + 2 + estimate_tokens(messages[3]) + 0


def test_without_any_reported_usage_everything_is_estimated():
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    messages = [{"role": "user", "content": [{"type": "text", "text": "abcd"}, image], "timestamp": 1},
                {"role": "bashExecution", "command": "ls", "output": "a\nb", "timestamp": 2}]
    bash = math.ceil(len(bash_execution_text(messages[1])) / 4)  # the user message the model is sent
    assert bash == math.ceil(len("Ran `ls`\n```\na\nb\n```") / 4)
    assert context_tokens(messages) == 1 + IMAGE_CHARS // 4 + bash
    assert context_tokens(messages, overhead=1300) == 1 + IMAGE_CHARS // 4 + bash + 1300  # system prompt, tools
    assert context_tokens([], overhead=1300) == 0  # nothing sent yet (the reference's fresh session)


@pytest.mark.parametrize("left_out", [
    {"role": "assistant", "stopReason": "aborted", "content": [
        {"type": "toolCall", "id": "c", "name": "write", "arguments": {"path": "a", "content": "Q" * 40000}}]},
    {"role": "assistant", "stopReason": "error", "content": [{"type": "text", "text": "x" * 40000}]},
    {"role": "bashExecution", "command": "ls", "output": "y" * 40000, "excludeFromContext": True},
    {"role": "toolResult", "toolCallId": "c", "content": "not a list of blocks " * 2000},  # damaged entry
])
def test_messages_the_model_is_not_sent_count_nothing(left_out):
    """Issue 10: an aborted call's partial arguments (megabytes) set off a compaction that could not help."""
    user = {"role": "user", "content": "abcd", "timestamp": 1}
    assert estimate_tokens(left_out) == 0
    assert context_tokens([user, left_out], overhead=5) == 1 + 5


def test_thinking_and_tool_arguments_are_estimated():
    message = {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "t" * 8},
        {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "ls"}}], "stopReason": "toolUse"}
    assert estimate_tokens(message) == math.ceil((8 + 4 + len('{"command": "ls"}')) / 4)


def test_percent_is_tokens_over_context_window_times_100():
    result = context_usage(context_tokens([user("q"), assistant("a", used=usage(1200, 12))]), {"contextWindow": 128000})
    assert result == {"tokens": 1212, "contextWindow": 128000, "percent": pytest.approx(0.946875)}


@pytest.mark.parametrize("model", [None, {"id": "m"}, {"contextWindow": 0}, {"contextWindow": "big"}])
def test_context_usage_is_omitted_without_model_or_window(model):
    store = SessionStore.in_memory("/w")
    assert context_usage(0, model) is None
    assert "contextUsage" not in stats_of(store, [], model)


def test_tokens_are_null_after_compaction_until_a_fresh_response():
    store = SessionStore.in_memory("/w")
    store.append_message(user("q"))
    store.append_message(assistant("a", used=usage(90_000, 100)))
    store.append_compaction(summary="s", first_kept_entry_id=None, tokens_before=90_100)
    after = stats_of(store, [user("q")])["contextUsage"]
    assert after == {"tokens": None, "contextWindow": 200_000, "percent": None}
    store.append_message(user("next"))
    store.append_message(assistant("fresh", used=usage(3000, 20)))
    fresh = stats_of(store, [user("q"), user("next"), assistant("fresh", used=usage(3000, 20))])["contextUsage"]
    assert fresh["tokens"] == 3020 and fresh["percent"] == pytest.approx(1.51)
