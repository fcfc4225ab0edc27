"""End to end: a name from outside (a CLI argument, a session id, a tool name or path a model sent) holding a
newline, a tab or an escape sequence is written on one line without control bytes in every message that quotes
it: stderr, the model's tool results and the RPC approval question's `title`. Table-driven over the CLI's
options, so a flag added later is covered too (README, "no name can pass for another message")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from support.tmux_terminal import TmuxTerminal
from support.tui import needs_tmux

from agent_forge.cli_parser import build_parser
from agent_forge.modes.rpc.client import RpcClient

CLI = [sys.executable, "-m", "agent_forge"]
HOSTILE = "zz\nWarning: forged\t\x1b]0;t\x07"
"""A name part: a newline starting what would read as a message of its own, a tab and an OSC title escape."""
SHOWN = "zz\\nWarning: forged\\t\\x1b]0;t\\x07"
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def run(args, env, cwd):
    return subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def one_line_messages(stderr: str) -> list[str]:
    """stderr's lines, asserting none holds a control byte and none is a forged `Warning: forged` line."""
    lines = stderr.split("\n")
    assert lines[-1] == "", repr(stderr)
    lines = lines[:-1]
    bad = [line for line in lines if CONTROL.search(line) or line.startswith("Warning: forged")]
    assert not bad, f"a name split a message or carried control bytes: {bad}"
    return lines


def named_flags() -> list[str]:
    """Every flag taking a free-form value (not --mode/--approvals choices, not --export: its own test)."""
    return [action.option_strings[-1] for action in build_parser()._actions
            if action.option_strings and action.nargs != 0 and not action.choices
            and action.dest not in ("help", "version", "export", "list_models")]


def test_the_table_covers_the_flags_that_take_names():
    assert {"--session", "--fork", "--session-id", "--model", "--provider", "--tools", "--extension", "--skill",
            "--prompt-template", "--theme", "--session-dir", "--name", "--models", "--thinking"} <= set(named_flags())


@pytest.mark.parametrize("flag", named_flags())
def test_a_hostile_value_of_any_flag_is_quoted_on_one_line(flag, agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "answered"}] * 3)
    done = run([flag, f"v{HOSTILE}", "-p", "hi"], agent_env, tmp_path)
    one_line_messages(done.stderr)


ENV_NAMES = ["AGENT_FORGE_SESSION_DIR", "AGENT_FORGE_CANCEL_GRACE_MS", "AGENT_FORGE_KILL_GRACE_MS",
             "AGENT_FORGE_WRITE_RETRY_MS", "AGENT_FORGE_JSON", "SSL_CERT_FILE", "SSL_CERT_DIR", "EDITOR", "VISUAL"]


@pytest.mark.parametrize("name", ENV_NAMES)
def test_a_hostile_environment_value_is_quoted_on_one_line(name, agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "answered"}] * 3)
    done = run(["-p", "hi"], {**agent_env, name: f"v{HOSTILE}"}, tmp_path)
    one_line_messages(done.stderr)


@pytest.mark.parametrize("args", [["--export", f"v{HOSTILE}"], ["--list-models", f"v{HOSTILE}"],
                                  ["-p", f"@no{HOSTILE}", "hi"], ["-p", f"@nosuch{HOSTILE}/x", "hi"],
                                  ["--session", f"zz{HOSTILE}", "-p", "hi"], ["--fork", f"zz{HOSTILE}", "-p", "hi"],
                                  ["--session-dir", str(f"d{HOSTILE}"), "--list-sessions"]])
def test_hostile_arguments_are_quoted_on_one_line(args, agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "answered"}] * 3)
    done = run(args, agent_env, tmp_path)
    one_line_messages(done.stderr)


def test_a_missing_file_argument_is_named_with_its_escapes(agent_env, fake_llm, tmp_path):
    done = run(["-p", f"@no{HOSTILE}", "hi"], agent_env, tmp_path)
    (line,) = one_line_messages(done.stderr)
    assert done.returncode != 0 and f"no{SHOWN}" in line, line


@pytest.mark.parametrize("flag", ["--session", "--fork"])
def test_an_unknown_session_reference_is_named_with_its_escapes(flag, agent_env, fake_llm, tmp_path):
    done = run([flag, HOSTILE, "-p", "hi"], agent_env, tmp_path)
    (line,) = one_line_messages(done.stderr)
    assert done.returncode != 0 and SHOWN in line, line


def test_an_unknown_export_reference_is_named_with_its_escapes(agent_env, tmp_path):
    done = run(["--export", HOSTILE], agent_env, tmp_path)
    (line,) = one_line_messages(done.stderr)
    assert done.returncode != 0 and SHOWN in line, line


