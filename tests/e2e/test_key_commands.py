"""End to end: models.json `apiKey: "!command"` and header values through the real CLI: output that is more
than a key, failing commands, a command that hangs (abort stops it), and that no key or header value ever
appears in an error, on stderr or in the session file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

SECRET = "sk-TOPSECRET-42"


def configure(env, api_key: str, headers: dict | None = None) -> Path:
    """Set the provider's `apiKey` (and `headers`) in the models.json of `env`; returns that file."""
    path = Path(env["AGENT_FORGE_DIR"]) / "models.json"
    config = json.loads(path.read_text())
    config["providers"]["fake"]["apiKey"] = api_key
    if headers is not None:
        config["providers"]["fake"]["headers"] = headers
    path.write_text(json.dumps(config))
    return path


def assistant_errors(events):
    return [e["message"].get("errorMessage") for e in events
            if e["type"] == "message_end" and e["message"]["role"] == "assistant"]


async def prompt_once(env, cwd, text="hello"):
    """(assistant errors, everything the agent wrote: stdout records, stderr, session file)."""
    async with await RpcClient.start([], cwd=str(cwd), env=env) as client:
        events = await client.prompt_and_wait(text, timeout=60)
        path = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    written = json.dumps(client.records) + client.stderr.decode("utf-8", "replace") + Path(path).read_text()
    return assistant_errors(events), written


