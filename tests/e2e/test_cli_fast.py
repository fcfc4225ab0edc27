"""`cli_fast`: the spawn lines it parses without argparse give the namespace argparse gives; every other line
(errors, `--help`, abbreviations, prompt words) is left to argparse."""

from __future__ import annotations

import pytest

from agent_forge.cli_fast import DEFAULTS, fast_parse, parse_command_line
from agent_forge.cli_parser import parse_command_line as parse_with_argparse

TAKEN = [
    [],
    ["--mode", "rpc"],
    ["--mode", "rpc", "--no-session"],
    ["--no-session", "--mode", "json"],
    ["--mode", "acp", "--no-themes", "--verbose", "--offline", "--no-mcp", "--no-plugins"],
    ["--mode", "rpc", "--session", "/tmp/s.jsonl", "--model", "anthropic/claude:high", "--provider", "anthropic"],
    ["--mode", "rpc", "--thinking", "low", "--session-dir", "sessions dir", "--approvals", "read-only"],
    ["--mode", "rpc", "--model", " spaced "],
]
LEFT = [
    ["--help"], ["-h"], ["--version"], ["hello"], ["--mode", "rpc", "hi"], ["--mode", "rpc", "--"],
    ["--mode", "bogus"], ["--mode"], ["--mode=rpc"], ["--mod", "rpc"], ["--no-sess"], ["--model", ""],
    ["--model", "  "], ["--model", "-x"], ["--mode", "rpc", "--mode", "json"], ["--no-session", "--no-session"],
    ["--approvals", "none"], ["-p", "hi"], ["--session"], ["--mode", "rpc", "-e", "plugin.py"],
]


def test_the_defaults_are_argparses():
    assert DEFAULTS == vars(parse_with_argparse([]))


@pytest.mark.parametrize("argv", TAKEN, ids=" ".join)
def test_a_taken_line_gives_argparses_namespace(argv):
    fast = fast_parse(argv)
    assert fast is not None
    assert vars(fast) == vars(parse_with_argparse(argv))


@pytest.mark.parametrize("argv", LEFT, ids=" ".join)
def test_any_other_line_is_left_to_argparse(argv):
    assert fast_parse(argv) is None


def test_lists_are_not_shared_between_parses():
    first = parse_command_line(["--mode", "rpc"])
    first.plugin.append("x")
    assert parse_command_line(["--mode", "rpc"]).plugin == []


def test_an_error_line_still_gets_argparses_message(capsys):
    with pytest.raises(SystemExit) as stopped:
        parse_command_line(["--mode", "bogus"])
    assert stopped.value.code == 2
    assert "invalid choice: 'bogus'" in capsys.readouterr().err
