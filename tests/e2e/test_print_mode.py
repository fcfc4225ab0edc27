"""End to end: `agent-forge -p` against the loopback fake LLM server: prompt sources, answer, exit codes,
session saving."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def run(env, cwd, *args, stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the CLI; `stdin` None means an empty, non-terminal stdin (nothing piped)."""
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=stdin or b"",
                          capture_output=True, timeout=timeout)


def user_texts(request) -> list[str]:
    users = [m for m in request["body"]["messages"] if m["role"] == "user"]
    return ["".join(part.get("text", "") for part in u["content"]) if isinstance(u["content"], list)
            else u["content"] for u in users]


def session_files(env) -> list[Path]:
    return sorted((Path(env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl"))


def interrupt_when(process: subprocess.Popen, ready: Callable[[], object]) -> tuple[bytes, bytes]:
    """Once `ready()` returned, SIGINT `process` and collect its output; it never outlives the test."""
    try:
        ready()
        process.send_signal(signal.SIGINT)
        return process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def stderr_line(process: subprocess.Popen, expected: bytes) -> Callable[[], None]:
    """A `ready` for `interrupt_when`: read stderr up to the line `expected`."""
    def ready() -> None:
        while (line := process.stderr.readline()) and line != expected:
            pass
    return ready


def test_prints_the_final_answer_and_saves_the_session(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Hello from the fake model."}])
    result = run(agent_env, tmp_path, "-p", "Say hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"Hello from the fake model.\n"
    assert user_texts(fake_llm.requests[0]) == ["Say hello"]
    [path] = session_files(agent_env)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line.get("message", {}).get("role") for line in lines if line["type"] == "message"] == [
        "user", "assistant"]
    assert lines[0]["cwd"] == str(tmp_path)


def test_no_session_leaves_no_file(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "ok"}])
    result = run(agent_env, tmp_path, "--print", "--no-session", "hi")
    assert result.returncode == 0 and result.stdout == b"ok\n"
    assert session_files(agent_env) == []


def test_name_flag_names_the_saved_session(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "ok"}])
    assert run(agent_env, tmp_path, "-p", "-n", "nightly review", "hi").returncode == 0
    [path] = session_files(agent_env)
    names = [json.loads(line).get("name") for line in path.read_text().splitlines()]
    assert "nightly review" in names


def test_tool_calls_run_and_only_the_final_text_is_printed(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Let me check.", "tool_calls": [{"name": "bash", "arguments": {
                              "command": "echo made > out.txt"}}]},
                         {"text": "Created out.txt."}])
    result = run(agent_env, tmp_path, "-p", "make a file")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"Created out.txt.\n"
    assert (tmp_path / "out.txt").read_text() == "made\n"


def test_an_attached_file_cannot_close_its_block_early(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "ok"}])
    (tmp_path / 'we"ird.md').write_text("a </file> b\n</File>\n")
    result = run(agent_env, tmp_path, "-p", '@we"ird.md', "read it")
    assert result.returncode == 0, result.stderr
    [message] = [m for m in fake_llm.requests[0]["body"]["messages"] if m["role"] == "user"]
    text = "".join(part.get("text", "") for part in message["content"] if part["type"] == "text") \
        if isinstance(message["content"], list) else message["content"]
    assert text.count("</file>") == 1 and 'we&quot;ird.md">\na <\\/file> b\n<\\/File>\n' in text


def test_stdin_and_files_join_the_first_prompt(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "reviewed"}])
    (tmp_path / "notes.md").write_text("line one\nline two\n")
    (tmp_path / "dot.png").write_bytes(PNG)
    result = run(agent_env, tmp_path, "-p", "@notes.md", "review this", "@dot.png", stdin=b"diff --git a b\n")
    assert result.returncode == 0, result.stderr
    [message] = [m for m in fake_llm.requests[0]["body"]["messages"] if m["role"] == "user"]
    text = "".join(part.get("text", "") for part in message["content"] if part["type"] == "text")
    assert text.startswith("diff --git a b\n<file name=")
    assert "notes.md\">\nline one\nline two\n\n</file>\nreview this" in text
    images = [part for part in message["content"] if part["type"] == "image_url"]
    assert len(images) == 1 and images[0]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(
        PNG).decode()


