"""End to end: a failed answer is reported by what it was, not as a closed connection, and answers that the same
server would send again are not retried: redirects, a status outside HTTP's range, headers over the limit, a body
that does not decode, a stop for tool use without a tool call (round 5)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", "--no-session", *args], cwd=cwd, env=env,
                          input=b"", capture_output=True, timeout=60)


@pytest.fixture
def quick_retries(agent_env_factory):
    return agent_env_factory(settings={"retry": {"baseDelayMs": 1}})


def test_a_redirect_to_the_same_address_says_it_is_a_loop(quick_retries, fake_llm, tmp_path):
    fake_llm.set_script([{"status": 307, "body": "", "headers": {"Location": "/v1/chat/completions"}}])
    result = run(quick_retries, tmp_path, "-p", "hi")
    assert result.returncode == 1
    where = f"{fake_llm.base_url_openai}/chat/completions"
    assert result.stderr == (f"agent-forge: HTTP 307 from {where}: redirect to {where} (the same "
                             "address: a redirect loop): redirects are not followed (the request carries the key); "
                             "set the provider's baseUrl to the address that answers\n").encode()
    assert len(fake_llm.requests) == 1


def test_a_redirect_to_another_host_names_it_without_its_query(quick_retries, fake_llm, tmp_path):
    fake_llm.set_script([{"status": 302, "body": "", "headers": {"Location": "http://10.9.9.9/steal?key=x"}}])
    result = run(quick_retries, tmp_path, "-p", "hi")
    assert result.returncode == 1 and len(fake_llm.requests) == 1
    assert result.stderr.startswith(f"agent-forge: HTTP 302 from {fake_llm.base_url_openai}/chat/completions: "
                                    "redirect to http://10.9.9.9/steal: redirects are not followed".encode())


def test_a_status_outside_http_is_named_and_not_retried(quick_retries, fake_llm, tmp_path):
    fake_llm.set_script([{"status": 999, "body": "odd"}])
    result = run(quick_retries, tmp_path, "-p", "hi")
    assert result.returncode == 1 and len(fake_llm.requests) == 1
    assert result.stderr == (f"agent-forge: HTTP 999 from {fake_llm.base_url_openai}/chat/completions: (not a "
                             "valid HTTP status) odd\n").encode()


@pytest.mark.parametrize("answer, problem", [
    (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Big: " + b"a" * 300_000,
     "its status line and headers are too large (more than 100 KiB)"),
    (b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 200_000 + b"\r\n",
     "its status line and headers are too large (more than 100 KiB)"),
    (b"data: hello\n\n", "it does not start with an HTTP/1 status line"),
])
def test_an_answer_that_is_not_valid_http_is_named_and_not_retried(agent_env_factory, tmp_path, answer, problem):
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn)
            conn.recv(65536)
            try:
                conn.sendall(answer)
            except OSError:
                pass
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    port = listener.getsockname()[1]
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})
    models_path = Path(env["AGENT_FORGE_DIR"]) / "models.json"
    models = json.loads(models_path.read_text())
    models["providers"]["fake"]["baseUrl"] = f"http://127.0.0.1:{port}/v1"
    models_path.write_text(json.dumps(models))
    try:
        result = run(env, tmp_path, "-p", "hi")
    finally:
        listener.close()
    assert result.returncode == 1 and len(accepted) == 1
    assert result.stderr == (f"agent-forge: The answer from http://127.0.0.1:{port}/v1/chat/completions is not "
                             f"valid HTTP: {problem}\n").encode()


def test_a_body_that_does_not_decompress_is_named(quick_retries, fake_llm, tmp_path):
    fake_llm.set_script([{"frames": ["not gzip at all"], "headers": {"Content-Encoding": "gzip"}}])
    result = run(quick_retries, tmp_path, "-p", "hi")
    assert result.returncode == 1 and len(fake_llm.requests) == 1
    assert result.stderr.startswith(f"agent-forge: The answer from {fake_llm.base_url_openai}/chat/completions "
                                    "could not be decoded (its body does not match its Content-Encoding): "
                                    .encode()), result.stderr
    assert b"DecodingError" not in result.stderr


def test_a_stop_for_tool_use_without_a_tool_call_says_so(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(api="anthropic-messages")
    fake_llm.set_script([{"stop_reason": "tool_use"}])
    result = run(env, tmp_path, "-p", "hi")
    assert result.returncode == 1
    assert result.stderr == (b"agent-forge: The model stopped for tool use (stop reason: tool_use) but sent no "
                             b"tool call, so there is no answer.\n")


@pytest.mark.parametrize(("header", "quoted"), [("86399", "86399 s"), ("99999", "a day or more")])
def test_a_retry_after_beyond_the_cap_fails_at_once_quoting_the_wait(agent_env, fake_llm, tmp_path, header, quoted):
    """A wait past a day is read as a day (`MAX_RETRY_AFTER_MS`): it was quoted as the server's `86400 s`."""
    fake_llm.set_script([{"status": 429, "body": {"error": {"message": "slow down"}},
                          "headers": {"Retry-After": header}}, {"text": "too early"}])
    result = run(agent_env, tmp_path, "-p", "hi")  # default retry.maxAgentDelayMs: 60 s
    assert result.returncode == 1 and len(fake_llm.requests) == 1
    assert result.stderr == (f"agent-forge: HTTP 429 from {fake_llm.base_url_openai}/chat/completions: slow down "
                             f"(the server asks to retry in {quoted})\n").encode()  # the API's message, not its JSON


def test_a_retry_after_within_the_cap_is_waited_for(agent_env_factory, fake_llm, tmp_path):
    env = agent_env_factory(settings={"retry": {"baseDelayMs": 1}})  # the wait is the server's 0.1 s, not 2 s
    fake_llm.set_script([{"status": 429, "body": {"error": {"message": "slow down"}},
                          "headers": {"Retry-After": "0.1"}}, {"text": "fine"}])
    result = run(env, tmp_path, "-p", "hi")
    assert result.returncode == 0 and result.stdout == b"fine\n" and len(fake_llm.requests) == 2


def test_headers_trickling_in_are_timed_out_as_a_whole(agent_env_factory, tmp_path):
    """Every byte comes well within the idle timeout, but the headers never end: the idle timeout bounds them
    as a whole."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        conn.recv(65536)
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            while not stop.wait(0.1):  # the server's pace, not a synchronisation
                conn.sendall(b"a")
        except OSError:
            pass
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    env = agent_env_factory(settings={"retry": {"enabled": False}, "httpIdleTimeoutMs": 1000})
    models_path = Path(env["AGENT_FORGE_DIR"]) / "models.json"
    models = json.loads(models_path.read_text())
    models["providers"]["fake"]["baseUrl"] = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    models_path.write_text(json.dumps(models))
    try:
        result = run(env, tmp_path, "-p", "hi")
    finally:
        stop.set()
        listener.close()
    assert result.returncode == 1
    assert result.stderr == (b"agent-forge: Read timed out: the response headers did not arrive within 1 s "
                             b"(settings httpIdleTimeoutMs)\n"), result.stderr
