"""Text an SDK caller hands the session with a lone UTF-16 surrogate (a tool's result, a prompt, a steering
message, a reply of a custom `stream_fn`, a session name): the session file can only hold U+FFFD for it, so the
session's memory and events hold U+FFFD too, and the live conversation equals the file resumed (RPC mode's
output says U+FFFD likewise)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_forge.agent.types import ToolResult
from agent_forge.ai.usage import empty_usage
from agent_forge.sdk import FauxProvider, FauxResponse, create_agent_session

BAD = "a\ud800b"  # a high surrogate with no low half: not text UTF-8 can hold
FIXED = "a\ufffdb"


def has_lone_surrogate(value: object) -> bool:
    return "\\ud8" in json.dumps(value, default=repr)  # json escapes a lone surrogate as \\ud8xx


class SurrogateTool:
    """Reports progress and returns a result, each with BAD in its text and details; steers meanwhile."""

    name, label, description = "probe", "probe", "returns text with a lone surrogate"
    parameters = {"type": "object", "properties": {}}
    session = None

    async def execute(self, tool_call_id, args, on_update):
        on_update(ToolResult(content=[{"type": "text", "text": "so far " + BAD}]))
        self.session.steer("steer " + BAD)
        return ToolResult(content=[{"type": "text", "text": BAD}], details={"key " + BAD: [BAD]})


def surrogate_replies(faux: FauxProvider):
    """A custom transport whose final assistant message carries BAD (a stream_fn is the caller's code)."""
    async def stream(model, context, options):
        async for event in faux.stream(model, context, options):
            for block in event["message"]["content"] if event["type"] == "done" else ():
                if block["type"] == "text":
                    block["text"] += " " + BAD
            yield event
    return stream


async def test_live_messages_and_events_equal_the_resumed_file(tmp_path: Path):
    faux, tool = FauxProvider(), SurrogateTool()
    faux.respond([FauxResponse(tool_calls=[("probe", {})]), FauxResponse(text="done")])
    session = create_agent_session(cwd=str(tmp_path), model=faux.model(), stream_fn=surrogate_replies(faux),
                                   tools=[tool], agent_dir=tmp_path / "agent", session_dir=str(tmp_path / "s"))
    tool.session = session
    events: list[dict] = []
    session.subscribe(events.append)
    session.set_session_name("name " + BAD)
    await session.prompt_and_wait("prompt " + BAD)
    live, state = session.messages, session.get_state()
    await session.close()
    resumed = create_agent_session(cwd=str(tmp_path), model=faux.model(), stream_fn=faux.stream,
                                   agent_dir=tmp_path / "agent", session_file=state["sessionFile"])
    try:
        assert [m["role"] for m in live] == ["user", "assistant", "toolResult", "user", "assistant"]
        assert live == resumed.messages and not has_lone_surrogate(live)
        assert [e["type"] for e in events if has_lone_surrogate(e)] == []
        result = live[2]
        assert result["content"] == [{"type": "text", "text": FIXED}] and result["details"] == {"key " + FIXED: [FIXED]}
        assert live[0]["content"][0]["text"] == "prompt " + FIXED and live[3]["content"][0]["text"] == "steer " + FIXED
        assert live[4]["content"][-1]["text"] == "done " + FIXED
        assert state["sessionName"] == resumed.get_state()["sessionName"] == "name " + FIXED
        updates = [e for e in events if e["type"] == "tool_execution_update"]
        assert updates[0]["partialResult"]["content"][0]["text"] == "so far " + FIXED
        assert not has_lone_surrogate(faux.requests[-1].context)  # what the model was sent
    finally:
        await resumed.close()


def own_transport(faux: FauxProvider):
    """A custom transport of its own (no provider under it) that streams BAD in its start message, its deltas and
    its block's end, putting the same text in the message it mutates, as providers do."""
    async def stream(model, context, options):
        message = {"role": "assistant", "content": [{"type": "text", "text": "start " + BAD}], "api": model["api"],
                   "provider": model["provider"], "model": model["id"], "usage": empty_usage(),
                   "stopReason": "pending", "timestamp": 0}
        yield {"type": "start", "message": message}
        for chunk in (" one " + BAD, " two"):
            message["content"][0]["text"] += chunk
            yield {"type": "text_delta", "contentIndex": 0, "delta": chunk}
        yield {"type": "text_end", "contentIndex": 0, "content": message["content"][0]["text"]}
        message["stopReason"] = "stop"
        yield {"type": "done", "message": message}
    return stream


async def test_a_custom_stream_fns_live_events_hold_what_the_message_and_the_file_hold(tmp_path: Path):
    """Each event as a subscriber receives it (encoded at once, as a client would send it on) holds U+FFFD,
    the deltas add up to the message a `message_start` listener holds, and that equals `message_end`'s and the
    file's."""
    faux = FauxProvider()
    session = create_agent_session(cwd=str(tmp_path), model=faux.model(), stream_fn=own_transport(faux),
                                   agent_dir=tmp_path / "agent", session_dir=str(tmp_path / "s"))
    received: list[tuple[dict, str]] = []
    held: list[str] = []  # the message_start listener's message, encoded at each later update

    def listen(event):
        received.append((event, json.dumps(event)))
        if event["type"] == "message_update":
            held.append(json.dumps(next(e["message"] for e, _ in received if e["type"] == "message_start"
                                        and e["message"]["role"] == "assistant")))
    session.subscribe(listen)
    await session.prompt_and_wait("go")
    state = session.get_state()
    await session.close()
    resumed = create_agent_session(cwd=str(tmp_path), model=faux.model(), stream_fn=faux.stream,
                                   agent_dir=tmp_path / "agent", session_file=state["sessionFile"])
    try:
        assert [json.loads(text)["type"] for _, text in received if "\\ud8" in text] == []
        assert held and not any("\\ud8" in text for text in held)
        started = next(e["message"] for e, _ in received if e["type"] == "message_start"
                       and e["message"]["role"] == "assistant")
        updates = [json.loads(text)["assistantMessageEvent"] for e, text in received if e["type"] == "message_update"]
        streamed = "start " + FIXED + "".join(u["delta"] for u in updates if u["type"] == "text_delta")
        assert streamed == "start " + FIXED + " one " + FIXED + " two" == updates[-1]["content"]
        assert started["content"][0]["text"] == streamed == session.messages[-1]["content"][0]["text"]
        assert session.messages == resumed.messages
    finally:
        await resumed.close()


def split_pair_transport(faux: FauxProvider, chunks: tuple[str, ...], mutates: bool):
    """A custom transport streaming `chunks` as the deltas of one text block, the same text appended to the
    message it mutates as providers do (`mutates`) or put in it whole at the end: an emoji's UTF-16 halves may
    end one delta and start the next."""
    async def stream(model, context, options):
        message = {"role": "assistant", "content": [{"type": "text", "text": ""}], "api": model["api"],
                   "provider": model["provider"], "model": model["id"], "usage": empty_usage(),
                   "stopReason": "pending", "timestamp": 0}
        yield {"type": "start", "message": message}
        yield {"type": "text_start", "contentIndex": 0}
        for chunk in chunks:
            message["content"][0]["text"] += chunk if mutates else ""
            yield {"type": "text_delta", "contentIndex": 0, "delta": chunk}
        message["content"][0]["text"] = "".join(chunks)
        yield {"type": "text_end", "contentIndex": 0, "content": "".join(chunks)}
        message["stopReason"] = "stop"
        yield {"type": "done", "message": message}
    return stream


@pytest.mark.parametrize("mutates", [True, False])
@pytest.mark.parametrize(("chunks", "text"), [
    (("smile \ud83d", "\ude00 done"), "smile \U0001F600 done"),  # the pair split across two deltas: joined
    (("smile \ud83d", "\ud83d", "\ude00 done"), "smile \ufffd\U0001F600 done"),  # a lone half, then a pair
    (("cut \ud83d",), "cut \ufffd")])  # the block ends on half a pair
async def test_a_surrogate_pair_split_across_deltas_streams_as_the_message_and_the_file_hold_it(
        tmp_path: Path, chunks, text, mutates):
    faux = FauxProvider()
    session = create_agent_session(cwd=str(tmp_path), model=faux.model(),
                                   stream_fn=split_pair_transport(faux, chunks, mutates),
                                   agent_dir=tmp_path / "agent", session_dir=str(tmp_path / "s"))
    received: list[str] = []
    session.subscribe(lambda event: received.append(json.dumps(event, ensure_ascii=False)))
    await session.prompt_and_wait("go")
    state = session.get_state()
    await session.close()
    resumed = create_agent_session(cwd=str(tmp_path), model=faux.model(), stream_fn=faux.stream,
                                   agent_dir=tmp_path / "agent", session_file=state["sessionFile"])
    try:
        events = [json.loads(line) for line in received]
        updates = [e["assistantMessageEvent"] for e in events if e["type"] == "message_update"]
        live = "".join(u["delta"] for u in updates if u["type"] == "text_delta")
        ended = next(u["content"] for u in updates if u["type"] == "text_end")
        assert (live, ended, session.messages[-1]["content"][0]["text"]) == (text, text, text)
        assert resumed.messages == session.messages
        assert [line.encode("utf-8") for line in received]  # strict UTF-8: no lone half in any event
    finally:
        await resumed.close()
