"""Command-line flags that cannot work together are refused with exit 2, never silently ignored."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("args, fragment", [
    (["--mode", "rpc", "hello"], "--mode rpc"),
    (["--mode", "rpc", "-p"], "--mode rpc"),
    (["--no-session", "--session", "x.jsonl", "-p", "hi"], "cannot be combined"),
    (["--no-session", "--continue", "-p", "hi"], "cannot be combined"),
    (["--session", "a.jsonl", "--fork", "b.jsonl", "-p", "hi"], "cannot be combined"),
    (["-c", "--fork", "x", "-p", "hi"], "agent-forge: --continue and --fork cannot be combined\n"),
    (["--session-id", "X", "-c", "-p", "hi"], "agent-forge: --session-id and --continue cannot be combined\n"),
    (["--session", "", "-p", "hi"], "agent-forge: --session needs a session file or id, not an empty argument\n"),
    (["--thinking", "bogus", "-p", "hi"], "agent-forge: Invalid thinking level: bogus. Valid levels: off, "),
    (["--json", "-p", "hi"], "agent-forge: --json only applies to --list-sessions; for JSON events of a run use "
                             "--mode json, for a protocol --mode rpc\n"),
    (["--json", "--mode", "rpc"], "--json only applies to --list-sessions"),
])
def test_conflicting_flags_are_refused(args, fragment, agent_env, fake_llm, tmp_path):
    """Every usage error exits 2 before anything starts: no request, no session file."""
    done = subprocess.run([sys.executable, "-m", "agent_forge", *args], env=agent_env, cwd=tmp_path,
                          capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert fragment in done.stderr.decode()
    assert fake_llm.requests == [] and not list(tmp_path.rglob("*.jsonl"))


def test_deleted_working_directory_is_a_clear_error(agent_env, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    script = ("import os, sys, subprocess; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
              "sys.exit(subprocess.run([sys.executable, '-m', 'agent_forge', '--mode', 'rpc'], "
              "stdin=subprocess.DEVNULL).returncode)")
    done = subprocess.run([sys.executable, "-c", script, str(gone)], env=agent_env, capture_output=True,
                          timeout=30)
    assert done.returncode == 2
    assert b"current directory no longer exists" in done.stderr
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize("args, prompts", [
    (["@notes.txt", "-p", "summarise"], 1),
    (["summarise", "--no-session", "-p", "@notes.txt"], 1),
    (["-p", "summarise", "--model", "fake-model", "@notes.txt", "again"], 2),
    (["summarise", "-p", "@notes.txt", "--thinking", "low", "again"], 2),
])
def test_prompt_words_may_stand_on_both_sides_of_options(args, prompts, agent_env, fake_llm, tmp_path):
    """As in the reference CLI: message arguments and options intermix; the messages keep their order (each
    is a prompt of its own, `@file` arguments go with the first)."""
    (tmp_path / "notes.txt").write_text("plum\n")
    fake_llm.set_script([{"text": "ok"}] * prompts)
    done = subprocess.run([sys.executable, "-m", "agent_forge", "--no-session", *args], env=agent_env,
                          cwd=tmp_path, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"ok\n" and len(fake_llm.requests) == prompts
    users = [m["content"] for m in fake_llm.requests[-1]["body"]["messages"] if m["role"] == "user"]
    texts = [c if isinstance(c, str) else "".join(part.get("text", "") for part in c) for c in users]
    assert len(texts) == prompts and "plum" in texts[0] and "summarise" in texts[0]
    assert prompts == 1 or texts[1] == "again"


@pytest.mark.parametrize("args", [
    ["--approvals", "full", "acp"], ["--no-mcp", "acp"], ["--approve", "mcp", "list"], ["--no-session", "mcp"],
    ["--model", "fake-model", "acp", "--no-mcp"],
])
def test_a_command_word_after_options_is_a_usage_error_not_a_prompt(args, agent_env, fake_llm, tmp_path):
    """As in the reference CLI a command comes first: after options (stdin piped, which would run print mode)
    the word is refused, saying where it goes, instead of reaching the model as a prompt."""
    done = subprocess.run([sys.executable, "-m", "agent_forge", *args], env=agent_env, cwd=tmp_path,
                          capture_output=True, timeout=30, input=b"piped text")
    word = next(arg for arg in args if arg in ("acp", "mcp"))
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode() == (f"agent-forge: '{word}' is a command and must come first, before any option "
                                    f"(agent-forge {word} ...); to send the word as a prompt, use -p or put it "
                                    "after --\n")
    assert fake_llm.requests == [] and not list(tmp_path.rglob("*.jsonl"))


@pytest.mark.parametrize("args", [["-p", "acp"], ["--no-session", "--", "acp"], ["--mode", "json", "acp"],
                                  ["-p", "mcp", "list"], ["--name", "acp", "--", "acp"]])
def test_a_command_word_is_a_prompt_where_the_command_line_says_so(args, agent_env, fake_llm, tmp_path):
    """`-p` and `--mode` run prompts, and what follows `--` is prompt text: there the word is the first prompt."""
    fake_llm.set_script([{"text": "ok"}, {"text": "ok"}])
    done = subprocess.run([sys.executable, "-m", "agent_forge", "--no-session", *args], env=agent_env,
                          cwd=tmp_path, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    first = fake_llm.requests[0]["body"]["messages"][-1]["content"]
    text = first if isinstance(first, str) else "".join(part.get("text", "") for part in first)
    assert text == ("mcp" if "mcp" in args else "acp")
