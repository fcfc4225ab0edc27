"""End to end: a user-given path the OS refuses to examine (a component over 255 bytes: `File name too long`)
gets the clear message other unusable paths get, naming the path and the OS reason: one `agent-forge: ...` line
and exit 1 for a session reference, a warning and a skip for a plugin, skill, prompt template or agent dir, a
plain error in RPC and the terminal UI. Never a traceback nor `Internal error: OSError`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient
from support.tui import needs_tmux

LONG = "x" * 300
"""One path component over NAME_MAX (255 bytes on every Linux file system): `stat` fails with ENAMETOOLONG."""


def run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=60)


def settings_naming(env: dict[str, str], key: str) -> dict[str, str]:
    path = Path(env["AGENT_FORGE_DIR"]) / "settings.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), key: [LONG]}))
    return env


def agent_dir_under(env: dict[str, str], root: Path) -> dict[str, str]:
    return {**env, "AGENT_FORGE_DIR": str(root / LONG)}


REFUSED = [  # (flags, expected exit code, the stderr line expected, naming the long path)
    (["--session", LONG, "-p", "hi"], 1, f"agent-forge: No session found matching '{LONG}'"),
    (["--fork", LONG, "-p", "hi"], 1, f"agent-forge: No session found matching '{LONG}'"),
    (["--export", LONG], 1, f"agent-forge: No session found matching '{LONG}'"),
    (["--session", LONG, "--mode", "rpc"], 1, f"agent-forge: No session found matching '{LONG}'"),
    (["--session", f"{LONG}.jsonl", "-p", "hi"], 1, f"{LONG}.jsonl: File name too long"),
]


@pytest.mark.parametrize(("flags", "code", "line"), REFUSED, ids=lambda value: str(value)[:24])
def test_a_session_reference_too_long_for_a_file_name_is_one_error_line(agent_env, tmp_path, flags, code, line):
    result = run(agent_env, tmp_path, *flags)
    stderr = result.stderr.decode()
    assert result.returncode == code and "Traceback" not in stderr, stderr
    assert len(stderr.splitlines()) == 1 and stderr.startswith("agent-forge: ") and line in stderr, stderr


SKIPPED = [  # (how the long path is given, the warning naming it): the run goes on without it
    ("-e", lambda env, root: env, ["-e", LONG], f"Plugin not loaded: {LONG}"),
    ("--skill", lambda env, root: env, ["--skill", LONG], f"{LONG}: skill path cannot be examined: File name too long"),
    ("--prompt-template", lambda env, root: env, ["--prompt-template", LONG],
     f"{LONG}: prompt template path cannot be examined: File name too long"),
    ("settings plugins", lambda env, root: settings_naming(env, "plugins"), [], f"Plugin not loaded: {LONG}"),
    ("settings skills", lambda env, root: settings_naming(env, "skills"), [],
     f"{LONG}: skill path cannot be examined: File name too long"),
    ("settings prompts", lambda env, root: settings_naming(env, "prompts"), [],
     f"{LONG}: prompt template path cannot be examined: File name too long"),
]


@pytest.mark.parametrize(("how", "setup", "flags", "warning"), SKIPPED, ids=[row[0] for row in SKIPPED])
def test_a_resource_path_too_long_for_a_file_name_is_warned_about_and_skipped(fake_llm, agent_env, tmp_path, how,
                                                                             setup, flags, warning):
    fake_llm.set_script([{"text": "answered anyway"}])
    result = run(setup(agent_env, tmp_path), tmp_path, *flags, "-p", "hi")
    stderr = result.stderr.decode()
    assert result.returncode == 0 and b"answered anyway" in result.stdout, stderr
    assert "Traceback" not in stderr and warning in stderr, stderr


def test_an_agent_dir_too_long_for_a_file_name_is_warned_about_in_rpc_mode(agent_env, tmp_path):
    result = run(agent_dir_under(agent_env, tmp_path), tmp_path, "--mode", "rpc")
    stderr = result.stderr.decode()
    assert result.returncode == 0 and "Traceback" not in stderr, stderr
    assert f"{LONG}/mcp.json: cannot read: File name too long" in stderr, stderr


async def test_rpc_path_fields_too_long_for_a_file_name_get_plain_errors(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "hi"}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("hello")
        replies = [await client.send(command) for command in (
            {"type": "switch_session", "sessionPath": LONG},
            {"type": "switch_session", "sessionPath": f"{tmp_path}/{LONG}/s.jsonl"},
            {"type": "export_html", "outputPath": LONG},
            {"type": "export_html", "outputPath": f"{tmp_path}/{LONG}/page.html"})]
    errors = [reply.get("error") or "" for reply in replies]
    assert all(reply["success"] is False for reply in replies), replies
    assert not [error for error in errors if "Internal error" in error or "File name too long" not in error], errors
    assert errors[0].startswith("cannot read session file ") and errors[2].startswith("Cannot write "), errors


@needs_tmux
def test_slash_export_to_a_name_too_long_says_it_cannot_write_on_one_line(terminal, fake_llm):
    fake_llm.set_script([{"text": "Exported soon."}])
    term = terminal(columns=400)
    term.type("hello")
    term.press("Enter")
    term.wait_for("Exported soon.")
    term.type(f"/export {LONG}")
    term.press("Enter")
    screen = term.wait_for("Cannot write")
    joined = " ".join(screen.split())  # the message wraps at word boundaries (the path alone fits a line)
    assert "internal error" not in screen.lower() and "OSError" not in screen, screen
    assert f"Cannot write {terminal.work}/{LONG}: File name too long" in joined, screen