@pytest.mark.real_process  # stdout and stderr are the process's own descriptors
@pytest.mark.parametrize("mode", [[], ["--mode", "json"]])
def test_a_refused_call_on_a_hostile_path_is_one_warning_line(mode, agent_env, fake_llm, tmp_path):
    calls = [{"name": "write", "arguments": {"path": f"evil{HOSTILE}.txt", "content": "x"}},
             {"name": "edit", "arguments": {"path": "a\tb\nc", "edits": [{"oldText": "a", "newText": "b"}]}}]
    fake_llm.set_script([{"tool_calls": calls}, {"text": "refused"}])
    done = subprocess.run([*CLI, "--approvals", "ask", *mode, "-p", "go"], cwd=tmp_path,
                          env={**os.environ, **agent_env}, capture_output=True, text=True, timeout=60)
    lines = [line for line in one_line_messages(done.stderr) if "not run:" in line]
    assert [line.split(": it needs")[0] for line in lines] == [
        f"Warning: not run: write evil{SHOWN}.txt", "Warning: not run: edit a\\tb\\nc"], lines


async def test_the_approval_question_title_is_one_line(agent_env, fake_llm, tmp_path):
    path = f"evil{HOSTILE}.txt"
    fake_llm.set_script([{"tool_calls": [{"name": "write", "arguments": {"path": path, "content": "x"}}]},
                         {"text": "ok"}])
    async with await RpcClient.start(["--approvals", "ask"], cwd=str(tmp_path), env=agent_env) as client:
        await client.send({"type": "prompt", "message": "go"})
        while (asked := await client.next_event())["type"] != "extension_ui_request":
            pass
        client.write_raw(json.dumps({"type": "extension_ui_response", "id": asked["id"],
                                     "value": "Reject"}).encode() + b"\n")
        await client.wait_for("agent_settled")
    assert asked["title"] == f"Allow write evil{SHOWN}.txt?" and asked["args"]["path"] == path


async def test_an_unknown_tool_name_is_one_line_in_the_models_tool_result(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"tool_calls": [{"name": "ev\nil\x1b]0;PWN3\x07", "arguments": {}}]}, {"text": "ok"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("go")
    (sent,) = [m["content"] for m in fake_llm.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert "ev\\nil\\x1b]0;PWN3\\x07" in str(sent) and not CONTROL.search(str(sent)), sent


@needs_tmux
def test_the_terminal_ui_names_a_hostile_tool_on_one_line(terminal, fake_llm):
    fake_llm.set_script([{"tool_calls": [{"name": "ev\nil\x1b]0;PWN3\x07", "arguments": {"a": 1}}]},
                         {"text": "all done"}])
    term = terminal()
    term.type("go")
    term.press("Enter")
    term.wait_for("all done")
    lines = term.scrollback().splitlines()
    shown = [line for line in lines if "ev\\nil\\x1b]0;PWN3\\x07" in line]
    assert len(shown) >= 2 and not [line for line in lines if line.lstrip().startswith("il")], lines
    assert any("Tool ev\\nil\\x1b]0;PWN3\\x07 not found" in line for line in shown), shown


@pytest.mark.parametrize("args", [["-p", "hi"], ["--list-models"]])
def test_the_no_model_hint_names_a_hostile_agent_dir_on_one_line(args, agent_env, tmp_path):
    agent_dir = tmp_path / f"d{HOSTILE}"
    agent_dir.mkdir()
    done = run(args, {**agent_env, "AGENT_FORGE_DIR": str(agent_dir)}, tmp_path)
    assert f"{tmp_path}/d{SHOWN}/auth.json" in done.stderr + done.stdout
    one_line_messages(done.stderr)
    assert not CONTROL.search(done.stdout.replace("\n", ""))


def test_a_hostile_model_id_and_name_are_listed_on_one_row(agent_env_factory, tmp_path):
    env = agent_env_factory(model_id=f"ev{HOSTILE}")
    done = run(["--list-models"], env, tmp_path)
    assert done.stdout == f"fake/ev{SHOWN}\tFake ev{SHOWN}\n", done.stdout


@needs_tmux
def test_the_footer_shows_a_hostile_model_id_on_its_one_line(agent_env_factory, tmp_path):
    term = TmuxTerminal(agent_env_factory(model_id=f"ev{HOSTILE}"), tmp_path, columns=160)
    try:
        rows = term.wait_for(f"(fake) ev{SHOWN} • ").splitlines()  # the terminal's own READY is another id's
    finally:
        term.close()
    assert not [row for row in rows if row.lstrip().startswith("Warning: forged")], rows