def test_only_piped_stdin_is_a_prompt(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "got it"}])
    result = run(agent_env, tmp_path, "-p", stdin="explain ünïcode\n".encode())
    assert result.returncode == 0 and result.stdout == b"got it\n"
    assert user_texts(fake_llm.requests[0]) == ["explain ünïcode"]


def test_each_message_argument_is_its_own_prompt(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "first answer"}, {"text": "second answer"}])
    result = run(agent_env, tmp_path, "-p", "first question", "second question")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"second answer\n"
    assert user_texts(fake_llm.requests[1]) == ["first question", "second question"]


def test_no_prompt_is_an_error(agent_env, fake_llm, tmp_path):
    result = run(agent_env, tmp_path, "-p", stdin=b"  \n")
    assert result.returncode == 1 and b"No prompt given" in result.stderr
    assert result.stdout == b"" and fake_llm.requests == []


def test_unreadable_file_is_an_error_before_any_request(agent_env, fake_llm, tmp_path):
    result = run(agent_env, tmp_path, "-p", "@missing.txt", "read it")
    assert result.returncode == 1 and b"missing.txt" in result.stderr
    assert fake_llm.requests == [] and session_files(agent_env) == []


def test_provider_error_exits_1_with_the_message(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"status": 400, "body": {"error": {"message": "prompt is too long"}}}])
    result = run(agent_env, tmp_path, "-p", "hi", "never sent")
    assert result.returncode == 1 and result.stdout == b""
    assert b"prompt is too long" in result.stderr
    assert len(fake_llm.requests) == 1  # the second prompt is not sent after a failed run


def test_no_model_or_key_exits_1_naming_the_env_var(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(AGENT_FORGE_DIR=str(tmp_path / "agent"), HOME=str(tmp_path))
    result = run(env, tmp_path, "-p", "hi")
    assert result.returncode == 1 and b"ANTHROPIC_API_KEY" in result.stderr and result.stdout == b""


def test_unknown_model_is_a_startup_error(agent_env, fake_llm, tmp_path):
    result = run(agent_env, tmp_path, "-p", "--model", "no-such-model-anywhere", "hi")
    assert result.returncode == 1 and b"no-such-model-anywhere" in result.stderr
    assert fake_llm.requests == []


def test_double_dash_lets_a_prompt_start_with_a_dash(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "ok"}])
    result = run(agent_env, tmp_path, "-p", "--", "-v means verbose?")
    assert result.returncode == 0, result.stderr
    assert user_texts(fake_llm.requests[0]) == ["-v means verbose?"]


def test_fifo_file_argument_is_refused_without_hanging(agent_env, fake_llm, tmp_path):
    os.mkfifo(tmp_path / "pipe")  # nobody ever writes to it: reading it would wait forever
    result = run(agent_env, tmp_path, "-p", "@pipe", "summarise", timeout=30)
    assert result.returncode == 1 and result.stdout == b""
    assert b"Cannot attach pipe: " in result.stderr and b"is a FIFO (named pipe), not a regular file" in result.stderr
    assert fake_llm.requests == []


def test_device_file_argument_is_refused(agent_env, fake_llm, tmp_path):
    result = run(agent_env, tmp_path, "-p", "@/dev/null", "summarise")
    assert result.returncode == 1 and b"character device, not a regular file" in result.stderr
    assert fake_llm.requests == []


def test_file_argument_over_the_size_limit_is_refused(agent_env_factory, fake_llm, tmp_path):
    agent_env = agent_env_factory(context_window=2_000_000)  # 5 MB fit in it: the @file limit is what is checked
    (tmp_path / "huge.log").write_bytes(b"x" * (5 * 1024 * 1024) + b"\n")
    (tmp_path / "fits.log").write_bytes(b"y" * (5 * 1024 * 1024 - 1) + b"\n")
    result = run(agent_env, tmp_path, "-p", "@huge.log", "summarise")
    assert result.returncode == 1
    assert b"Cannot attach huge.log: it is over the 5MB limit for @file arguments (5,242,881 bytes)." in result.stderr
    assert fake_llm.requests == []
    fake_llm.set_script([{"text": "ok"}])
    assert run(agent_env, tmp_path, "-p", "@fits.log", "summarise").returncode == 0


