"""End to end: the fifth round of the TUI tester's findings (issue 12) in a real terminal (tmux) against the
loopback model server: a huge paste full of forged end-of-paste marks and escape sequences stays one inert
paste (nothing sent without Enter, nothing lost, no exception), counted in lines as `wc -l` counts them; joined
emoji show joined; `/session` counts the branch and the file as `/resume` does; a retry names the server's
wait and a cancel says so once; a call waiting for approval shows no timer; a narrow footer drops whole
segments; Tab takes an `@` completion and closes the menu."""

from __future__ import annotations

import re
from pathlib import Path

from agent_forge.modes.interactive.paste import pasted_text
from support.tui import needs_tmux, user_texts

pytestmark = needs_tmux


def stray_log(term) -> str:
    """What the UI wrote to its stray-output log (named on screen at exit), "" when nothing."""
    term.press("C-d")
    term.exit_code()
    history = term.scrollback()
    if "written while the UI ran:" not in history:
        return ""
    path = "".join(history.split("written while the UI ran:")[1].split("Resume this")[0].split())
    return Path(path).read_text()


def test_a_huge_paste_full_of_forged_end_marks_stays_one_inert_paste(terminal, fake_llm, tmp_path,
                                                                     agent_env_factory):
    fake_llm.set_script([{"text": "Got it all."}])
    term = terminal(columns=40, rows=20, env=agent_env_factory(context_window=2_000_000))  # 1.4 MB fit in it
    pasted = "".join(f"line {n} with \x1b[31mred\x1b[0m and \x07bell and \x1b]0;PASTEPWN\x07 and \x1b[201~ fake end\n"
                     for n in range(20_000))
    source = tmp_path / "hostile.txt"
    source.write_text(pasted)
    term._tmux("load-buffer", "-b", "p1", str(source))
    term._tmux("paste-buffer", "-p", "-b", "p1", "-t", "t")
    term.wait_for("[paste #1: 20000 lines", deadline_s=60)
    assert fake_llm.requests == [] and "PASTEPWN" not in term.title()
    term.wait_until(lambda: "[paste #2" not in term.screen() and fake_llm.requests == [], "nothing more")
    term.press("Enter")
    term.wait_for("Got it all.", deadline_s=60)
    assert len(fake_llm.requests) == 1 and user_texts(fake_llm.requests[0])[-1] == pasted_text(pasted)
    assert "Traceback" not in (log := stray_log(term)) and "Error" not in log, log


def test_joined_emoji_show_as_emoji_and_a_hidden_joiner_stays_escaped(terminal, fake_llm):
    fake_llm.set_script([{"text": "Nice family."}])
    term = terminal()
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    term.type(f"a {family} and \u2764\ufe0f\u200d\U0001f525 but x\u200dy and \u202eevil")
    screen = term.wait_for("\\u202eevil")
    assert "\\u200d" in screen and screen.count("\\u200d") == 1, screen  # only the one between letters
    term.press("Enter")
    term.wait_for("Nice family.")
    assert "\\u200d\U0001f469" not in term.scrollback()  # the transcript shows the emoji joined too


def test_session_counts_the_branch_with_tool_results_and_the_file_as_resume_does(terminal, fake_llm):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
                         {"text": "Done once."}, {"text": "Done twice."}])
    term = terminal(columns=120)
    for prompt, answer in (("one", "Done once."), ("two", "Done twice.")):
        term.type(prompt)
        term.press("Enter")
        term.wait_for(answer)
        term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    term.type("!echo bang")  # a shell command is a message of the branch too: the parts add up (round 33)
    term.press("Enter")
    term.wait_until(lambda: term.screen().count("exit 0") == 2, "the command's end (the tool call's came first)")
    term.type("/session")
    term.press("Enter")
    term.wait_for_all("messages on this branch: 7 (2 user, 3 assistant with 1 tool call, 1 tool result, "
                      "1 shell command)", "whole file, all branches: 7 messages; tokens")
    term.press("C-d")
    term.exit_code()
    other = terminal(columns=120)
    other.type("/resume zzzz")  # an argument it would ignore is refused (round 36)
    other.press("Enter")
    other.wait_for("/resume takes no argument (zzzz is not used): it opens the list of this directory's sessions")
    other.type("/resume")
    other.press("Enter")
    assert "· 7 messages ·" in other.wait_for("→ one")


