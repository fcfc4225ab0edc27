"""End to end: hostile and unusual input lines never crash RPC mode; each gets exactly one answer."""

from __future__ import annotations

import json

import pytest

from agent_forge.modes.rpc.client import RpcClient

pytestmark = pytest.mark.real_process  # bytes on a real process's pipes


@pytest.fixture(params=["orjson", "stdlib"])
def agent_env(agent_env_factory, request):
    """The agent's env with each JSON backend from its first record (AGENT_FORGE_JSON)."""
    return agent_env_factory(extra_env={"AGENT_FORGE_JSON": request.param})


async def run_lines(env, cwd, data: bytes):
    client = await RpcClient.start(["--no-session"], cwd=str(cwd), env=env)
    client.write_raw(data)
    reply = await client.send({"id": "final", "type": "get_state"})
    code = await client.close()
    assert code == 0, client.stderr.decode()
    assert reply["success"] is True
    return [r for r in client.records if r.get("id") != "final"]


async def test_non_objects_and_broken_json_answer_parse_errors(agent_env, tmp_path):
    lines = [b"null", b"42", b'"text"', b"[1,2]", b"{'type': 'get_state'}", b'{"type": "get_state"', b"",
             b"\xff\xfe not utf-8", b"[" * 100000 + b"]" * 100000]
    records = await run_lines(agent_env, tmp_path, b"\n".join(lines) + b"\n")
    assert len(records) == len(lines)
    assert all(r["command"] == "parse" and r["success"] is False and "id" not in r for r in records)
    assert "UTF-8" in records[7]["error"]


MALFORMED_OBJECTS = [  # (line, the id its parse error gives back, a word of the error)
    (b'{"id":"c-1","type":"get_state","x":"a\x00b"}', "c-1", "control character"),
    (b'{"id":"c-2\x01","type":"get_state"}', "c-2\x01", "control character"),  # the string the client meant
    (b'{"type":"get_state","x":{"y":["\x1f"]},"id":"c-3"}', "c-3", "control character"),
    (b'{"id":"s-1","type":"get_state","x":"\\ud800\x00"}', "s-1", "control character"),
    (b'{"id":"s-2\\udc00","x":"\x00"}', "s-2\ufffd", "control character"),  # as a valid line's id would be
    (b'{"id":"d-1","x":"\x00","id":"d-2"}', "d-2", "control character"),  # the last one, as json.loads reads it
    (b'{"id":"e-1","type":"get_state","x":"\\x41"}', "e-1", "escape"),
    (b'{"id":"e-2","type":"get_state","x":"\\u12"}', "e-2", "escape"),
    (b'{"id":"t-1","type":"get_state"} garbage', "t-1", "Extra data"),
    (b'{"id":"t-2","type":"get_state"}{"id":"other"}', "t-2", "Extra data"),
    (b'{"id":"t-3","type":"get_state"', "t-3", "delimiter"),
    (b'{"id":"n-1","type":"get_state","x":NaN}', "n-1", "NaN"),
    (b'{"id":"u-1","type":"get_state","x":"\xff\x00"}', "u-1", "UTF-8"),
    (b'\xef\xbb\xbf{"id":"b-1","x":"\x00"}', "b-1", "control character"),
]
NO_ID_LINES = [b'{"id":NaN,"x":"\x00"}', b'{"id":"bad\\q","x":1}', b'{"id" "x"}', b'[{"id":"in-a-list"}',
               b'{"id":12ab}', b'{"id":"u-\xff","x":"\x00"}']


async def test_a_malformed_line_that_starts_as_an_object_gets_its_id_back(agent_env, tmp_path):
    """Issue 10: whatever breaks a line that is a JSON object (a raw control character, a lone surrogate next
    to one, duplicate keys, a bad escape, garbage after it, a member cut short), its parse error carries its
    `id`; a line whose id itself is not JSON, or that is no object, gets none."""
    duplicates = b'{"id":"v-1","type":"nope","id":"v-2","type":"get_state"}'  # valid JSON: the last ones count
    lines = [line for line, _, _ in MALFORMED_OBJECTS] + NO_ID_LINES
    records = await run_lines(agent_env, tmp_path, b"\n".join([*lines, duplicates]) + b"\n")
    assert len(records) == len(lines) + 1
    last = records.pop()
    assert (last["command"], last["success"], last["id"]) == ("get_state", True, "v-2")
    assert all(r["command"] == "parse" and r["success"] is False for r in records)
    answered = records[:len(MALFORMED_OBJECTS)]
    assert [r.get("id") for r in answered] == [wanted for _, wanted, _ in MALFORMED_OBJECTS]
    for record, (_, _, word) in zip(answered, MALFORMED_OBJECTS):
        assert word in record["error"], record
    assert ["id" in r for r in records[len(MALFORMED_OBJECTS):]] == [False] * len(NO_ID_LINES)


