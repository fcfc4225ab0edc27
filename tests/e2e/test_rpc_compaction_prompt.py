"""End to end: the threshold check before a prompt's first model call counts what the prompt brings (its text, the
steering delivered with it, its images), so a big paste on a nearly full context compacts first instead of going
to the model and overflowing. The real CLI in RPC mode against the loopback fake LLM server."""

from __future__ import annotations

import base64

import pytest

from agent_forge.modes.rpc.client import RpcClient
from support.doubles import roles_and_texts

SUMMARY = "<transcript>"  # occurs only in summary requests (prompts.summary_prompt)
OVERFLOW = {"status": 400, "body": {"error": {"message": "This model's maximum context length is 8000 tokens. "
                                              "Please reduce the length of the messages.",
                                              "type": "invalid_request_error", "code": "context_length_exceeded"}}}
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7d6a4e70000000049454e44ae426082")).decode()
PASTE = "pasted " * 1500  # 10,500 characters: about 2,600 tokens at chars/4
WHAT_IS_SENT = {  # how each case brings about 2,400+ tokens with the prompt
    "prompt": ({"message": "review this " + PASTE}, None),
    "steer": ({"message": "go"}, {"type": "steer", "message": "steered " + PASTE}),
    "images": ({"message": "look", "images": [{"type": "image", "data": PNG, "mimeType": "image/png"}] * 2}, None),
}


@pytest.mark.parametrize("case", list(WHAT_IS_SENT))
async def test_a_prompt_that_crosses_the_threshold_compacts_before_its_first_request(agent_env_factory, fake_llm,
                                                                                      tmp_path, case):
    # Window 8,000, reserve 2,000: the threshold is 6,000 tokens; two exchanges leave the context at ~4,000.
    env = agent_env_factory(context_window=8000, settings={
        "compaction": {"keepRecentTokens": 10, "reserveTokens": 2000}})
    fake_llm.set_script([{"text": "first answer", "usage": {"input": 2000, "output": 10}},
                         {"text": "second answer " + "word " * 20, "usage": {"input": 4000, "output": 30}},
                         {"match": SUMMARY, "text": "## Objective\nEarlier work."},
                         {"match": "Earlier work.", "text": "answered after compacting", "usage": {"input": 3000}},
                         OVERFLOW])  # what a real server says to the uncompacted context
    prompt, steer = WHAT_IS_SENT[case]
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        await client.prompt_and_wait("first question")
        await client.prompt_and_wait("second question")
        if steer is not None:
            assert (await client.send(steer))["data"]["disposition"] == "queued"
        events = await client.prompt_and_wait(prompt.pop("message"), timeout=60, **prompt)
    kinds = [e["type"] for e in events if e["type"] not in ("message_update", "queue_update")]
    assert kinds[:4] == ["agent_start", "compaction_start", "compaction_end", "turn_start"]
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "threshold" and end["result"] is not None and end["result"]["tokensBefore"] >= 4000
    assert len(fake_llm.requests) == 4  # two exchanges, the summary, the prompt: no overflowed attempt
    summary_request = roles_and_texts(fake_llm.requests[2]["body"]["messages"])
    assert "first question" in summary_request[-1][1] and "pasted" not in summary_request[-1][1]
    answered = roles_and_texts(fake_llm.requests[3]["body"]["messages"])
    assert "Earlier work." in answered[0][1] and "first question" not in str(answered)
    replies = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert [(m["stopReason"], m["content"][0]["text"]) for m in replies] == [("stop", "answered after compacting")]
