"""End to end (issue 10): a stream chunk that is not JSON, after good ones, on all four wire APIs, through the
real CLI in print mode (`-p`) against the loopback fake LLM server. The error names the URL and shows the start
of the bad data (escaped, capped); the text streamed before it stays on the failed assistant message."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support import fake_gemini, fake_llm as fake_llm_module, fake_responses

BAD = "{not json \x1b[31m" + "y" * 300
SHOWN_BAD = "{not json \\x1b[31m" + "y" * (200 - len("{not json \\x1b[31m")) + "…"
GOOD_TEXT = "Hello there"
# per API: (its stream plan, the name of the bad event, how the error names it)
APIS = {
    "openai-completions": (fake_llm_module.openai_stream, None, "stream chunk"),
    "anthropic-messages": (fake_llm_module.anthropic_stream, "content_block_delta", "content_block_delta event"),
    "openai-responses": (fake_responses.stream, "response.output_text.delta", "response.output_text.delta event"),
    "google-generative-ai": (fake_gemini.stream, None, "stream chunk"),
}


def good_then_bad(api: str) -> list[str]:
    """The API's own stream for GOOD_TEXT up to its terminal events, then one event whose data is BAD."""
    plan_of, event, _ = APIS[api]
    plan = plan_of({"text": GOOD_TEXT}, 1, {"model": "fake-model"})
    frames = [frame.decode() for frame in plan.frames[:plan.terminal_at]]
    return frames + [(f"event: {event}\n" if event else "") + f"data: {BAD}\n\n"]


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


def session_assistants(env) -> list[dict]:
    from pathlib import Path

    files = sorted(Path(env["AGENT_FORGE_DIR"]).rglob("*.jsonl"))
    records = [json.loads(line) for path in files for line in path.read_text().splitlines() if line.strip()]
    return [r["message"] for r in records
            if r.get("type") == "message" and r.get("message", {}).get("role") == "assistant"]


@pytest.mark.parametrize("api", list(APIS))
def test_a_malformed_chunk_names_the_url_and_the_bad_data_and_keeps_the_text(agent_env_factory, fake_llm,
                                                                             tmp_path, api):
    env = agent_env_factory(api=api, settings={"retry": {"baseDelayMs": 1}})
    fake_llm.set_script([{"frames": good_then_bad(api)}])
    result = run(env, tmp_path, "-p", "hi")
    where = APIS[api][2]
    url = fake_llm.base_url_anthropic + fake_llm.requests[0]["path"].partition("?")[0]  # query never shown
    assert result.returncode == 1, result.stderr
    assert len(fake_llm.requests) == 1  # the same server sends the same chunk again: not retried
    stderr = result.stderr.decode()
    assert stderr.startswith(f"agent-forge: Malformed JSON in {where} from "), stderr
    assert f': Expecting property name enclosed in double quotes at line 1 column 2; the data starts: ' \
           f'"{SHOWN_BAD}"\n' in stderr
    assert f"from {url}: " in stderr and "alt=sse" not in stderr
    (failed,) = session_assistants(env)
    assert failed["stopReason"] == "error" and failed["errorMessage"] == stderr.removeprefix("agent-forge: ")[:-1]
    assert [b.get("text") for b in failed["content"] if b["type"] == "text"] == [GOOD_TEXT]


def _before_the_end(api: str, frame: str) -> list[str]:
    """The API's own stream for GOOD_TEXT with `frame` put in just before its terminal events."""
    plan = APIS[api][0]({"text": GOOD_TEXT}, 1, {"model": "fake-model"})
    frames = [frame.decode() for frame in plan.frames]
    return frames[:plan.terminal_at] + [frame] + frames[plan.terminal_at:]


STRAY_DELTAS = {  # a delta for a block (an output item) the stream never opened, and how the error says it
    "anthropic-messages": ("event: content_block_delta\ndata: " + json.dumps(
        {"type": "content_block_delta", "index": 7, "delta": {"type": "text_delta", "text": "lost?"}}) + "\n\n",
        "content_block_delta for content block 7, which no content_block_start opened"),
    "openai-responses": ("event: response.output_text.delta\ndata: " + json.dumps(
        {"type": "response.output_text.delta", "output_index": 7, "item_id": "x", "content_index": 0,
         "delta": "lost?"}) + "\n\n",
        "response.output_text.delta for output 7, which no response.output_item.added opened"),
}


@pytest.mark.parametrize("api", list(STRAY_DELTAS))
def test_text_for_a_block_the_stream_never_opened_fails_the_answer_instead_of_vanishing(agent_env_factory,
                                                                                         fake_llm, tmp_path, api):
    env = agent_env_factory(api=api, settings={"retry": {"baseDelayMs": 1, "maxRetries": 0}})
    frame, said = STRAY_DELTAS[api]
    fake_llm.set_script([{"frames": _before_the_end(api, frame)}])
    result = run(env, tmp_path, "-p", "hi")
    assert result.returncode == 1, result.stdout
    assert said in result.stderr.decode()
    (failed,) = session_assistants(env)
    assert failed["stopReason"] == "error"
    assert [b.get("text") for b in failed["content"] if b["type"] == "text"] == [GOOD_TEXT]


def test_an_anthropic_event_without_an_event_name_is_read_by_its_type_and_bad_json_is_named(agent_env_factory,
                                                                                             fake_llm, tmp_path):
    env = agent_env_factory(api="anthropic-messages", settings={"retry": {"baseDelayMs": 1, "maxRetries": 0}})
    unnamed = "data: " + json.dumps({"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": " and more"}}) + "\n\n"
    plan = fake_llm_module.anthropic_stream({"text": GOOD_TEXT}, 1, {"model": "fake-model"})
    frames = [frame.decode() for frame in plan.frames]
    stop = next(n for n, frame in enumerate(frames) if "content_block_stop" in frame)
    fake_llm.set_script([{"frames": frames[:stop] + [unnamed] + frames[stop:]},
                         {"frames": frames[:stop] + [f"data: {BAD}\n\n"]}])
    first = run(env, tmp_path, "-p", "hi")
    assert first.returncode == 0 and first.stdout.decode().strip() == GOOD_TEXT + " and more", first.stderr
    second = run(env, tmp_path, "-p", "hi")
    assert second.returncode == 1
    assert "Malformed JSON in event without an event name from" in second.stderr.decode()
