"""Transcript text, file lists, context token counts and overflow detection."""

from __future__ import annotations

import math

import pytest

from agent_forge.ai.overflow import is_context_overflow, is_overflow_error
from agent_forge.coding.compaction.prompts import summary_prompt, verbatim_prompt
from agent_forge.coding.compaction.tokens import answer_reserve, context_tokens, output_budget, over_threshold
from agent_forge.coding.compaction.transcript import (
    file_details,
    keep_tail,
    render_message,
    serialize,
    with_file_lists,
)
from agent_forge.coding.messages import sent_form


def call(name, path):
    return {"type": "toolCall", "id": f"id-{name}-{path}", "name": name, "arguments": {"path": path}}


def test_render_labels_each_role_and_skips_what_the_model_never_sees():
    messages = [
        {"role": "user",
         "content": [{"type": "text", "text": "fix it"}, {"type": "image", "data": "", "mimeType": ""}]},
        {"role": "assistant", "stopReason": "toolUse", "content": [
            {"type": "thinking", "thinking": "secret"}, {"type": "text", "text": "Looking."}, call("read", "a.py")]},
        {"role": "toolResult", "content": [{"type": "text", "text": "x" * 2500}]},
        {"role": "assistant", "stopReason": "error", "content": [{"type": "text", "text": "broken"}]},
        {"role": "bashExecution", "command": "ls", "output": "a\nb\n"},
        {"role": "bashExecution", "command": "env", "output": "SECRET", "excludeFromContext": True},
    ]
    text = serialize(messages)
    assert text.startswith('[User]: fix it\n[image]\n\n[Assistant]: Looking.\n[Tool call]: read {"path": "a.py"}')
    assert "[... 500 more characters not shown]" in text and "x" * 2001 not in text
    assert "secret" not in text and "broken" not in text and "SECRET" not in text
    assert text.endswith("[User ran]: ls\na\nb")
    assert render_message(messages[2], tool_result_chars=None).count("x") == 2500


def test_file_lists_are_carried_forward_and_modified_wins():
    messages = [{"role": "assistant", "content": [call("read", "a.py"), call("edit", "b.py"), call("read", "b.py"),
                                                  call("write", "c.py"), call("bash", "ignored")]}]
    details = file_details(messages, {"readFiles": ["old.md", "c.py"], "modifiedFiles": ["z.py"]})
    assert details == {"readFiles": ["a.py", "old.md"], "modifiedFiles": ["b.py", "c.py", "z.py"]}
    text = with_file_lists("## Objective\nx\n", details)
    assert text.endswith("<files-read>\na.py\nold.md\n</files-read>\n\n<files-modified>\nb.py\nc.py\nz.py\n"
                         "</files-modified>")
    assert with_file_lists("note", {"readFiles": [], "modifiedFiles": []}) == "note"


def test_keep_tail_keeps_the_newest_part():
    assert keep_tail("abcdef", 10) == "abcdef"
    assert keep_tail("abcdef", 2) == "[... 4 earlier characters not shown]\nef"


def usage(total):
    return {"input": total, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total}


def test_context_tokens_ignore_usage_measured_before_the_latest_compaction():
    kept = {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "k" * 40}],
            "usage": usage(120000), "timestamp": 100}
    summary = {"role": "compactionSummary", "summary": "s" * 400, "timestamp": 200}
    messages = [summary, {"role": "user", "content": "u" * 40, "timestamp": 50}, kept]
    sent_summary = math.ceil(len(sent_form(summary)["content"][0]["text"]) / 4)  # intro + the summary's 100
    assert sent_summary > 100
    assert context_tokens(messages, overhead=7) == sent_summary + 10 + 10 + 7  # estimates only
    fresh = dict(kept, timestamp=200, usage=usage(3000))
    assert context_tokens([*messages, fresh, {"role": "user", "content": "n" * 8, "timestamp": 300}]) == 3002
    assert context_tokens([{"role": "user", "content": "u" * 40}, kept]) == 120000  # no compaction: trusted


