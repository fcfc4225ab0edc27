"""End to end: `agent-forge --mode json` against the loopback fake LLM server: the session header, then every
event as one JSON line; exit codes as in print mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.types import EVENTS

RUN_EVENTS = ["agent_start", "turn_start", "message_start", "message_end", "message_start"]


def run(env, cwd, *args, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", "--mode", "json", *args], cwd=cwd, env=env,
                          input=stdin, capture_output=True, timeout=60)


def records(stdout: bytes) -> list[dict]:
    assert stdout.endswith(b"\n")
    return [json.loads(line) for line in stdout.split(b"\n")[:-1]]


def test_header_then_every_event_as_a_line(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Hello there.", "usage": {"input": 50, "output": 3}}])
    result = run(agent_env, tmp_path, "Say hello")
    assert result.returncode == 0, result.stderr
    header, *events = records(result.stdout)
    assert set(header) == {"type", "version", "id", "timestamp", "cwd"}
    assert (header["type"], header["version"], header["cwd"]) == ("session", 3, str(tmp_path))
    types = [e["type"] for e in events]
    assert types[:5] == RUN_EVENTS and types[-2:] == ["agent_end", "agent_settled"]
    assert set(types) <= set(EVENTS)
    update = next(e for e in events if e["type"] == "message_update")
    assert set(update) == {"type", "usage", "assistantMessageEvent"}  # lean, as in RPC mode
    final = [e for e in events if e["type"] == "message_end"][-1]["message"]
    assert final["content"] == [{"type": "text", "text": "Hello there."}] and final["usage"]["input"] == 50
    [path] = (Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl")
    saved = [json.loads(line) for line in path.read_text().splitlines()]
    assert saved[0] == header  # the header line is the session file's own
    assert saved[-1]["message"] == final


def test_tool_events_and_every_run_of_several_prompts(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
                         {"text": "ran it"}, {"text": "second"}])
    result = run(agent_env, tmp_path, "--no-session", "run echo", "again")
    assert result.returncode == 0, result.stderr
    header, *events = records(result.stdout)
    types = [e["type"] for e in events]
    assert types.count("agent_start") == 2 and types.count("agent_settled") == 2
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["toolName"] == "bash" and end["isError"] is False
    assert "hi" in end["result"]["content"][0]["text"]
    assert header["type"] == "session"
    assert not (Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").exists()


def test_error_run_prints_its_events_and_exits_1(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"status": 401, "body": {"error": {"message": "bad key"}}}])
    result = run(agent_env, tmp_path, "hi")
    assert result.returncode == 1 and b"bad key" in result.stderr
    events = records(result.stdout)[1:]
    final = [e for e in events if e["type"] == "message_end"][-1]["message"]
    assert final["stopReason"] == "error" and "bad key" in final["errorMessage"]
    assert events[-1] == {"type": "agent_settled", "aborted": False}


def test_rejected_prompt_writes_nothing_to_stdout(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(AGENT_FORGE_DIR=str(tmp_path / "agent"), HOME=str(tmp_path))
    result = run(env, tmp_path, "hi")
    assert result.returncode == 1 and result.stdout == b"" and b"ANTHROPIC_API_KEY" in result.stderr


def test_no_prompt_exits_1(agent_env, fake_llm, tmp_path):
    result = run(agent_env, tmp_path)
    assert result.returncode == 1 and result.stdout == b"" and b"No prompt given" in result.stderr


def test_reader_leaving_early_does_not_break_the_run(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "a long answer that keeps streaming", "hang_after": 3, "hang_ms": 30000}])
    process = subprocess.Popen([sys.executable, "-m", "agent_forge", "--mode", "json", "go"], cwd=tmp_path,
                               env=agent_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        assert json.loads(process.stdout.readline())["type"] == "session"
        fake_llm.wait_for(lambda: fake_llm.requests and fake_llm.requests[0]["hanging"], timeout=30)
        process.stdout.close()  # like `| head -1`
        fake_llm.release_hangs()
        code = process.wait(timeout=30)
        stderr = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()
    assert code == 0, stderr
    assert b"BrokenPipe" not in stderr
    [path] = (Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl")
    assert "keeps streaming" in path.read_text()  # the session was still saved


NOISY_PLUGIN = '''
import os, subprocess, sys
print("import-time print")

def setup(plugin):
    print("setup print")

    @plugin.command("noisy", description="prints in every way a plugin can")
    def noisy(args, ctx):
        print("command print")
        sys.stdout.write("sys.stdout write\\n")
        os.write(1, b"raw fd write\\n")
        subprocess.run(["echo", "child echo"])

    @plugin.on("agent_end")
    def ended(event, ctx):
        print("agent_end print")
'''


@pytest.mark.real_process  # the plugin and its child write to descriptor 1 too
def test_plugin_output_goes_to_stderr_in_json_and_print_mode(agent_env, fake_llm, tmp_path):
    plugin = tmp_path / "noisy.py"
    plugin.write_text(NOISY_PLUGIN)
    fake_llm.set_script([{"text": "json answer"}, {"text": "print answer"}])
    json_mode = run(agent_env, tmp_path, "-p", "/noisy", "hello", "-e", str(plugin))
    print_mode = subprocess.run([sys.executable, "-m", "agent_forge", "-p", "/noisy", "hello", "-e", str(plugin)],
                                cwd=tmp_path, env=agent_env, input=b"", capture_output=True, timeout=60)
    assert json_mode.returncode == 0 and print_mode.returncode == 0, (json_mode.stderr, print_mode.stderr)
    header, *events = records(json_mode.stdout)  # every line is JSON
    assert header["type"] == "session" and events[-1]["type"] == "agent_settled"
    assert print_mode.stdout == b"print answer\n"
    for result in (json_mode, print_mode):
        for text in (b"import-time print", b"setup print", b"command print", b"sys.stdout write",
                     b"raw fd write", b"child echo", b"agent_end print"):
            assert text in result.stderr and text not in result.stdout


NAMING_PLUGIN = '''
import json, os

def setup(plugin):
    @plugin.command("nameit", description="names the session")
    def nameit(args, ctx):
        ctx.session.set_session_name("from plugin")

    @plugin.on("session_info_changed")
    def seen(event, ctx):
        with open(os.environ["SEEN_FILE"], "a") as f:
            f.write(json.dumps(event) + "\\n")
'''


def test_a_name_change_is_an_event_of_the_stream_and_the_start_up_name_is_not(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Hello."}])
    plugin, seen = tmp_path / "naming.py", tmp_path / "seen.jsonl"
    plugin.write_text(NAMING_PLUGIN)
    env = {**agent_env, "SEEN_FILE": str(seen)}
    result = run(env, tmp_path, "--name", "at start", "-e", str(plugin), "/nameit", "hello")
    assert result.returncode == 0, result.stderr
    header, *events = records(result.stdout)
    changes = [e for e in events if e["type"] in ("session_info_changed", "thinking_level_changed")]
    assert changes == [{"type": "session_info_changed", "name": "from plugin"}]
    assert [json.loads(line) for line in seen.read_text().splitlines()] == changes  # plugins observe it too
    assert events.index(changes[0]) < [e["type"] for e in events].index("agent_start")  # before the run it preceded
