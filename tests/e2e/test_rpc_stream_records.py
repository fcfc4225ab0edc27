"""The bytes of an answer's `message_update` records do not depend on how the model server's bytes arrive: an
event a write, the whole stream in one write (`burst`, as a client lagging behind reads it), or in 7-byte
pieces with CRLF line ends cut between CR and LF. Guards the stream path's shortcuts (the body read straight
from the response stream, SSE lines split without the regex when a chunk holds no CR)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support.fake_llm import openai_stream, split_words

pytestmark = pytest.mark.real_process  # the records' bytes as a real process writes them to its stdout

TEXT = "Grüße, 世界 \U0001f600 and\nnew lines\r\n, a tab\t and \\ quotes \" " + " ".join(f"w{i}" for i in range(120))
SPEC = {"thinking": "first I think " * 20, "text": TEXT, "text_chunk_words": 2}


def crlf_pieces(spec: dict, size: int = 7) -> list[str]:
    """The stream `spec` makes, with CRLF line ends, in `size`-character pieces (some cut inside a CRLF)."""
    body = {"model": "fake-model", "stream": True, "stream_options": {"include_usage": True}}  # as the agent asks
    text = "".join(frame.decode() for frame in openai_stream(spec, 1, body).frames).replace("\n", "\r\n")
    return [text[i:i + size] for i in range(0, len(text), size)]


def update_records(env: dict[str, str], cwd: str) -> list[bytes]:
    """The message_update lines of one prompt's answer, as the agent wrote them."""
    command = [sys.executable, "-m", "agent_forge", "--mode", "rpc", "--no-session"]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd) as agent:
        agent.stdin.write(b'{"type":"prompt","message":"go"}\n')
        agent.stdin.flush()
        lines = []
        for line in agent.stdout:
            lines.append(line)
            if b'"agent_settled"' in line:
                break
        agent.stdin.close()
        agent.wait(timeout=60)
    return [line for line in lines if line.startswith(b'{"type":"message_update"')]


def test_update_records_are_the_same_bytes_however_the_stream_arrives(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([SPEC, {**SPEC, "burst": True}, {"frames": crlf_pieces(SPEC)}])
    one_by_one, burst, pieces = (update_records(agent_env, str(tmp_path)) for _ in range(3))
    assert burst == one_by_one and pieces == one_by_one
    events = [json.loads(line)["assistantMessageEvent"] for line in one_by_one]
    assert "".join(e["delta"] for e in events if e["type"] == "text_delta") == TEXT
    assert [e["type"] for e in events].count("text_delta") == len(split_words(TEXT, 2)) > 60