async def test_errors_echo_the_request_id(agent_env, tmp_path):
    commands = [
        {"id": "u1", "type": "frobnicate"},
        {"id": "u2"},
        {"id": 3, "type": "prompt"},
        {"id": "u4", "type": "prompt", "message": 7},
        {"id": "u5", "type": "prompt", "message": "x", "images": "nope"},
        {"id": "u6", "type": "set_model", "provider": "fake"},
        {"id": {"nested": True}, "type": "set_thinking_level", "level": "galaxy-brain"},
        {"id": "u8", "type": "set_auto_compaction", "enabled": "yes"},
        {"id": "u9", "type": "prompt", "message": "x", "images": [{"type": "image"}]},
        {"id": "u10", "type": "prompt", "message": "x",
         "images": [{"type": "image", "data": "!!!notbase64", "mimeType": "image/png"}]},
        {"id": "u11", "type": "steer", "message": "x",
         "images": [{"type": "image", "data": "aGVsbG8=", "mimeType": "text/evil"}]},
    ]
    data = b"".join(json.dumps(c).encode() + b"\n" for c in commands)
    records = await run_lines(agent_env, tmp_path, data)
    assert [r["id"] for r in records] == [c["id"] for c in commands]
    assert all(r["success"] is False for r in records)
    errors = [r["error"] for r in records]
    assert errors[0] == "Unknown command: frobnicate"
    assert "type" in errors[1]
    assert errors[2] == "Missing required field: message"
    assert errors[3] == "Field 'message' must be a string"
    assert "images" in errors[4] and "modelId" in errors[5]
    assert "galaxy-brain" in errors[6] and "enabled" in errors[7] and "images[0]" in errors[8]
    assert "base64" in errors[9] and "mimeType" in errors[10]


async def test_crlf_unicode_separators_and_a_huge_line(agent_env_factory, fake_llm, tmp_path):
    agent_env = agent_env_factory(context_window=2_000_000)  # a 5 MiB prompt fits it (a larger one is refused)
    text = "line\u2028separator\u2029paragraph \U0001F600 " + "x" * (5 * 1024 * 1024)
    fake_llm.set_script([{"text": "ok \u2028 done"}])
    client = await RpcClient.start([], cwd=str(tmp_path), env=agent_env)
    client.write_raw(json.dumps({"id": "p", "type": "prompt", "message": text}, ensure_ascii=False).encode()
                     + b"\r\n")
    events = await client.wait_for("agent_settled", timeout=60)
    messages = (await client.send({"type": "get_messages"}))["data"]["messages"]
    await client.close()
    assert client.records[0] == {"type": "response", "command": "prompt", "success": True, "id": "p",
                                 "data": {"disposition": "started"}}
    assert messages[0]["content"][0]["text"] == text
    assert messages[1]["content"][0]["text"] == "ok \u2028 done"
    assert events[-1]["type"] == "agent_settled"
    assert fake_llm.requests[0]["body"]["messages"][-1]["content"][0]["text"] == text


async def test_last_line_without_newline_and_eof_exit(agent_env, tmp_path):
    client = await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env)
    client.write_raw(b'{"id":"a","type":"get_state"}')
    code = await client.close()
    assert code == 0
    assert [r["id"] for r in client.records] == ["a"]


