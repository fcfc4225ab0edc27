"""End to end: one rule for bad flag values. A value no configuration could make valid (empty, malformed) is a
usage error: one `agent-forge: ...` line, exit code 2, before anything starts (`--context-window abc`, `-t ''`
and `-n ''` exited 1 after start-up). A well-formed value naming something the configuration lacks
(`--provider nope`, `--model nosuch`, an unknown session id) fails the run: exit code 1."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agent_forge.cli_parser import EMPTY_ALLOWED, build_parser

CLI = [sys.executable, "-m", "agent_forge"]


def run(args, env, cwd):
    return subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def value_flags() -> list[str]:
    """Every flag that takes a value and has no use for an empty one."""
    return [action.option_strings[-1] for action in build_parser()._actions
            if action.option_strings and action.nargs != 0 and action.dest not in EMPTY_ALLOWED
            and action.dest not in ("help", "version", "export")]


def test_the_rule_covers_the_flags_users_hit():
    assert {"--model", "--provider", "--tools", "--exclude-tools", "--session-dir", "--context-window",
            "--extension", "--skill", "--prompt-template", "--models", "--api-key"} <= set(value_flags())


@pytest.mark.parametrize("flag", value_flags())
@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_value_is_a_usage_error(flag, empty, agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "never"}])
    done = run([flag, empty, "-p", "hi"], agent_env, tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    (line,) = done.stderr.splitlines()
    said = "invalid choice" if flag in ("--mode", "--approvals") else "expected a value, not an empty argument"
    assert line.startswith("agent-forge: argument ") and said in line
    assert flag in line and fake_llm.requests == []


@pytest.mark.parametrize("args, problem", [
    (["--context-window", "abc"], "Invalid context window: abc."),
    (["--context-window", "0"], "Invalid context window: 0."),
    (["-t", "read,+bash"], "--tools: use either plain names"),
    (["-t", "read,,bash"], "--tools: empty tool name in the list"),
    (["-n", ""], "Session name cannot be empty"),
    (["-n", "two\nlines"], "Session name must be one line of printable text"),
    (["--thinking", "loud"], "Invalid thinking level: loud."),
])
@pytest.mark.parametrize("mode", [["-p", "hi"], ["--mode", "rpc"], ["--mode", "json", "hi"]])
def test_a_malformed_value_is_a_usage_error_in_every_mode(args, problem, mode, agent_env, fake_llm, tmp_path):
    done = run([*args, *mode], agent_env, tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"agent-forge: {problem}") and len(done.stderr.splitlines()) == 1
    assert fake_llm.requests == []


@pytest.mark.parametrize("args, problem", [
    (["--provider", "nope"], 'Unknown provider "nope"'),
    (["--model", "nosuch"], 'No model matches "nosuch"'),
    (["--session", "nosuch"], "No session found matching 'nosuch'"),
])
def test_a_value_naming_what_is_not_configured_fails_the_run(args, problem, agent_env, fake_llm, tmp_path):
    done = run([*args, "-p", "hi"], agent_env, tmp_path)
    assert done.returncode == 1 and problem in done.stderr and fake_llm.requests == []


def test_empty_text_values_stay_text(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "fine"}])
    done = run(["--system-prompt", "", "--append-system-prompt", "", "-p", "hi"], agent_env, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "fine\n", "")