def test_binary_file_argument_is_refused_but_an_image_is_attached(agent_env, fake_llm, tmp_path):
    (tmp_path / "prog.bin").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    result = run(agent_env, tmp_path, "-p", "@prog.bin", "what is this")
    assert result.returncode == 1 and b"Cannot attach prog.bin: it is a binary file" in result.stderr
    assert fake_llm.requests == []
    (tmp_path / "fake.png").write_bytes(b"hello, not a PNG\n")
    result = run(agent_env, tmp_path, "-p", "@fake.png", "what is this")
    assert result.returncode == 1 and b"Cannot attach fake.png: the data is not of type image/png." in result.stderr
    assert fake_llm.requests == []
    (tmp_path / "dot.png").write_bytes(PNG)  # images contain NUL bytes too, and are fine
    fake_llm.set_script([{"text": "a dot"}])
    assert run(agent_env, tmp_path, "-p", "@dot.png", "what is this").returncode == 0


# -- plugins: prompts take the input path of RPC `prompt` ---------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_PLUGIN = str(REPO / "examples" / "plugins" / "example_plugin.py")
E2E_PLUGIN = str(REPO / "tests" / "plugins" / "fixtures" / "e2e_plugin.py")


def test_a_plugin_command_runs_instead_of_reaching_the_model(agent_env, fake_llm, tmp_path):
    result = run(agent_env, tmp_path, "-p", "/note remember the milk", "-e", EXAMPLE_PLUGIN)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"" and fake_llm.requests == []
    [first] = session_files(agent_env)  # the plugin's entry alone makes the file appear: the note is kept
    fake_llm.set_script([{"text": "You noted the milk."}])
    result = run(agent_env, tmp_path, "-p", "/note remember the milk", "what did I note?", "-e", EXAMPLE_PLUGIN)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"You noted the milk.\n"
    assert user_texts(fake_llm.requests[0]) == ["what did I note?", "Notes the user kept so far:\n- remember the milk"]
    for path in session_files(agent_env):
        notes = [json.loads(line) for line in path.read_text().splitlines() if '"example-note"' in line]
        assert [n["data"] for n in notes] == [{"text": "remember the milk"}], path
    assert len(session_files(agent_env)) == 2 and first in session_files(agent_env)


def test_commands_and_input_handlers_mix_with_prompts(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "noted answer"}])
    result = run(agent_env, tmp_path, "-p", "-e", E2E_PLUGIN, "--no-session", "ping", "shout hello", "/boom")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"noted answer\n"  # the answer of the last run; handled prompts add nothing
    assert len(fake_llm.requests) == 1 and user_texts(fake_llm.requests[0]) == ["HELLO"]
    assert b"plugin e2e_plugin failed in command:boom: RuntimeError: the boom command exploded" in result.stderr