def test_a_retry_names_the_servers_wait_and_a_cancel_says_so_once(terminal, fake_llm, agent_env_factory):
    env = agent_env_factory(settings={"retry": {"maxRetries": 3, "baseDelayMs": 60_000}})
    fake_llm.set_script([{"status": 429, "headers": {"retry-after": "1"}}])
    term = terminal(env=env)
    term.type("go")
    term.press("Enter")
    # the notice, not the spinner's "retry 1/3": the spinner shows first, the printed notice a moment later
    term.wait_for("retrying in 60 s (the server asked for 1 s), retry 1/3: 429")
    term.press("Escape")
    screen = term.wait_for("retry cancelled (after 1 attempt)")  # the whole line: a row is written in parts
    assert screen.count("etry cancelled") == 1, screen


def test_a_call_waiting_for_approval_shows_no_timer_and_its_time_starts_at_the_answer(terminal, fake_llm):
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo start; sleep 30"}}]}])
    term = terminal("--approvals", "ask")
    term.type("go")
    term.press("Enter")
    screen = term.wait_for_all("Allow bash: echo start; sleep 30?", "$ echo start; sleep 30 (waiting for approval)")
    assert " s)" not in screen, screen
    term.press("Enter")  # Allow once
    running = re.compile(r"\$ echo start; sleep 30 \([0-5] s\)")  # running now, timed from the answer
    term.wait_until(lambda: running.search(shown := term.screen()) is not None and "waiting for approval" not in shown,
                    "the running line with its time (no longer waiting)")
    term.press("Escape")
    term.wait_for("stopped ·")


def test_a_narrow_footer_drops_whole_segments_and_keeps_the_exit_hint(terminal, fake_llm):
    fake_llm.set_script([{"text": "Hi."}])
    term = terminal(columns=40, rows=16)
    term.type("hello")
    term.press("Enter")
    term.wait_for("Hi.")
    term.press("C-c")  # the editor is empty: the footer says what a second Ctrl+C does
    screen = term.wait_for("press ctrl+c again to exit")
    footer = screen.rstrip().splitlines()[-2:]
    assert "…" not in "".join(footer), screen  # whole segments, no cut words
    assert footer[-1].strip() == "(fake) fake-model • medium", screen
    term.resize(30, 16)
    term.wait_until(lambda: "fake-model • medium" in term.screen().splitlines()[-1], "the narrower footer")
    if "press ctrl+c again to exit" not in term.screen():  # on a loaded machine its 2 s ran out meanwhile: the
        term.press("C-c")  # hint went with them, so this press is a first one again and brings it back
    term.wait_for("press ctrl+c again to exit")
    footer = term.screen().rstrip().splitlines()[-2:]
    assert "fake-model • medium" in footer[-1] and "…" not in "".join(footer), footer


def test_tab_takes_an_at_completion_and_closes_the_menu(terminal, fake_llm):
    fake_llm.set_script([{"text": "Read it."}])
    (terminal.work / "notes").mkdir()
    (terminal.work / "notes" / "release-plan.md").write_text("PLAN-CONTENT-5\n")
    (terminal.work / "other.txt").write_text("x\n")
    term = terminal()
    term.type("see @relpl")
    term.wait_for("notes/release-plan.md")  # the menu
    term.press("Tab")
    term.wait_for("› see @notes/release-plan.md")
    term.wait_until(lambda: term.screen().count("release-plan.md") == 1, "the menu to close")
    term.press("Enter")  # one Enter sends: the menu is closed
    term.wait_for("Read it.")
    assert "PLAN-CONTENT-5" in user_texts(fake_llm.requests[0])[-1]
