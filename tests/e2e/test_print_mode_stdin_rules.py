"""End to end: piped stdin follows the rules of `@file` text: binary data (NUL bytes) and more than the 5 MB
limit are refused before any request, with one line and exit code 1, as a binary or huge `@file` is."""

from __future__ import annotations

import subprocess
import sys

CLI = [sys.executable, "-m", "agent_forge"]
LIMIT = 5 * 1024 * 1024


def run(env, cwd, *args, stdin: bytes):
    return subprocess.run([*CLI, *args], cwd=cwd, env=env, input=stdin, capture_output=True, timeout=120)


def test_binary_stdin_is_refused_like_a_binary_file(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "never"}])
    (tmp_path / "blob.bin").write_bytes(b"ELF\x00\x01\x02")
    piped = run(agent_env, tmp_path, "-p", "what is this", stdin=b"ELF\x00\x01\x02")
    attached = run(agent_env, tmp_path, "-p", "what is this", "@blob.bin", stdin=b"")
    for done in (piped, attached):
        assert done.returncode == 1 and done.stdout == b""
        assert b"(it contains NUL bytes)" in done.stderr
    assert piped.stderr.decode().splitlines() == [
        "agent-forge: Cannot use piped stdin: it is binary data (it contains NUL bytes). Only text can be piped; "
        "attach images as @file arguments (.png, .jpg, .jpeg, .gif, .webp)."]
    assert fake_llm.requests == []


def test_stdin_over_the_limit_is_refused_and_at_the_limit_is_sent(agent_env_factory, fake_llm, tmp_path):
    agent_env = agent_env_factory(context_window=2_000_000)  # 5 MB fit in it: the stdin limit is what is checked
    fake_llm.set_script([{"text": "read it"}])
    over = run(agent_env, tmp_path, "-p", "summarise", stdin=b"x" * (LIMIT + 1))
    assert over.returncode == 1 and over.stdout == b""
    assert over.stderr.decode().splitlines() == [
        "agent-forge: Cannot use piped stdin: it is over the 5MB limit for piped input and @file arguments."]
    assert fake_llm.requests == []
    at = run(agent_env, tmp_path, "-p", "summarise", stdin=b"y" * LIMIT)
    assert at.returncode == 0 and at.stdout == b"read it\n", at.stderr
    assert len(fake_llm.requests) == 1


def test_a_huge_pipe_is_not_read_to_its_end(agent_env, fake_llm, tmp_path):
    """30 MB from a real pipe: refused after the limit, and the writer is not waited for."""
    script = f"import sys; sys.stdout.buffer.write(b'z' * {30 * 1024 * 1024})"
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        done = subprocess.run([*CLI, "-p", "summarise"], cwd=tmp_path, env=agent_env, stdin=writer.stdout,
                              capture_output=True, timeout=120)
    finally:
        writer.stdout.close()
        writer.wait(timeout=60)
    assert done.returncode == 1 and b"over the 5MB limit" in done.stderr
    assert fake_llm.requests == []