def test_json_mode_reports_a_failing_command_as_an_event(agent_env, fake_llm, tmp_path):
    result = subprocess.run([sys.executable, "-m", "agent_forge", "--mode", "json", "-e", E2E_PLUGIN, "/exit 3"],
                            cwd=tmp_path, env=agent_env, input=b"", capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    header, *events = [json.loads(line) for line in result.stdout.splitlines()]
    assert header["type"] == "session" and fake_llm.requests == []
    assert [(e["type"], e.get("event"), e.get("error")) for e in events] == [
        ("extension_error", "command:exit", "SystemExit: 3"), ("agent_settled", None, None)]  # handled, over


def test_a_hanging_plugin_setup_is_skipped_after_the_configured_timeout(agent_env, fake_llm, tmp_path):
    (Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json").write_text('{"pluginSetupTimeoutMs": 200}')
    (tmp_path / "hangs.py").write_text("import asyncio\n\nasync def setup(plugin):\n    await asyncio.Event().wait()\n")
    fake_llm.set_script([{"text": "answered anyway"}])
    result = run(agent_env, tmp_path, "-p", "-e", "hangs.py", "hi", timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"answered anyway\n"
    assert b"hangs.py: setup did not finish within 0.2 s; plugin skipped" in result.stderr


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
def test_ctrl_c_settles_the_run_and_removes_the_lock_file(mode, agent_env, fake_llm, tmp_path):
    """SIGINT takes SIGTERM's clean-up path (exit 130): before, KeyboardInterrupt left `<session>.jsonl.lock`."""
    fake_llm.set_script([{"text": "an answer that stalls", "hang_after": 3, "hang_ms": 30000}])
    process = subprocess.Popen([sys.executable, "-m", "agent_forge", *mode, "go"], cwd=tmp_path, env=agent_env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    def streaming() -> None:
        fake_llm.wait_for(lambda: fake_llm.requests and fake_llm.requests[0]["hanging"], timeout=30)
        assert Path(f"{session_files(agent_env)[0]}.lock").exists()

    stdout, stderr = interrupt_when(process, streaming)
    [path] = session_files(agent_env)
    assert process.returncode == 130 and b"Traceback" not in stderr, stderr
    assert not Path(f"{path}.lock").exists()
    if "json" in mode:
        assert [json.loads(line)["type"] for line in stdout.splitlines()][-2:] == ["agent_end", "agent_settled"]


OVERFLOW = {"status": 400, "body": {"error": {"message": "This model's maximum context length is 8192 tokens.",
                                              "type": "invalid_request_error", "code": "context_length_exceeded"}}}


def test_an_overflow_compaction_cannot_fix_prints_its_advice(agent_env_factory, fake_llm, tmp_path):
    """Print mode shows no events: the `compaction_end.errorMessage` (numbers and what to do) goes to stderr."""
    env = agent_env_factory(context_window=8192, max_tokens=8192)
    (tmp_path / "big.txt").write_text("huge " * 6000)  # 7,500 tokens by chars/4: over the window it is refused
    fake_llm.set_script([OVERFLOW, OVERFLOW])
    result = run(env, tmp_path, "-p", "@big.txt")
    stderr = result.stderr.decode()
    assert result.returncode == 1 and result.stdout == b""
    assert "Context overflow cannot be resolved by compaction" in stderr and "8192-token context window" in stderr
    assert "lower compaction.keepRecentTokens" in stderr
    assert stderr.count("maximum context length is 8192 tokens") == 1  # quoted once, inside the advice


def test_a_failed_compaction_is_reported_even_when_the_run_answered(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(context_window=8000, settings={"compaction": {"keepRecentTokens": 10}})
    fake_llm.set_script([{"text": "first", "usage": {"input": 100}}, {"text": "second", "usage": {"input": 7500}},
                         {"status": 400, "body": {"error": {"message": "summaries are refused"}}}])
    result = run(env, tmp_path, "-p", "one " * 50, "two")
    assert result.returncode == 0 and result.stdout == b"second\n"
    assert "Compaction failed: " in result.stderr.decode() and "summaries are refused" in result.stderr.decode()


HOSTILE = "\x1b[2J\x1b]0;pwned\x07hi\x00 there\rX\x9b31m\x1bPq#0\x1b\\ end\r\n"


def test_model_text_reaches_the_terminal_without_control_sequences(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": HOSTILE}])
    result = run(agent_env, tmp_path, "-p", "hi")
    assert result.returncode == 0, result.stderr
    # every control shown as its escape, a lone \r a line break: nothing is obeyed, overwritten or hidden
    assert result.stdout == rb"\x1b[2J\x1b]0;pwned\x07hi\x00 there" + b"\n" + rb"X\x9b31m\x1bPq#0\x1b\ end" + b"\n\n"


def test_server_error_text_reaches_stderr_without_control_sequences(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"status": 400, "body": f"bad {HOSTILE}request", "content_type": "text/plain"}])
    result = run(agent_env, tmp_path, "-p", "hi")
    assert result.returncode == 1
    assert rb"bad \x1b[2J\x1b]0;pwned\x07hi\x00 there" in result.stderr and b"request" in result.stderr
    assert not any(byte < 0x20 and byte not in b"\n\t" for byte in result.stderr), result.stderr
    assert b"\xc2\x9b" not in result.stderr  # the 8-bit CSI, UTF-8 encoded


LEAKY_PLUGIN = '''
def setup(plugin):
    @plugin.command("leak")
    def leak(args, ctx):
        raise RuntimeError("tool said: " + args.replace("ESC", "\\x1b"))
'''


def test_plugin_error_lines_reach_stderr_without_control_sequences(agent_env, fake_llm, tmp_path):
    (tmp_path / "leaky.py").write_text(LEAKY_PLUGIN)
    result = run(agent_env, tmp_path, "-p", "-e", "leaky.py", "/leak ESC]0;pwnedESC\\ ok ESC[2J")
    assert (rb"plugin leaky failed in command:leak: RuntimeError: tool said: \x1b]0;pwned\x1b\ ok \x1b[2J"
            in result.stderr), result.stderr
    assert b"\x1b" not in result.stderr


def test_ctrl_c_while_plugin_code_runs_at_start_up_is_not_taken_for_the_plugins_failure(agent_env, fake_llm,
                                                                                      tmp_path):
    """Ctrl-C arriving while a plugin's setup code executes (not awaits) once became that plugin's
    KeyboardInterrupt: "Plugin not loaded", and the prompt went to the model anyway."""
    fake_llm.set_script([{"text": "should not be asked"}])
    (tmp_path / "busy.py").write_text("import time\n\ndef setup(plugin):\n"
                                      "    print('setup started', flush=True)\n"
                                      "    end = time.monotonic() + 1.5\n"
                                      "    while time.monotonic() < end:\n"
                                      "        pass\n")
    process = subprocess.Popen([sys.executable, "-m", "agent_forge", "-p", "-e", "busy.py", "hi"],
                               cwd=tmp_path, env=agent_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    _, stderr = interrupt_when(process, stderr_line(process, b"setup started\n"))
    assert process.returncode == 130, stderr
    assert b"Plugin not loaded" not in stderr and b"Traceback" not in stderr
    assert fake_llm.requests == []


def test_ctrl_c_during_start_up_removes_the_lock_file(agent_env, fake_llm, tmp_path):
    """Before the mode runs (a plugin's setup is still going on) Ctrl-C still releases the lock of the session
    being resumed."""
    fake_llm.set_script([{"text": "first answer"}])
    assert run(agent_env, tmp_path, "-p", "first").returncode == 0
    settings = Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "pluginSetupTimeoutMs": 600000}))
    (tmp_path / "slow.py").write_text("import asyncio\n\nasync def setup(plugin):\n"
                                      "    print('setup started', flush=True)\n"  # plugin prints go to stderr
                                      "    await asyncio.Event().wait()\n")
    process = subprocess.Popen([sys.executable, "-m", "agent_forge", "-p", "-c", "-e", "slow.py", "hi"],
                               cwd=tmp_path, env=agent_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    locks: list[Path] = []

    def set_up_started() -> None:
        stderr_line(process, b"setup started\n")()
        locks.extend((Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl.lock"))

    _, stderr = interrupt_when(process, set_up_started)
    assert process.returncode == 130 and b"Traceback" not in stderr, stderr
    assert len(locks) == 1 and not locks[0].exists()
    assert len(fake_llm.requests) == 1  # interrupted before its prompt


def test_a_signal_during_a_tool_call_says_the_tool_calls_were_running(agent_env, fake_llm, tmp_path, pid_fifo):
    """Round 4: it said "before the model finished its answer" while the model's bash call ran."""
    import asyncio

    command = f"echo $$ > {pid_fifo.path}; sleep 30"
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "never"}])
    process = subprocess.Popen([sys.executable, "-m", "agent_forge", "-p", "run it"], cwd=tmp_path, env=agent_env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, stderr = interrupt_when(process, lambda: asyncio.run(pid_fifo.pid()))
    assert process.returncode == 130, stderr
    assert b"Stopped by SIGINT while the model's tool calls ran, before it answered." in stderr, stderr