def test_threshold_and_output_budget():
    assert over_threshold(111617, 128000, 16384) and not over_threshold(111616, 128000, 16384)
    assert not over_threshold(10**9, 0, 16384)
    assert output_budget({"maxTokens": 16384, "contextWindow": 128000}, 1000) == 16384
    assert output_budget({"maxTokens": 16384, "contextWindow": 20000}, 15000) == 5000
    assert output_budget({"maxTokens": 16384, "contextWindow": 20000}, 19900) == 1024


def test_a_summary_answer_reserves_at_most_a_quarter_of_a_small_window():
    assert answer_reserve({"maxTokens": 8192, "contextWindow": 8192}) == 2048  # local model: limit = window
    assert answer_reserve({"maxTokens": 64000, "contextWindow": 200000}) == 16384
    assert answer_reserve({"maxTokens": 4096, "contextWindow": 128000}) == 4096
    assert answer_reserve({}) == 8192


@pytest.mark.parametrize("text", [
    '400 {"type":"error","error":{"type":"invalid_request_error",'
    '"message":"prompt is too long: 213462 tokens > 200000 maximum"}}',
    '413 {"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
    '400 {"error":{"message":"This model\'s maximum context length is 128000 tokens.",'
    '"code":"context_length_exceeded"}}',
    "400 The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    "400 This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
    '500 {"error":"prompt too long; exceeded max context length by 2000 tokens"}',
    "400 the request exceeds the available context size, try increasing it",
    "400 Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with "
    "context length of 4096; tokens to keep from the initial prompt is greater than the context length",
    "400 prompt token count of 130000 exceeds the limit of 128000",
    "400 Invalid request: Your request exceeded model token limit: 262144",
    "400 Please reduce the length of the messages or completion.",
    "413 (no body)",
    "500 exceeded max context length by 2000 tokens",
    # the form the providers write now (`HTTP <status> from <url>: <the API's message> (<tags>)`)
    "HTTP 400 from https://api.anthropic.com/v1/messages: prompt is too long: 213462 tokens > 200000 maximum "
    "(invalid_request_error)",
    "HTTP 413 from https://api.anthropic.com/v1/messages: ",  # an empty body: the status alone says it
    "HTTP 400 from http://127.0.0.1:8080/v1/chat/completions: (no body)",
])
def test_overflow_errors_of_each_provider(text):
    assert is_overflow_error(text)
    assert is_context_overflow({"role": "assistant", "stopReason": "error", "errorMessage": text})


@pytest.mark.parametrize("text", ["", "429 rate limit: tokens per minute exceeded", "503 overloaded",
                                  "401 invalid x-api-key", "Request was aborted",
                                  "HTTP 401 from https://context-window.example/v1/messages: bad key"])  # URL: no text
def test_other_errors_are_not_overflow(text):
    assert not is_overflow_error(text)


def test_overflow_needs_a_failed_assistant_message():
    assert not is_context_overflow({"role": "assistant", "stopReason": "stop", "errorMessage": "prompt is too long"})
    assert not is_context_overflow(None) and not is_context_overflow({"role": "user"})


def test_prompts_are_our_own_and_versioned_texts():
    text = summary_prompt(conversation="[User]: hi", request_start="[User]: go", earlier_note="OLD",
                          focus="tests")
    assert text.index("<earlier-note>\nOLD") < text.index("<transcript>\n[User]: hi") < text.index(
        "<request-in-progress>\n[User]: go")
    assert "## Request in progress" in text and "Merge both" in text and text.endswith("attention to: tests")
    plain = summary_prompt(conversation="[User]: hi")
    assert "<earlier-note>" not in plain and "Request in progress" not in plain
    verbatim = verbatim_prompt(numbered_transcript="1| a", line_count=1, delete_percent=50, query="q")
    assert "about 50% of the lines" in verbatim and "Current task: q" in verbatim