async def test_a_command_printing_two_lines_fails_without_showing_them(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(extra_env={"KEY_TEXT": f"{SECRET}\nextra\n"})
    models = configure(env, '!printf "$KEY_TEXT"')
    errors, written = await prompt_once(env, tmp_path)
    assert errors == [f'No API key for provider "fake": {models} apiKey: the key command `printf "$KEY_TEXT"` '
                      "printed more than one line (the output is not shown). "
                      f'Set "apiKey" for provider "fake" in {models}, add it to {models.parent / "auth.json"}, '
                      "or pass --api-key."]
    assert SECRET not in written and fake_llm.requests == []


async def test_a_header_value_with_a_line_break_is_named_never_shown(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(extra_env={"TOKEN_TEXT": f"{SECRET}\r\nX-Injected: 1"})
    models = configure(env, "fake-key", headers={"X-Token": "$TOKEN_TEXT"})
    errors, written = await prompt_once(env, tmp_path)
    assert errors == [f"{models}: the value of header 'X-Token' for provider \"fake\" holds a line break or "
                      "another control character, so the request was not sent (the value is not shown)"]
    assert SECRET not in written and fake_llm.requests == []


async def test_failing_commands_say_how_they_failed(agent_env_factory, fake_llm, tmp_path):
    cases = {"false": "failed with exit status 1",
             "echo oops >&2; echo also >&2; exit 3": "failed with exit status 3: oops",
             "no-such-command-xyz": "failed with exit status 127: ",
             "true": "printed nothing",
             "kill -9 $$": "was killed by signal 9 (SIGKILL)",  # not "exit status -9"
             "head -c 50000000 /dev/zero | tr '\\0' a": "printed more than 64 KiB (the output is not shown)"}
    for command, how in cases.items():
        env = agent_env_factory()
        models = configure(env, f"!{command}")
        errors, written = await prompt_once(env, tmp_path)
        [error] = errors
        assert error.startswith(f'No API key for provider "fake": {models} apiKey: the key command `{command}` {how}')
        assert "log in" not in written
    assert fake_llm.requests == []


def test_print_mode_reports_a_failing_command_on_stderr(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory()
    models = configure(env, "!echo vault locked >&2; exit 2")
    result = subprocess.run([sys.executable, "-m", "agent_forge", "-p", "hi"], cwd=tmp_path, env=env, input=b"",
                            capture_output=True, timeout=60)
    assert result.returncode != 0
    assert (f'No API key for provider "fake": {models} apiKey: the key command `echo vault locked >&2; exit 2` '
            "failed with exit status 2: vault locked.") in result.stderr.decode()
    assert "RuntimeWarning" not in result.stderr.decode()  # no coroutine left un-awaited by the failure


def test_a_command_whose_background_child_keeps_stdout_open_gives_its_key_at_once(agent_env_factory, fake_llm,
                                                                                 tmp_path):
    """The shell exits at once; the key is what it printed, not a 30 s timeout waiting for the child's EOF."""
    env = agent_env_factory()
    pid_file = tmp_path / "child.pid"
    configure(env, f"!(sleep 100 & echo $! > {pid_file}) ; echo kbg")
    fake_llm.set_script([{"text": "ok"}])
    started = time.monotonic()
    try:
        result = subprocess.run([sys.executable, "-m", "agent_forge", "-p", "hi"], cwd=tmp_path, env=env,
                                input=b"", capture_output=True, timeout=60)
    finally:
        if pid_file.exists():  # the child the command left behind (it outlives the command, as it would in a shell)
            _kill_quietly(int(pid_file.read_text()))
    assert result.returncode == 0, result.stderr.decode()
    assert time.monotonic() - started < 20  # the timeout it used to wait for is 30 s
    assert fake_llm.requests[0]["headers"].get("authorization") == "Bearer kbg"


@pytest.mark.real_process  # process groups and stderr warnings of an agent process of its own
async def test_abort_stops_a_hanging_key_command_at_once(agent_env_factory, fake_llm, tmp_path, pid_fifo,
                                                         watch_process):
    """Whichever moment of the command's start the abort lands in (tests/coding/test_key_command_abort.py
    holds each one), the command's process group dies with it, and nothing runs the command a second time."""
    env = agent_env_factory()
    runs = tmp_path / "runs"
    # A child of the command's shell; its pid comes through a FIFO the moment it is forked.
    configure(env, f"!echo run >> {runs}; sleep 60 & echo $! > {pid_fifo.path}; wait; echo late")
    fake_llm.set_script([{"text": "never requested"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        await client.send({"type": "prompt", "message": "hello"})
        child = watch_process(await pid_fifo.pid(timeout=30))  # the command is running
        state = await client.send({"type": "get_state"})  # answered meanwhile, and runs no key command
        reply = await client.send({"type": "abort"}, timeout=20)  # the command would run 60 s
        events = await client.wait_for("agent_settled", timeout=20)
        await client.send({"type": "get_state"})  # anything the abort printed on stderr is written by now
    assert "RuntimeWarning" not in client.stderr.decode()  # the headers' coroutine was never made, not dropped
    assert state["data"]["isStreaming"] is True and reply["success"] is True
    assert [e["message"]["stopReason"] for e in events if e["type"] == "message_end"
            and e["message"]["role"] == "assistant"] == ["aborted"]
    assert child.exited(), "the key command's child survived the abort"  # its process group was killed
    assert runs.read_text() == "run\n"
    assert fake_llm.requests == []


def _kill_quietly(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.mark.real_process  # lifeline tokens and process sessions of an agent process of its own
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="lifeline tokens need /proc")
@pytest.mark.parametrize("stop", ["abort", "kill -9"])
async def test_a_key_commands_setsid_child_dies_when_the_command_is_stopped(agent_env_factory, fake_llm, tmp_path,
                                                                           stop):
    """A child that left the command's process group (`setsid`) carries its lifeline token: an abort, as a timeout
    would, and a kill -9 of the agent (its watchdog) end it too, as for a `bash` command."""
    import signal

    from e2e.test_bash_stopped_setsid import child_pid, gone

    env = agent_env_factory()
    configure(env, "!setsid sh -c 'echo $$ > child.tmp && mv child.tmp child.pid && exec sleep 133' & sleep 60")
    fake_llm.set_script([{"text": "never requested"}])
    client = await RpcClient.start([], cwd=str(tmp_path), env=env)
    try:
        await client.send({"type": "prompt", "message": "hello"})
        pid = await child_pid(tmp_path)
        if stop == "abort":
            assert (await client.send({"type": "abort"}, timeout=20))["success"] is True
        else:
            client.process.send_signal(signal.SIGKILL)
        assert await gone(pid), f"the key command's setsid child survived the {stop}"
    finally:
        await client.close()
        _kill_quietly(int((tmp_path / "child.pid").read_text())) if (tmp_path / "child.pid").exists() else None
    assert fake_llm.requests == []