async def test_seed_example_python_client_streams_and_exits(agent_env, fake_llm, tmp_path):
    """The "Example: Basic Client (Python)" of seed 000, unchanged but for running it as a script."""
    import subprocess
    import sys
    from pathlib import Path

    fake_llm.set_script([{"text": "Hi from the example client test."}])
    example = '''
import subprocess
import json

proc = subprocess.Popen(
    ["agent-forge", "--mode", "rpc", "--no-session"],
    stdin=subprocess.PIPE,
    stdout=subprocess.PIPE,
    text=True
)

def send(cmd):
    proc.stdin.write(json.dumps(cmd) + "\\n")
    proc.stdin.flush()

def read_events():
    for line in proc.stdout:
        yield json.loads(line)

# Send prompt
send({"type": "prompt", "message": "Hello!"})

# Process events
for event in read_events():
    if event.get("type") == "message_update":
        delta = event.get("assistantMessageEvent", {})
        if delta.get("type") == "text_delta":
            print(delta["delta"], end="", flush=True)

    if event.get("type") == "agent_end":
        print()
        break
'''
    env = dict(agent_env, PATH=f"{Path(sys.executable).parent}:{agent_env.get('PATH', '')}")
    done = subprocess.run([sys.executable, "-c", example], env=env, cwd=tmp_path, capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == "Hi from the example client test.\n"


async def test_nan_and_infinity_are_parse_errors(agent_env, tmp_path):
    lines = [b'{"type":"get_state","id":NaN}', b'{"type":"get_state","id":-Infinity}']
    records = await run_lines(agent_env, tmp_path, b"\n".join(lines) + b"\n")
    assert [r["command"] for r in records] == ["parse"] * 2
    assert "NaN" in records[0]["error"] and "Infinity" in records[1]["error"]


def test_unusable_values_inside_an_object_keep_its_id(agent_env, tmp_path):
    """Valid JSON the parser cannot hold (numbers beyond float range, 5000-digit integers, nesting deeper than
    the parser goes): a field error naming the field when the command uses it, ignored elsewhere; an `id` of
    that kind is echoed as the client wrote it."""
    import subprocess
    import sys

    deep = "[" * 5000 + "]" * 5000
    lines = ['{"id":"num-1","type":"get_state","x":1e999999}',
             '{"id":"num-2","type":"get_state","x":' + "9" * 5000 + '}',
             '{"id":"num-3","type":"get_state","x":{"y":' + deep + '},"z":1}',
             '{"id":"num-4","type":"set_context_window","contextWindow":-1e400}',
             '{"id":"num-5","type":"prompt","message":"hi","images":' + deep + '}',
             '{"id":1e999,"type":"get_state"}',
             '{"id":"num-7","type":1e999}',
             '{"id":' + "7" * 5000 + ',"type":"frobnicate"}',
             '{"id":' + deep + ',"type":"get_last_assistant_text"}',
             '{"id":"num-10","type":"get_state","x":' + "[" * 5000 + "}" * 5000 + '}',
             '{"id":"final","type":"get_state"}']
    done = subprocess.run([sys.executable, "-m", "agent_forge", "--mode", "rpc", "--no-session"],
                          input="\n".join(lines).encode() + b"\n", capture_output=True, env=agent_env,
                          cwd=tmp_path, timeout=60)
    out = done.stdout.decode().splitlines()
    assert done.returncode == 0 and len(out) == len(lines), done.stderr
    prefix = '{"type":"response","command":'
    for line, wanted in zip(out, ["num-1", "num-2", "num-3", "num-4", "num-5"]):
        assert f'"id":"{wanted}"' in line
    assert [('"success":true' in line) for line in out[:5]] == [True, True, True, False, False]
    assert '"error":"Field \'contextWindow\': number -1e400 is out of range"' in out[3]
    assert '"error":"Field \'images\': value nested too deeply"' in out[4]
    assert out[5].startswith(prefix + '"get_state","success":true,"id":1e999,"data":')
    assert out[6] == prefix + '"unknown","success":false,"id":"num-7","error":"Field \'type\': number 1e999 is out of range"}'
    assert out[7] == (prefix + '"frobnicate","success":false,"id":' + "7" * 5000
                      + ',"error":"Unknown command: frobnicate"}')
    assert out[8].startswith(prefix + '"get_last_assistant_text","success":true,"id":' + deep + ',"data":')
    assert out[9].startswith(prefix + '"parse"') and "unbalanced" in out[9] and '"id":"num-10"' in out[9]
    assert '"id":"final"' in out[10]


async def test_any_id_value_is_echoed_null_included(agent_env, tmp_path):
    ids = [None, 0, -1.5, False, "", [1, {"a": None}], {"k": [None]}]
    data = b"".join(json.dumps({"id": i, "type": "get_state"}).encode() + b"\n" for i in ids)
    data += b'{"id":null,"type":"frobnicate"}\n{"id":null}\n{"id":null,"type":"prompt"}\n'
    records = await run_lines(agent_env, tmp_path, data)
    assert [r["id"] for r in records] == ids + [None, None, None]
    assert all("id" in r for r in records)
    assert [r["success"] for r in records] == [True] * len(ids) + [False] * 3


async def test_a_leading_bom_is_ignored(agent_env, tmp_path):
    records = await run_lines(agent_env, tmp_path, b'\xef\xbb\xbf{"id":"b","type":"get_state"}\n')
    assert records[0]["id"] == "b" and records[0]["success"] is True


async def test_lone_surrogates_never_poison_later_requests(agent_env, fake_llm, tmp_path):
    """A client cutting an emoji in half sends a lone surrogate escape; the model also writes one into a file."""
    fake_llm.set_script([
        {"tool_calls": [{"name": "write", "arguments": '{"path": "s.txt", "content": "a\\ud800b"}'}]},
        {"text": "first"}, {"text": "second"}])
    client = await RpcClient.start([], cwd=str(tmp_path), env=agent_env)
    client.write_raw(b'{"id":"p","type":"prompt","message":"half \\ud83d emoji"}\n')
    first = await client.wait_for("agent_settled")
    second = await client.prompt_and_wait("again")
    path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    await client.close()
    for events in (first, second):
        assert [e for e in events if e["type"] == "message_end"][-1]["message"]["stopReason"] == "stop"
    assert len(fake_llm.requests) == 3
    assert fake_llm.requests[0]["body"]["messages"][-1]["content"][0]["text"] == "half \ufffd emoji"
    resumed = await RpcClient.start(["--session", path], cwd=str(tmp_path), env=agent_env)
    messages = (await resumed.send({"type": "get_messages"}))["data"]["messages"]
    await resumed.close()
    assert len(messages) == 6 and messages[0]["content"][0]["text"] == "half \ufffd emoji"


async def test_an_oversized_line_is_answered_with_a_parse_error_without_being_buffered(agent_env, tmp_path):
    """A 160 MiB junk line: one parse error naming the limit, memory stays bounded, the next command works."""
    from agent_forge.modes.rpc.framing import MAX_COMMAND_BYTES

    client = await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env)
    await client.send({"id": "before", "type": "get_state"})
    status = f"/proc/{client.process.pid}/status"
    before = _peak_kib(status)
    chunk = b"x" * (1 << 20)
    for _ in range(160):
        client.write_raw(chunk)
        await client.process.stdin.drain()
    client.write_raw(b"\n")
    reply = await client.send({"id": "after", "type": "get_state"}, timeout=60)
    peak = _peak_kib(status)
    assert await client.close() == 0
    errors = [r for r in client.records if r.get("command") == "parse"]
    assert reply["success"] is True and len(errors) == 1 and "id" not in errors[0]
    assert f"{160 << 20} bytes long" in errors[0]["error"] and str(MAX_COMMAND_BYTES) in errors[0]["error"]
    assert peak - before < (MAX_COMMAND_BYTES >> 10) + 40_000  # at most the limit (plus slack), not the line


