"""End to end: a JSON syntax error reads as a sentence wherever it is reported. Python's messages for a control
character and an unterminated string end in a dangling `at` (it appends the position itself); each report gives
the position its own way, so the dangling words go (`json_wire.reason`; found with a raw NUL in mcp.json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.ai import json_wire


@pytest.mark.parametrize("text, expected", [('"a\x00b"', "Invalid control character"),
                                            ('"abc', "Unterminated string"),
                                            ("[1 2]", "Expecting ',' delimiter")])
def test_the_reason_leaves_out_the_words_python_leaves_for_its_position(text, expected):
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    assert json_wire.reason(caught.value) == expected


def run(env, cwd, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, env=env, input=stdin,
                          capture_output=True, timeout=60)


def test_a_raw_nul_in_mcp_json_is_named_in_one_sentence(agent_env, tmp_path):
    text = b'{"mcpServers": {"a": {"command": "x\x00y"}}}'
    (Path(agent_env["AGENT_FORGE_DIR"]) / "mcp.json").write_bytes(text)
    done = run(agent_env, tmp_path, "mcp", "list")
    assert done.returncode == 1
    column = text.index(b"\x00") + 1
    assert (f"mcp.json: invalid JSON at line 1 column {column}: Invalid control character; its MCP servers are not "
            "used") in done.stderr.decode(), done.stderr


def test_rpc_parse_errors_name_the_fault_and_its_place(agent_env, tmp_path):
    lines = b'{"id": "a", "type": "get_state", "x": "a\x01b"}\n{"id": "b", "type": "get_state", "x": "abc\n'
    done = run(agent_env, tmp_path, "--mode", "rpc", "--no-session", stdin=lines)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(reply["id"], reply["error"]) for reply in replies] == [
        ("a", "Failed to parse command: Invalid control character (line 1, column 41)"),
        ("b", "Failed to parse command: Unterminated string (line 1, column 39)")]


def test_the_model_reads_why_its_cut_off_tool_arguments_failed_in_one_sentence(agent_env, fake_llm, tmp_path):
    """The most common case the model meets: arguments cut off mid-string (the reviewer of round 31)."""
    raw = '{"path": "a.py", "content": "def f('
    fake_llm.set_script([{"tool_calls": [{"name": "write", "arguments": raw}]}, {"text": "sorry"}])
    done = run(agent_env, tmp_path, "-p", "--no-session", "write it")
    assert done.returncode == 0, done.stderr
    [result] = [m for m in fake_llm.requests[1]["body"]["messages"] if m["role"] == "tool"]
    content = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    column = raw.index('"def') + 1
    assert f"Unterminated string at line 1 column {column}\n\nReceived arguments:\n{raw}" in content, content


def test_a_trailing_comma_is_named_alike_in_an_rpc_line_and_a_config_file(agent_env, tmp_path):
    """An RPC line said `Expecting property name enclosed in double quotes` where models.json said `trailing
    comma` for the same slip (round 34)."""
    done = run(agent_env, tmp_path, "--mode", "rpc", "--no-session", stdin=b'{"id": "t", "type": "get_state",}\n')
    [reply] = [json.loads(line) for line in done.stdout.splitlines()]
    assert reply["error"] == "Failed to parse command: trailing comma before '}' (JSON allows none) (line 1, column 32)"


def test_a_theme_file_and_a_deeply_nested_rpc_line_name_a_trailing_comma_too(agent_env, tmp_path):
    """Two places still said `Expecting property name enclosed in double quotes` (the reviewer of round 34)."""
    from agent_forge.modes.interactive.theme_files import ThemeError, load_theme_file

    theme = tmp_path / "mine.json"
    theme.write_text('{\n  "name": "mine",\n  "colors": {"user": "red",}\n}\n')
    with pytest.raises(ThemeError, match=r"mine\.json:3: invalid JSON \(trailing comma before '\}' \(JSON allows "):
        load_theme_file(theme)
    deep = b'{"id": "d", "type": "get_state", "x": ' + b"[" * 3000 + b"]" * 3000 + b', "y": {"a": 1,}}\n'
    done = run(agent_env, tmp_path, "--mode", "rpc", "--no-session", stdin=deep)
    [reply] = [json.loads(line) for line in done.stdout.splitlines()]
    assert reply["id"] == "d" and reply["error"].startswith(
        "Failed to parse command: trailing comma before '}' (JSON allows none) (line 1, column "), reply


def test_a_resume_argument_gives_the_shell_the_real_path_and_the_terminal_no_raw_control():
    from agent_forge.coding.persistence import resume_argument

    assert resume_argument(Path("/tmp/a b/x.jsonl")) == "'/tmp/a b/x.jsonl'"
    assert resume_argument(Path("/tmp/zw\u200bj/it's\x1b.jsonl")) == "$'/tmp/zw\\u200bj/it\\'s\\u001b.jsonl'"
