"""End to end: the interactive mode (the default in a terminal) in a real terminal (tmux) against the loopback
model server, reading the screen as a user would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.tmux_terminal import TmuxTerminal, tmux_available

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed (.ci/run installs it)")

READY = "fake-model •"  # the footer: the UI is up


@pytest.fixture
def terminal(agent_env, tmp_path):
    """A function starting the CLI in tmux in `tmp_path/work`; every terminal is closed at teardown."""
    work = tmp_path / "work"
    work.mkdir()
    opened: list[TmuxTerminal] = []

    def start(*args: str, columns: int = 100, rows: int = 30) -> TmuxTerminal:
        term = TmuxTerminal(agent_env, work, *args, columns=columns, rows=rows)
        opened.append(term)
        term.wait_for(READY)
        return term

    start.work = work  # type: ignore[attr-defined]
    yield start
    for term in opened:
        term.close()


def user_texts(request) -> list[str]:
    texts = []
    for message in request["body"]["messages"]:
        if message["role"] == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return texts


def test_multi_turn_task_shows_write_and_bash_and_does_them(terminal, fake_llm):
    fake_llm.set_script([
        {"text": "Creating the file.", "tool_calls": [{"name": "write", "arguments": {
            "path": "hello.txt", "content": "hello world\nsecond line\n"}}]},
        {"text": "Checking it.", "tool_calls": [{"name": "bash", "arguments": {"command": "wc -l hello.txt"}}]},
        {"text": "## Done\n\nThe file `hello.txt` has **two** lines."},
        {"text": "Second answer here."},
    ])
    term = terminal()
    term.type("make hello.txt")
    term.press("Enter")
    screen = term.wait_for("has two lines")
    assert "write hello.txt" in screen and "+hello world" in screen
    assert "$ wc -l hello.txt" in screen and "2 hello.txt" in screen and "exit 0" in screen
    assert (terminal.work / "hello.txt").read_text() == "hello world\nsecond line\n"
    term.type("and again")
    term.press("Enter")
    term.wait_for("Second answer here.")
    assert user_texts(fake_llm.requests[3])[-1] == "and again"
    term.press("C-d")
    assert term.exit_code() == 0
    history = term.scrollback()
    for text in ("make hello.txt", "Creating the file.", "$ wc -l hello.txt", "Second answer here.",
                 "agent-forge --session "):
        assert text in history


def test_escape_aborts_a_hanging_stream_and_the_next_prompt_is_answered(terminal, fake_llm):
    fake_llm.set_script([{"text": "partial words that hang here", "hang_after": 4},
                         {"text": "The second answer."}])
    term = terminal()
    term.type("start")
    term.press("Enter")
    term.wait_for("partial")
    term.press("Escape")
    term.wait_for("aborted")
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the spinner to stop")
    term.type("next")
    term.press("Enter")
    term.wait_for("The second answer.")
    assert user_texts(fake_llm.requests[1])[-1] == "next"


def test_enter_while_streaming_steers_the_next_request(terminal, fake_llm):
    fake_llm.set_script([{"text": "working on it now", "hang_after": 4}, {"text": "Steered answer."}])
    term = terminal()
    term.type("first task")
    term.press("Enter")
    term.wait_for("working")
    term.type("use tabs instead")
    term.press("Enter")
    term.wait_for("steer: use tabs instead")
    fake_llm.release_hangs()
    term.wait_for("Steered answer.")
    assert "use tabs instead" in user_texts(fake_llm.requests[1])


def test_alt_enter_queues_a_follow_up(terminal, fake_llm):
    fake_llm.set_script([{"text": "busy with the first", "hang_after": 4}, {"text": "Follow-up answer."}])
    term = terminal()
    term.type("first task")
    term.press("Enter")
    term.wait_for("busy")
    term.type("then write docs")
    term.press("M-Enter")
    term.wait_for("follow-up: then write docs")
    fake_llm.release_hangs()
    term.wait_for("Follow-up answer.")
    assert user_texts(fake_llm.requests[1])[-1] == "then write docs"


def test_a_40_column_terminal_wraps_and_keeps_the_footer(terminal, fake_llm):
    long = "This answer is much longer than forty columns so it has to wrap over several lines to be read."
    fake_llm.set_script([{"text": long}])
    term = terminal(columns=40, rows=20)
    term.type("hi")
    term.press("Enter")
    screen = term.wait_for("be read.")
    assert "This answer is much longer" in screen
    assert all(len(line) <= 40 for line in screen.splitlines())
    assert "fake-model" in screen  # the footer's model, fitted into 40 columns
    term.press("C-d")
    assert term.exit_code() == 0


def test_escape_sequences_in_an_answer_are_not_interpreted(terminal, fake_llm):
    hostile = "\x1b]0;PWNED\x07safe \x1b[2J\x1b[31mred\x1b[0m \x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ [bold]x[/bold]"
    fake_llm.set_script([{"text": hostile}])
    term = terminal()
    title = term.title()
    term.type("hi")
    term.press("Enter")
    screen = term.wait_for("[bold]x[/bold]")  # rich markup shown as text
    assert "safe" in screen and "red" in screen and "link" in screen
    assert term.title() == title and "PWNED" not in term.title()
    assert "agent-forge v" in term.scrollback()  # no "clear screen" reached the terminal


def test_bang_runs_a_shell_command(terminal, fake_llm):
    term = terminal()
    (terminal.work / "marker-file.txt").write_text("x")
    term.type("!ls")
    term.press("Enter")
    screen = term.wait_for("exit 0")
    assert "$ ls" in screen and "marker-file.txt" in screen
    assert fake_llm.requests == []  # a shell command is no prompt