def _peak_kib(status_path: str) -> int:
    for line in open(status_path):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in " + status_path)


def test_the_stdout_pipe_is_widened_for_long_answers(agent_env, tmp_path):
    """A multi-MB answer crosses a 1 MiB pipe in a few wake-ups of the client (`stdout_guard.widen_pipe`; the
    default is 64 KiB); the pipe is the client's too, so its size is read here. A file or a terminal as stdout
    is left as it is: see `test_widen_pipe_leaves_what_is_no_pipe`."""
    import fcntl
    import subprocess
    import sys

    from agent_forge.modes.stdout_guard import PIPE_BYTES

    getter = getattr(fcntl, "F_GETPIPE_SZ", None)
    if getter is None:
        pytest.skip("no F_GETPIPE_SZ on this system")
    with open("/proc/sys/fs/pipe-max-size") as limit:
        if int(limit.read()) < PIPE_BYTES:
            pytest.skip("pipe-max-size is below 1 MiB here")
    proc = subprocess.Popen([sys.executable, "-m", "agent_forge", "--mode", "rpc", "--no-session"], cwd=tmp_path,
                            env=agent_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(b'{"type":"get_state"}\n')
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["success"] is True
        assert fcntl.fcntl(proc.stdout.fileno(), getter) == PIPE_BYTES
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
