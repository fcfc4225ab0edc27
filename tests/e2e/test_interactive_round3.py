"""End to end: the third round of the TUI tester's findings (issue 12) in a real terminal (tmux) against the
loopback model server: Escape then a quick letter still aborts; menus open on the current value; /reload
applies a changed theme file; a FIFO or /dev/zero theme gives one warning; the labelled tree filter says why it
is empty."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from support.tui import ask, choose, flat, needs_tmux, user_texts

from .test_interactive_features import colours, set_setting, write_theme

pytestmark = needs_tmux

PERSON_GAP_S = 0.15
"""The shortest gap a person leaves between Escape and the next key: the input under test, not a wait."""


def test_escape_then_a_quick_letter_aborts_and_keeps_the_letter(terminal, fake_llm):
    fake_llm.set_script([{"text": "partial words that hang here", "hang_after": 4}, {"text": "Second."}])
    term = terminal()
    term.type("start")
    term.press("Enter")
    term.wait_for("partial")
    term.press("Escape")
    time.sleep(PERSON_GAP_S)
    term.type("b")  # Alt+b is an editor binding: at a 0.3 s Escape wait this was Alt+b and no abort
    term.wait_for("aborted")
    term.type("ye")
    term.wait_for("› bye")
    term.press("Enter")
    term.wait_for("Second.")
    assert user_texts(fake_llm.requests[1])[-1] == "bye"


def test_alt_b_from_the_terminal_still_moves_a_word_back(terminal, fake_llm):
    term = terminal()
    term.type("one two")
    term.press("M-b")
    term.type("X")
    term.wait_for("› one Xtwo")


def test_settings_value_menus_open_on_the_current_value(terminal, fake_llm, agent_env):
    set_setting(agent_env, "theme", "light")
    set_setting(agent_env, "steeringMode", "all")
    term = terminal()
    for key, now in (("theme", "light"), ("steeringMode", "all"), ("hideThinkingBlock", "true")):
        term.type("/settings")
        term.press("Enter")
        choose(term, "Change which setting?", key, f"{key} (now: {now})")
        term.wait_for(f"→ {now}")  # it opened on "dark" / the first value
        term.press("Escape")
        term.wait_until(lambda: f"{key}:" not in term.screen(), "the menu to close")


def test_approvals_menu_opens_on_the_current_policy(terminal, fake_llm):
    term = terminal("--approvals", "read-only")
    term.type("/approvals")
    term.press("Enter")
    term.wait_for("→ read-only")


def test_reload_applies_a_changed_theme_file(terminal, fake_llm, agent_env):
    write_theme(agent_env, "mine", json.dumps({"colors": {"prompt": "ansigreen"}}))
    set_setting(agent_env, "theme", "mine")
    term = terminal()
    term.wait_until(lambda: re.search(r"\x1b\[[0-9;]*32[0-9;]*m›", colours(term)) is not None, "a green prompt")
    write_theme(agent_env, "mine", json.dumps({"colors": {"prompt": "ansired"}}))
    term.type("/reload")
    term.press("Enter")
    term.wait_for("reloaded")
    term.wait_until(lambda: re.search(r"\x1b\[[0-9;]*31[0-9;]*m›", colours(term)) is not None, "a red prompt")


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_theme_that_is_not_a_regular_file_gives_one_warning(terminal, fake_llm, agent_env, kind):
    themes = Path(agent_env["AGENT_FORGE_DIR"]) / "themes"
    themes.mkdir(exist_ok=True)
    if kind == "fifo":
        os.mkfifo(themes / "odd.json")
    else:
        (themes / "odd.json").symlink_to("/dev/zero")
    set_setting(agent_env, "theme", "odd")
    term = terminal()  # a FIFO would block the start, /dev/zero read without end
    what = "a FIFO (named pipe)" if kind == "fifo" else "a character device"  # it said "not a regular file" only
    term.wait_until(lambda: one_odd_warning(term.screen(), what), "one whole warning about odd.json")
    term.type("/settings")
    term.press("Enter")
    choose(term, "Change which setting?", "theme", "theme (now: odd)")
    term.wait_for("→ dark")
    assert "odd" not in term.screen().split("theme:")[1]  # not offered as a theme


def one_odd_warning(screen: str, kind: str) -> bool:
    """`screen` says once that odd.json is `kind` (`a FIFO (named pipe)`), not a regular file, and the dark theme
    is used. Its words are read joined (a long path wraps between them); the count of `odd` on the rows joined
    as they are: the terminal wraps the path at its edge, which can fall inside `odd.json` (`od` + `d.json`)."""
    words, rows = " ".join(screen.split()), "".join(screen.splitlines())
    return ("using the dark theme" in words and f"is {kind}, not a regular file" in words and rows.count("odd") == 2
            and "does not exist" not in words)


def test_labelled_filter_without_labels_says_so(terminal, fake_llm):
    fake_llm.set_script([{"text": "Answer one."}])
    term = terminal()
    ask(term, "question one", "Answer one.")
    term.type("/tree")
    term.press("Enter")
    term.wait_for("Session tree")
    term.press("Tab", "Tab")
    screen = term.wait_for("labelled only")
    term.wait_for("no entry has a label yet")
    assert "backspace widens" not in term.screen(), screen


def test_tool_time_leaves_out_the_approval_wait_and_a_rejected_call_says_rejected(terminal, fake_llm, tmp_path):
    fake_llm.set_script([
        {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 0.3; echo slept"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo never"}}]},
        {"text": "Done both."},
    ])
    term = terminal("--approvals", "ask")
    term.type("run two")
    term.press("Enter")
    term.wait_for("Allow bash: sleep 0.3; echo slept?")
    asked = time.monotonic()
    term.wait_until(lambda: time.monotonic() - asked > 1.5, "the user to think")  # the wait under test
    term.press("Enter")
    term.wait_for("Allow bash: echo never?")
    term.wait_until(lambda: time.monotonic() - asked > 3.0, "the user to think again")
    term.type("reject")
    term.press("Enter")
    screen = " ".join(term.wait_for("Done both.").split())
    seconds = [float(s) for s in re.findall(r"exit 0 · ([0-9.]+) s", screen)]
    assert len(seconds) == 1 and 0.3 <= seconds[0] < 1.5, screen  # the sleep, not the 1.5 s question
    assert "$ echo never rejected Done both." in screen  # not the model-facing rejection text
    assert "The user rejected" not in screen, screen
    assert "failed ·" not in screen, screen


def test_an_enter_meant_for_the_draft_does_not_answer_a_question_that_just_opened(terminal, fake_llm):
    fake_llm.set_script([
        {"text": "thinking about it", "hang_after": 3, "tool_calls": [
            {"name": "bash", "arguments": {"command": "echo ran"}}]},
        {"text": "All done."},
    ])
    term = terminal("--approvals", "ask")
    term.type("go")
    term.press("Enter")
    term.wait_for("thinking")
    fake_llm.wait_for(lambda: fake_llm.requests[0]["hanging"])  # the spinner says "thinking…" before the stream
    term.type("my draft words")
    term.wait_for("› my draft words")
    fake_llm.release_hangs()
    term.wait_for("Allow bash: echo ran?")
    term.type("!")  # still typing the message: goes back to it, it filters nothing
    term.press("Enter")  # within 0.3 s of the question: meant for the draft, ignored
    shown = time.monotonic()
    term.wait_until(lambda: time.monotonic() - shown > 0.5, "the person to read the question")  # the input
    assert "Allow bash: echo ran?" in term.screen() and "→ Allow once" in term.screen()
    term.press("Enter")  # a deliberate answer: Allow once
    term.wait_for("All done.")
    term.wait_for("› my draft words!")  # the draft is back, with its end, not sent
    assert all("my draft words" not in text for request in fake_llm.requests for text in user_texts(request))


def test_tables_and_code_blocks_have_one_blank_line_around_them(terminal, fake_llm):
    fake_llm.set_script([{"text": "Intro para.\n\n| col | val |\n|---|---|\n| a | 1 |\n\nAfter table.\n\n"
                                  "```python\nx = 1\n```\n\nAfter code."}])
    term = terminal()
    ask(term, "show", "After code.")
    lines = [line.strip() for line in term.screen().split("\n")]
    start = lines.index("Intro para.")
    assert lines[start:start + 11] == ["Intro para.", "", "col  val", "────────", "a    1", "", "After table.",
                                       "", "x = 1", "", "After code."], lines[start:start + 11]


def test_tree_during_a_run_is_refused_up_front_and_the_stream_stays(terminal, fake_llm):
    fake_llm.set_script([{"text": "Answer one."}, {"text": "streaming words that hang", "hang_after": 3},
                         {"text": "Answer three."}])
    term = terminal()
    ask(term, "question one", "Answer one.")
    term.type("question two")
    term.press("Enter")
    term.wait_for("streaming")
    term.type("/tree")
    term.press("Enter")
    term.wait_until(lambda: all(part in flat(term) for part in (
        "/tree opens once it has finished", "streaming", "esc to interrupt")), "the refusal, the run going on")
    assert "Session tree" not in flat(term)
    fake_llm.release_hangs()
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    term.type("/tree")
    term.press("Enter")
    term.wait_for("Session tree")
