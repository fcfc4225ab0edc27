"""End to end: every way a `-p` / `--mode json` run ends without an answer says why on stderr, and `-p` tells a
script about an answer cut off at the output token limit or one with no text (round-3 findings, issue 10)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

RATE_LIMIT = {"status": 429, "body": {"error": {"message": "Rate limit reached for fake-model"}}}


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


def start(env, cwd, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "agent_forge", *args, "--no-session", "go"], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(process: subprocess.Popen) -> tuple[bytes, bytes]:
    try:
        return process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_the_retry_wait_names_the_error_and_the_cancelled_retry(agent_env_factory, fake_llm,
                                                                              tmp_path, signum):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 60000}})
    fake_llm.set_script([RATE_LIMIT])
    process = start(env, tmp_path, "--mode", "json")
    for line in process.stdout:  # synchronise on the event, not on time
        if json.loads(line)["type"] == "auto_retry_start":
            break
    process.send_signal(signum)
    _, stderr = finish(process)
    assert process.returncode == 128 + signum
    assert (f"agent-forge: The request failed: HTTP 429 from {fake_llm.base_url_openai}/chat/completions: Rate "
            "limit reached for fake-model; "
            f"the automatic retry 1 of 3 was cancelled by {signum.name}, so there is no answer.\n"
            ).encode() in stderr, stderr
    assert b"without an answer" not in stderr


RETRY_WAIT_PLUGIN = """
def setup(plugin):
    @plugin.on("auto_retry_start")
    def started(event, ctx):
        print("retry wait started", flush=True)  # plugin prints go to stderr
"""


def test_print_mode_names_the_last_error_when_a_signal_stops_a_failing_run(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 60000}})
    fake_llm.set_script([RATE_LIMIT])
    (tmp_path / "waits.py").write_text(RETRY_WAIT_PLUGIN)
    process = start(env, tmp_path, "-e", "waits.py", "-p")
    for line in process.stderr:  # the agent has seen the error (the server having sent it is not enough)
        if line == b"retry wait started\n":
            break
    process.send_signal(signal.SIGTERM)
    stdout, stderr = finish(process)
    assert process.returncode == 143 and stdout == b""
    # before or during the retry wait, the line says what failed and what stopped it
    assert b"Rate limit reached for fake-model" in stderr and b"SIGTERM" in stderr, stderr


def test_a_signal_before_the_model_answered_says_so(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "stalls", "hang": True, "hang_ms": 30000}])
    process = start(agent_env, tmp_path, "-p")
    fake_llm.wait_for(lambda: fake_llm.requests and fake_llm.requests[0]["hanging"], timeout=30)
    process.send_signal(signal.SIGTERM)
    stdout, stderr = finish(process)
    assert process.returncode == 143 and stdout == b""
    assert stderr.endswith(b"agent-forge: Stopped by SIGTERM before the model answered.\n"), stderr


def test_a_cut_off_answer_is_printed_with_a_notice_and_exit_0(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "The first half of", "stop_reason": "length"}])
    result = run(agent_env, tmp_path, "-p", "--no-session", "go")
    assert result.returncode == 0
    assert result.stdout == b"The first half of\n"
    assert result.stderr == (b'agent-forge: the answer was cut off: the model reached its output token limit '
                             b'(stopReason "length")\n')


@pytest.mark.parametrize("spec, detail", [({"thinking": "Let me think about it."}, " (only thinking)"),
                                          ({"text": " \n"}, "")])
def test_an_answer_without_text_is_a_notice_and_exit_1(agent_env, fake_llm, tmp_path, spec, detail):
    fake_llm.set_script([spec])
    result = run(agent_env, tmp_path, "-p", "--no-session", "go")
    assert result.returncode == 1
    assert result.stderr == f"agent-forge: the model returned no text{detail}\n".encode()


def test_a_cut_off_answer_with_no_text_gets_both_notices(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"thinking": "long thoughts", "stop_reason": "length"}])
    result = run(agent_env, tmp_path, "-p", "--no-session", "go")
    assert result.returncode == 1
    assert b"cut off" in result.stderr and b"the model returned no text (only thinking)" in result.stderr


def test_json_mode_answers_carry_their_stop_reason_and_print_no_notice(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "cut", "stop_reason": "length"}])
    result = run(agent_env, tmp_path, "--mode", "json", "--no-session", "go")
    ends = [e for e in map(json.loads, result.stdout.splitlines()) if e["type"] == "message_end"]
    assert result.returncode == 0 and result.stderr == b""
    assert ends[-1]["message"]["stopReason"] == "length"


@pytest.mark.exhausts_script  # its second run meets the 500 an exhausted script answers
def test_exhausted_retries_say_how_many_attempts_were_made(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1, "maxRetries": 2}})
    fake_llm.set_script([RATE_LIMIT, RATE_LIMIT, {**RATE_LIMIT, "body": {"error": {"message": "still limited"}}}])
    result = run(env, tmp_path, "--no-session", "-p", "go")
    assert result.returncode == 1 and len(fake_llm.requests) == 3  # the first request and two retries
    assert result.stderr.decode().splitlines()[-1] == \
        f"agent-forge: HTTP 429 from {fake_llm.base_url_openai}/chat/completions: still limited (after 3 attempts)"
    result = run(env, tmp_path, "--no-session", "--mode", "json", "go")  # the script is exhausted: 500, retried
    ends = [json.loads(line) for line in result.stdout.splitlines() if b'"auto_retry_end"' in line]
    assert [(e["success"], e["attempt"], e["finalError"].endswith(" (after 3 attempts)")) for e in ends] == \
           [(False, 2, True)]


def test_a_failure_without_retries_names_no_attempt_count(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})
    fake_llm.set_script([{"status": 401, "body": {"error": {"message": "bad key"}}}])
    result = run(env, tmp_path, "--no-session", "-p", "go")
    assert result.returncode == 1 and len(fake_llm.requests) == 1
    assert result.stderr.decode().splitlines()[-1] == \
        f"agent-forge: HTTP 401 from {fake_llm.base_url_openai}/chat/completions: bad key"


def _consumed(read_end: int, deadline_s: float = 30.0) -> None:
    """Return once nothing is left unread in the pipe `read_end` (the agent took what was written)."""
    import fcntl
    import struct
    import termios
    import time

    end = time.monotonic() + deadline_s
    while struct.unpack("i", fcntl.ioctl(read_end, termios.FIONREAD, b"\0\0\0\0"))[0]:
        assert time.monotonic() < end, "the agent never read its piped stdin"
        time.sleep(0.01)


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_while_piped_stdin_is_still_coming_stops_at_once_and_sends_nothing(agent_env, fake_llm, tmp_path,
                                                                                   mode, signum):
    import os

    read_end, write_end = os.pipe()  # the test keeps both ends: the input never ends, and it sees what was read
    try:
        process = subprocess.Popen([sys.executable, "-m", "agent_forge", *mode, "summarise"], cwd=tmp_path,
                                   env=agent_env, stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.write(write_end, b"the first line of a slow producer\n")
        _consumed(read_end)
        process.send_signal(signum)
        stdout, stderr = finish(process)
    finally:
        os.close(read_end)
        os.close(write_end)
    name = signal.Signals(signum).name
    assert process.returncode == 128 + signum and stdout == b""
    assert stderr == f"agent-forge: Stopped by {name} while the prompt was being read from stdin: nothing was " \
                     "sent.\n".encode()
    assert fake_llm.requests == []
