"""End to end: the interactive mode (the default in a terminal) in a real terminal (tmux) against the loopback
model server, reading the screen as a user would."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from support.tmux_terminal import TmuxTerminal
from support.tui import READY, needs_tmux, user_texts

pytestmark = needs_tmux


def test_multi_turn_task_shows_write_and_bash_and_does_them_and_a_restart_recalls_its_prompts(terminal, fake_llm):
    multi_turn_task_shows_write_and_bash_and_does_them(terminal, fake_llm)
    prompt_history_survives_a_restart(terminal)  # the prompts of the run that just ended


def multi_turn_task_shows_write_and_bash_and_does_them(terminal, fake_llm) -> None:
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
    term.wait_for_all("has two lines", "write hello.txt", "+hello world", "$ wc -l hello.txt", "2 hello.txt",
                      "exit 0")
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


def test_messages_typed_while_streaming_steer_queue_a_follow_up_or_come_back_with_alt_up(terminal, fake_llm):
    """Three ways a message typed during a run goes, on one agent (each step is named for its own; `seq` is the
    first request of its run)."""
    fake_llm.set_script([{"text": "working on it now", "hang_after": 4}, {"text": "Steered answer."},
                         {"text": "busy with the first", "hang_after": 4}, {"text": "Follow-up answer."},
                         {"text": "long running answer", "hang_after": 4}])
    term = terminal()
    enter_while_streaming_steers_the_next_request(term, fake_llm, seq=0)
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the steered run to end")
    alt_enter_queues_a_follow_up(term, fake_llm, seq=2)
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the follow-up's run to end")
    alt_up_takes_queued_messages_back_without_aborting(term, fake_llm, seq=4)


def enter_while_streaming_steers_the_next_request(term: TmuxTerminal, fake_llm, seq: int) -> None:
    term.type("first task")
    term.press("Enter")
    term.wait_for("working")
    term.type("use tabs instead")
    term.press("Enter")
    term.wait_for("steer: use tabs instead")
    fake_llm.release_hangs()
    term.wait_for("Steered answer.")
    assert "use tabs instead" in user_texts(fake_llm.requests[seq + 1])


def alt_enter_queues_a_follow_up(term: TmuxTerminal, fake_llm, seq: int) -> None:
    term.type("first task")
    term.press("Enter")
    term.wait_for("busy")
    term.type("then write docs")
    term.press("M-Enter")
    term.wait_for("follow-up: then write docs")
    fake_llm.release_hangs()
    term.wait_for("Follow-up answer.")
    assert user_texts(fake_llm.requests[seq + 1])[-1] == "then write docs"


def a_40_column_terminal_wraps_and_keeps_the_footer(term: TmuxTerminal) -> None:
    term.type("hi")
    term.press("Enter")
    screen = term.wait_for_all("be read.", "This answer is much longer", "fake-model")
    assert all(len(line) <= 40 for line in screen.splitlines())
    term.press("C-d")
    assert term.exit_code() == 0


def test_escape_sequences_in_an_answer_are_not_interpreted(terminal, fake_llm):
    hostile = ("\x1b]0;PWNED\x07safe \x1b[2J\x1b[31mred\x1b[0m \x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ "
               "[bold]x[/bold]")
    fake_llm.set_script([{"text": hostile}])
    term = terminal()
    title = term.title()
    term.type("hi")
    term.press("Enter")
    term.wait_for_all("[bold]x[/bold]", "safe", "red", "link")  # rich markup shown as text
    assert term.title() == title and "PWNED" not in term.title()
    assert "agent-forge v" in term.scrollback()  # no "clear screen" reached the terminal


def test_what_sends_nothing_shell_commands_refused_prompts_forged_pastes_and_ctrl_g(terminal, fake_llm, agent_env,
                                                                                     tmp_path):
    """Five editor behaviours that send nothing to the model, on one agent (each step is named for its own)."""
    agent_env["VISUAL"] = "sh -c '[ -e crash ] && kill -SEGV $$; echo \"and edited outside\" >> \"$1\"' sh"
    (terminal.work / "blob.bin").write_bytes(b"\x00\x01binary")
    term = terminal()
    bang_runs_a_shell_command(term, terminal.work, fake_llm)
    a_bare_bang_says_how_to_use_it_and_sends_nothing(term, fake_llm)
    clear_editor(term, "!")
    a_binary_attachment_is_refused_and_the_prompt_kept(term, fake_llm)
    clear_editor(term, "look at @blob.bin please")
    a_forged_end_of_paste_mark_cannot_run_a_command(term, terminal.work, fake_llm, tmp_path)
    ctrl_g_edits_the_prompt_in_the_external_editor(term)
    an_editor_killed_by_a_signal_is_said_so_and_the_prompt_kept(term, terminal.work)
    assert fake_llm.requests == []


def clear_editor(term: TmuxTerminal, text: str) -> None:
    """Ctrl+C on an editor holding `text`: a first press, which empties it (and does not arm the exit)."""
    term.press("C-c")
    term.wait_until(lambda: f"› {text}" not in term.screen(), f"the editor holding {text!r} to be cleared")


def bang_runs_a_shell_command(term: TmuxTerminal, work: Path, fake_llm) -> None:
    (work / "marker-file.txt").write_text("x")
    term.type("!ls")
    term.press("Enter")
    term.wait_for_all("exit 0", "$ ls", "marker-file.txt")
    assert fake_llm.requests == []  # a shell command is no prompt


def test_escape_gives_queued_messages_back_to_the_editor(terminal, fake_llm):
    fake_llm.set_script([{"text": "slow answer that hangs", "hang_after": 4}])
    term = terminal()
    term.type("start")
    term.press("Enter")
    term.wait_for("slow")
    term.type("queued thought")
    term.press("Enter")
    term.wait_for("steer: queued thought")
    term.press("Escape")
    term.wait_for("aborted")
    term.wait_until(lambda: "› queued thought" in (shown := term.screen()) and "steer: queued thought" not in shown,
                    "the queued message back in the editor and gone from the queue")
    assert len(fake_llm.requests) == 1  # the queued message was not sent


def test_ctrl_c_clears_then_exits_on_a_second_press(terminal, fake_llm):
    term = terminal()
    term.type("draft text")
    term.wait_for("› draft text")
    term.press("C-c")
    term.wait_until(lambda: "draft text" not in term.screen(), "the editor to be cleared")
    term.press("C-c")
    term.wait_for("press ctrl+c again to exit")
    if "press ctrl+c again to exit" not in term.screen():  # on a loaded machine its 2 s ran out meanwhile: the
        term.press("C-c")  # hint went with them, so this press is a first one again and brings it back
        term.wait_for("press ctrl+c again to exit")
    term.press("C-c")
    assert term.exit_code() == 0


def test_a_large_paste_is_collapsed_and_sent_whole(terminal, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Got the paste."}])
    term = terminal()
    pasted = "".join(f"pasted line {i}\n" for i in range(50))
    source = tmp_path / "paste.txt"
    source.write_text(pasted)
    term._tmux("load-buffer", str(source))
    term._tmux("paste-buffer", "-p", "-t", "t")  # -p: bracketed, as the terminal would send a paste
    term.wait_for("[paste #1: 50 lines")  # as `wc -l` counts them
    term.press("Enter")
    term.wait_for("Got the paste.")
    assert user_texts(fake_llm.requests[0])[-1] == pasted


def prompt_history_survives_a_restart(terminal) -> None:
    """A new run's Up brings back the last prompt of the run before it (`and again`)."""
    second = terminal()
    second.press("Up")
    second.wait_for("› and again")


def test_name_and_thinking_commands_show_in_the_footer(terminal, fake_llm):
    term = terminal()
    term.type("/name nightly review")
    term.press("Enter")
    term.wait_for("· nightly review")
    term.type("/thinking high")
    term.press("Enter")
    term.wait_for("fake-model • high")
    term.type("/session")
    term.press("Enter")
    term.wait_for("messages on this branch: 0 (0 user")


def test_compact_summarises_the_conversation(terminal, fake_llm, agent_env_factory):
    filler = " ".join(f"w{i}" for i in range(150))
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 60}})
    fake_llm.set_script([{"text": "First answer. " + filler}, {"text": "Second answer. " + filler},
                         {"text": "## Goal\nSummary of the talk."}])
    term = terminal(env=env)
    for prompt, answer in (("one " + filler, "First answer."), ("two " + filler, "Second answer.")):
        term.type(prompt)
        term.press("Enter")
        term.wait_for(answer)
        term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    term.type("/compact")
    term.press("Enter")
    term.wait_for("context compacted (manual")
    assert re.search(r"context compacted \(manual; [\d,]+ tokens before\)", term.screen()), term.screen()
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the spinner to stop")
    assert len(fake_llm.requests) == 3


def test_a_resize_while_streaming_rewraps(terminal, fake_llm):
    words = " ".join(f"word{i}" for i in range(40))
    fake_llm.set_script([{"text": words, "hang_after": 10}])
    term = terminal(columns=100)
    term.type("go")
    term.press("Enter")
    term.wait_for("word3")
    term.resize(50, 30)
    fake_llm.release_hangs()
    # a capture may fall between the terminal's reflow and the repaint, or between the width change's
    # clearing of the screen and its reprint: judge one capture at a time, and wait for one that is repainted
    term.wait_until(lambda: repainted_at(term.screen(), 50), "a repaint at 50 columns with the whole answer")


def repainted_at(screen: str, width: int) -> bool:
    """`screen` holds the whole answer and the footer, every line within `width`."""
    fits = all(len(line) <= width for line in screen.splitlines())
    return fits and "word39" in screen and "fake-model" in screen


def clean_scrollback(term: TmuxTerminal, width: int) -> bool:
    return clean_frame(term.scrollback(), width)


def clean_frame(history: str, width: int) -> bool:
    """`history` holds one frame: the two rules around the editor (the one above it carries a run's spinner
    before its line), every line within `width`."""
    lines = history.rstrip("\n").splitlines()
    return sum(line.endswith("────") for line in lines) == 2 and all(len(line) <= width for line in lines)


def test_a_resize_while_streaming_leaves_no_stale_frame_in_the_scrollback(terminal, fake_llm):
    words = " ".join(f"word{i}" for i in range(120))
    fake_llm.set_script([{"text": words, "hang_after": 60}])
    term = terminal(columns=100, rows=20)
    term.type("go")
    term.press("Enter")
    term.wait_for("word50")
    term.resize(40, 20)
    term.wait_until(lambda: clean_scrollback(term, 40), "a scrollback without stale frames")
    fake_llm.release_hangs()
    term.wait_for("word119")
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    term.resize(70, 20)
    # one capture judged whole: a second one could fall inside the width change's reprint
    term.wait_until(lambda: reprinted_once(term.scrollback(), 70), "one clean reprint of the conversation")


def reprinted_once(history: str, width: int) -> bool:
    """`history` is one clean frame at `width` holding the header, the prompt and the answer once each."""
    once = history.count("word0 ") == 1 and history.count(" go\n") == 1 and "agent-forge v" in history
    return once and clean_frame(history, width)


def test_a_drag_resize_while_tokens_stream_leaves_no_stale_frame(terminal, fake_llm):
    # Tokens keep redrawing while the window narrows step by step: a redraw often lands between a size change
    # and its SIGWINCH, the gap in which the new width used to go unnoticed (resize.py, `catch_up_resize`).
    words = " ".join(f"word{i}" for i in range(400))
    fake_llm.set_script([{"text": words, "delay_ms": 5}])
    term = terminal(columns=120, rows=20)
    term.type("go")
    term.press("Enter")
    term.wait_for("word20")
    for columns in range(110, 39, -10):
        term.resize(columns, 20)
    term.wait_for("word399", where=term.scrollback)
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    term.wait_until(lambda: clean_scrollback(term, 40), "a scrollback without stale frames")
    assert term.scrollback().count("word0 ") == 1


PLUGIN = '''
import os, sys

def setup(plugin):
    @plugin.command("noisy", description="prints, then notifies")
    async def noisy(args, ctx):
        print("STRAY PRINT FROM A PLUGIN")
        os.write(2, b"STRAY FD2 WRITE\\n")
        ctx.ui.notify("plugin says hi \\x1b]0;EVIL\\x07")
        ctx.ui.set_status("p", "plug-status")
'''


def test_plugin_commands_run_from_the_slash_menu_too_and_their_output_stays_off_the_screen(terminal, fake_llm,
                                                                                            tmp_path, agent_env):
    """Two behaviours of a plugin's command, on one agent: a run typed whole, then one through the menu."""
    plugin = tmp_path / "noisy.py"
    plugin.write_text(PLUGIN)
    term = terminal("-e", str(plugin))
    term.type("/noisy")
    term.press("Enter")
    screen = term.wait_for("plugin says hi")
    term.wait_for("plug-status")
    assert "STRAY" not in screen and "EVIL" not in term.title()
    slash_opens_a_filtered_menu_of_commands(term)
    term.press("C-d")
    assert term.exit_code() == 0
    history = term.scrollback()
    assert "STRAY" not in history and "what was written to stderr while the UI ran" in history
    [log] = Path(agent_env["TMPDIR"]).glob("agent-forge-stderr-*.log")
    assert "STRAY PRINT FROM A PLUGIN" in log.read_text() and "STRAY FD2 WRITE" in log.read_text()


LATE_PLUGIN = '''
import asyncio, os

async def setup(plugin):
    while not os.path.exists(os.environ["GO_FILE"]):  # the test says when set-up may finish
        await asyncio.sleep(0.01)

    @plugin.command("late", description="registered by a slow set-up")
    async def late(args, ctx):
        ctx.ui.notify(f"late command ran with {args}")
'''


def test_the_editor_is_up_before_plugins_load_and_a_prompt_waits_for_them(terminal, fake_llm, tmp_path, agent_env):
    plugin, go = tmp_path / "late.py", tmp_path / "go"
    plugin.write_text(LATE_PLUGIN)
    term = TmuxTerminal({**agent_env, "GO_FILE": str(go)}, terminal.work, "-e", str(plugin))
    try:
        screen = term.wait_for_all(READY, "loading…")  # the footer is up while the plugin's set-up still waits
        assert "loaded: 1 plugin" not in screen
        term.type("/late now")
        term.press("Enter")  # sent before the plugin's command exists
        go.write_text("")
        term.wait_until(lambda: "late command ran with now" in (shown := term.screen()) and "loading…" not in shown,
                        "the command's notice, loading over")
        assert "loaded: 1 plugin" in term.scrollback() and "error" not in term.screen()
        assert not fake_llm.requests  # the command ran; the text did not go to the model as a prompt
        term.press("C-d")
        assert term.exit_code() == 0
    finally:
        term.close()


def test_a_plugin_that_fails_to_load_is_a_warning_and_the_editor_goes_on(terminal, fake_llm, tmp_path):
    plugin = tmp_path / "broken.py"
    plugin.write_text("def setup(plugin):\n    raise RuntimeError('no database')\n")
    term = terminal("-e", str(plugin))  # start-up is over: its warnings are printed
    screen = " ".join(term.screen().split())  # the warning wraps where the temp path is long (xdist)
    assert "warning: Plugin not loaded" in screen and "no database" in screen and "loading…" not in screen
    fake_llm.set_script([{"text": "still here"}])
    term.type("hello")
    term.press("Enter")
    term.wait_for("still here")
    term.press("C-d")
    assert term.exit_code() == 0


DIALOG_PLUGIN = '''
def setup(plugin):
    @plugin.command("pick", description="asks")
    async def pick(args, ctx):
        fruit = await ctx.ui.select("Pick a fruit", ["apple", "banana", "cherry"])
        sure = await ctx.ui.confirm("Really?", f"take {fruit}")
        name = await ctx.ui.input("Your name", "a name")
        ctx.ui.notify(f"picked {fruit} sure={sure} name={name}")
'''


def test_plugin_dialogs_are_answered_with_the_keyboard_and_an_input_shows_its_placeholder(terminal, fake_llm,
                                                                                          tmp_path):
    """Two runs of one plugin's dialogs, on one agent (the second step is named for its behaviour)."""
    plugin = tmp_path / "pick.py"
    plugin.write_text(DIALOG_PLUGIN)
    term = terminal("-e", str(plugin))
    term.type("/pick")
    term.press("Enter")
    term.wait_for("→ apple")
    term.press("Down")
    term.wait_for("→ banana")
    term.press("Enter")
    term.wait_for("Really?")
    term.type("y")  # filters the options to "Yes"
    term.press("Enter")
    term.wait_for("Your name")
    term.type("Ada")
    term.press("Enter")
    term.wait_for("picked banana sure=True name=Ada")
    an_input_dialog_shows_its_placeholder(term)


def finish_first_session(terminal, name: str | None = None) -> str:
    """One exchange in a new terminal, then Ctrl+D; the session id from the resume hint."""
    term = terminal()
    if name:
        term.type(f"/name {name}")
        term.press("Enter")
        term.wait_for(f"· {name}")
    term.type("first question")
    term.press("Enter")
    term.wait_for("First run answer.")
    term.press("C-d")
    assert term.exit_code() == 0
    return term.scrollback().split("agent-forge --session ")[1].split()[0]


def test_session_flag_shows_the_earlier_conversation_and_continues_it(terminal, fake_llm):
    fake_llm.set_script([{"text": "First run answer."}, {"text": "Second run answer."}])
    session_id = finish_first_session(terminal)
    term = terminal("--session", session_id)
    term.wait_for_all("First run answer.", "first question")
    term.type("second question")
    term.press("Enter")
    term.wait_for("Second run answer.")
    assert user_texts(fake_llm.requests[1]) == ["first question", "second question"]


def test_resume_picks_an_older_session(terminal, fake_llm, agent_env):
    """Its file damaged meanwhile: the warnings a start-up with `--session` shows come with the resume too."""
    fake_llm.set_script([{"text": "First run answer."}, {"text": "Resumed answer."}])
    session_id = finish_first_session(terminal, name="older work")
    [stored] = [path for path in Path(agent_env["AGENT_FORGE_DIR"]).rglob("*.jsonl") if session_id in path.name]
    with stored.open("a") as handle:
        handle.write("{not json\n")
    term = terminal()
    term.type("/resume")
    term.press("Enter")
    term.wait_for("→ older work")
    term.press("Enter")
    term.wait_for("resumed session")
    term.wait_for_all("First run answer.", "warning: session file", "skipped 1 damaged line")
    term.type("more")
    term.press("Enter")
    term.wait_for("Resumed answer.")
    assert user_texts(fake_llm.requests[1]) == ["first question", "more"]


def test_shift_tab_cycles_the_thinking_level(terminal, fake_llm):
    term = terminal()
    term.wait_for("fake-model • medium")
    term.press("BTab")
    term.wait_for("fake-model • high")


def at_file_is_found_fuzzily_and_attached(term: TmuxTerminal, fake_llm, seq: int) -> None:
    # docs/release-notes.md: written before the start
    term.type("summarise @relnot")
    term.wait_for("docs/release-notes.md")  # the completion menu
    term.press("Tab")  # takes the completion and closes the menu
    term.wait_for("› summarise @docs/release-notes.md")
    term.wait_until(lambda: "  docs/release-notes.md" not in term.screen(), "the menu to close")
    term.type(" please")
    term.press("Enter")
    term.wait_for("Read your notes.")
    sent = user_texts(fake_llm.requests[seq])[-1]
    assert sent.startswith("summarise @docs/release-notes.md please") and "NOTES-CONTENT-42" in sent


def a_10000_line_output_is_collapsed(term: TmuxTerminal) -> None:
    term.type("count")
    term.press("Enter")
    term.wait_for_all("Counted.", "$ seq 10000", "earlier lines (ctrl+o to expand)", "10000")
    assert "\n 5000\n" not in term.scrollback()  # only the tail reached the terminal


def ctrl_g_edits_the_prompt_in_the_external_editor(term: TmuxTerminal) -> None:
    # VISUAL: set before the start, appends a line to the file it is given
    term.type("typed here")
    term.press("C-g")
    term.wait_for_all("and edited outside", "› typed here")


def an_editor_killed_by_a_signal_is_said_so_and_the_prompt_kept(term: TmuxTerminal, work: Path) -> None:
    """It said `exited with code -11`: subprocess's code for a signal (round 32)."""
    (work / "crash").touch()  # VISUAL kills itself with SIGSEGV now
    term.press("C-g")
    term.wait_for("was killed by SIGSEGV; the prompt is unchanged", where=lambda: " ".join(term.screen().split()))
    assert "› typed here" in term.screen() and "code -11" not in term.screen()


def copy_puts_the_last_answer_on_the_clipboard(term: TmuxTerminal) -> None:
    term._tmux("set-option", "-g", "set-clipboard", "on")
    term.type("hi")
    term.press("Enter")
    term.wait_for("Answer to copy.")
    term.type("/copy")
    term.press("Enter")
    term.wait_for("copied the last answer")
    term.wait_until(lambda: clipboard(term) == "Answer to copy.", "the clipboard to hold the answer")


def clipboard(term: TmuxTerminal) -> str:
    """tmux's newest paste buffer (where OSC 52 lands with `set-clipboard on`), "" while there is none."""
    try:
        return term._tmux("show-buffer")
    except RuntimeError:
        return ""


def slash_opens_a_filtered_menu_of_commands(term: TmuxTerminal) -> None:
    """(/noisy has run once before: its notice is on the screen already.)"""
    term.type("/")
    term.wait_for("/quit  exit")
    term.type("noi")
    term.wait_until(lambda: "/noisy  prints, then notifies" in (shown := term.screen()) and "/quit  exit" not in shown,
                    "the menu filtered to /noisy")
    term.press("Tab")
    term.press("Enter")  # takes the highlighted completion and runs it
    term.wait_until(lambda: term.scrollback().count("plugin says hi") == 2, "the command's second notice")


def test_model_selector_switches_the_model(terminal, fake_llm, agent_env_factory):
    from support.model_entries import model_entry

    env = agent_env_factory(models=[model_entry("fake-model"), model_entry("other-model")])
    fake_llm.set_script([{"text": "From the other model."}])
    term = terminal(env=env)
    term.type("/model")
    term.press("Enter")
    term.wait_for("Switch model")
    term.type("other")
    term.wait_for("→ fake/other-model")
    term.press("Enter")
    term.wait_for("other-model • ")
    term.type("hi")
    term.press("Enter")
    term.wait_for("From the other model.")
    assert fake_llm.requests[0]["body"]["model"] == "other-model"


def invalid_utf8_from_the_terminal_is_replaced(term: TmuxTerminal, fake_llm, seq: int) -> None:
    term.type("bad")
    term.press("-H", "ff", "fe")  # raw bytes that are no UTF-8
    term.type(" bytes")
    term.press("Enter")
    term.wait_for("Still fine.")
    sent = user_texts(fake_llm.requests[seq])[-1]
    assert sent.startswith("bad") and sent.endswith(" bytes")


def test_keybindings_json_rebinds_actions(terminal, fake_llm, agent_env):
    keys = {"app.exit": "ctrl+q", "app.thinking.toggle": [], "app.nope": "ctrl+x", "app.model.cycle": "hyper+k"}
    (Path(agent_env["AGENT_FORGE_DIR"]) / "keybindings.json").write_text(json.dumps(keys))
    term = terminal()
    screen = term.wait_for("unknown action 'app.nope'")
    assert "app.model.cycle: unknown key 'hyper+k'; using ctrl+p (the default)" in screen.replace("\n", "")
    term.type("/hotkeys")
    term.press("Enter")
    history = term.wait_for("/export", where=term.scrollback)
    assert re.search(r"ctrl\+q +exit", history) and re.search(r"\(unbound\) +show or hide thinking", history), \
        history
    assert re.search(r"ctrl\+p +next model", history), history  # the bad key left the default in place
    term.press("C-d")  # no longer exit
    term.press("C-q")
    assert term.exit_code() == 0


def test_keybindings_json_with_a_repeated_action_says_so_and_uses_the_last(terminal, fake_llm, agent_env):
    path = Path(agent_env["AGENT_FORGE_DIR"]) / "keybindings.json"
    path.write_text('{"app.exit": "ctrl+x",\n "app.exit": "ctrl+q"}\n')
    term = terminal()
    screen = term.wait_for('duplicate key "app.exit" (lines 1 and 2)')
    assert f"{path}:2: duplicate key" in "".join(screen.splitlines())  # the long path wraps at the edge
    assert "Traceback" not in screen
    term.press("C-q")
    assert term.exit_code() == 0


def test_no_color_leaves_the_transcript_uncoloured(terminal, fake_llm, agent_env):
    agent_env["NO_COLOR"] = "1"
    fake_llm.set_script([{"text": "Plain `code` answer.", "tool_calls": [{"name": "bash", "arguments": {
        "command": "echo hi"}}]}, {"text": "Done."}])
    term = terminal()
    term.type("go")
    term.press("Enter")
    term.wait_for("Done.")
    coloured = term._tmux("capture-pane", "-p", "-e", "-t", "t")
    transcript = coloured.split("────")[0]
    assert "exit 0" in transcript and not re.search(r"\x1b\[[0-9;]*[34]8;", transcript), transcript


def test_tree_continues_from_an_earlier_entry(terminal, fake_llm):
    fake_llm.set_script([{"text": "Answer one."}, {"text": "Answer two."}, {"text": "Answer on the new branch."}])
    term = terminal()
    for prompt, answer in (("question one", "Answer one."), ("question two", "Answer two.")):
        term.type(prompt)
        term.press("Enter")
        term.wait_for(answer)
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    term.type("/tree")
    term.press("Enter")
    term.wait_for("→ assistant: Answer two. (here)")
    term.type("Answer one")
    term.wait_for("→ assistant: Answer one.")
    term.press("Enter")
    term.wait_for("→ Continue from here")
    term.press("Enter")
    term.wait_for("continuing from the chosen entry")
    term.type("question three")
    term.press("Enter")
    term.wait_for("Answer on the new branch.")
    assert user_texts(fake_llm.requests[2]) == ["question one", "question three"]


def alt_up_takes_queued_messages_back_without_aborting(term: TmuxTerminal, fake_llm, seq: int) -> None:
    term.type("start")
    term.press("Enter")
    term.wait_for("long")
    term.type("second thoughts")
    term.press("Enter")
    term.wait_for("steer: second thoughts")
    term.press("M-Up")
    term.wait_until(lambda: "› second thoughts" in (shown := term.screen()) and "steer:" not in shown
                    and "esc to interrupt" in shown, "the message back in the editor, the run going on")
    fake_llm.release_hangs()
    term.wait_for("long running answer")
    assert len(fake_llm.requests) == seq + 1


def test_logout_login_and_trust_record_their_decisions(terminal, fake_llm, agent_env):
    """Three commands that write the agent's own files, on one agent (each step is named for its own)."""
    auth = Path(agent_env["AGENT_FORGE_DIR"]) / "auth.json"
    auth.write_text(json.dumps({"fake": {"type": "api_key", "key": "stored-key"}}))
    auth.chmod(0o600)
    term = terminal()
    logout_removes_the_stored_key(term, auth)
    login_stores_a_masked_key_in_auth_json(term, agent_env)
    trust_records_the_decision(term, agent_env)


def logout_removes_the_stored_key(term: TmuxTerminal, auth: Path) -> None:
    # auth.json: written before the start
    term.type("/logout")
    term.press("Enter")
    term.wait_for("→ fake")
    term.press("Enter")
    term.wait_for("logged out of fake")
    assert "fake" not in json.loads(auth.read_text())


def login_stores_a_masked_key_in_auth_json(term: TmuxTerminal, agent_env: dict[str, str]) -> None:
    term.type("/login fake")
    term.press("Enter")
    term.wait_for("API key for fake")
    term.type("sk-secret-123")
    term.wait_for("› *************")
    assert "sk-secret" not in term.screen()
    term.press("Enter")
    term.wait_for("saved the API key for fake")
    auth = Path(agent_env["AGENT_FORGE_DIR"]) / "auth.json"
    assert json.loads(auth.read_text())["fake"] == {"type": "api_key", "key": "sk-secret-123"}
    assert auth.stat().st_mode & 0o777 == 0o600
    history = Path(agent_env["AGENT_FORGE_DIR"]) / "prompt-history"
    assert "/login fake" in history.read_text() and "sk-secret" not in history.read_text()


def trust_records_the_decision(term: TmuxTerminal, agent_env: dict[str, str]) -> None:
    term.type("/trust")
    term.press("Enter")
    term.wait_for("Trust this project?")
    term.press("Enter")  # /trust was asked for: Yes is highlighted (a plugin's confirm highlights No)
    term.wait_for("this project is trusted")
    projects = json.loads(next(Path(agent_env["AGENT_FORGE_DIR"]).glob("trust*.json")).read_text())
    assert any(entry.get("trusted") is True for entry in projects.get("projects", projects).values())


def test_scoped_models_sets_what_ctrl_p_cycles(terminal, fake_llm, agent_env_factory):
    from support.model_entries import model_entry

    env = agent_env_factory(models=[model_entry("fake-model"), model_entry("other-model"), model_entry("third")])
    term = terminal(env=env)
    term.type("/scoped-models fake-model,third")
    term.press("Enter")
    term.wait_for("scoped models: fake/fake-model, fake/third")
    term.press("C-p")
    term.wait_for("fake) third • ")
    term.press("C-p")
    term.wait_for("fake) fake-model • ")


def test_an_untrusted_project_with_plugins_is_asked_about_once(terminal, fake_llm, agent_env):
    plugins = terminal.work / ".agent-forge" / "agent" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "projplug.py").write_text("def setup(plugin):\n    pass\n")
    term = TmuxTerminal(agent_env, terminal.work)
    try:
        term.wait_for("Trust this project and load them? [y/N]")
        term.type("y")
        term.press("Enter")
        term.wait_for("loaded: 1 plugin (ctrl+o lists them)")  # the header follows the first paint
        term.press("C-o")
        term.wait_for("[plugins] projplug")
        term.press("C-d")
        assert term.exit_code() == 0
    finally:
        term.close()
    again = terminal()  # the answer was recorded: no question
    assert "Trust this project" not in again.wait_for("loaded: 1 plugin")


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_project_settings_that_are_no_regular_file_do_not_stop_the_trust_check(terminal, kind):
    settings = terminal.work / ".agent-forge" / "agent" / "settings.json"
    settings.parent.mkdir(parents=True)
    os.mkfifo(settings) if kind == "fifo" else settings.symlink_to(kind)  # opened blocking / read whole: no end
    term = terminal()  # up, and not asked: the project brings no code it could read
    screen = term.wait_for("not a regular file")
    assert "Trust this project" not in screen
    term.press("C-d")
    assert term.exit_code() == 0


def turn_retry_off(term) -> None:
    """Through `/settings`: pick `retry.enabled`, then `false`, and wait for the saved notice."""
    term.type("/settings")
    term.press("Enter")
    term.wait_for("Change which setting?")
    term.type("retry")
    term.wait_for("→ retry.enabled (now: true)")
    term.press("Enter")
    term.wait_for("retry.enabled:")
    term.press("Down")
    term.wait_for("→ false")
    term.press("Enter")
    term.wait_for("retry.enabled = false saved in")


def test_settings_saves_into_a_notepad_file_with_a_repeated_key(terminal, fake_llm, agent_env):
    path = Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json"
    path.write_bytes(b'\xef\xbb\xbf{"defaultProvider": "fake", "defaultModel": "gone",\n "defaultModel": "fake-model"}')
    term = terminal()
    term.wait_for('duplicate key "defaultModel"')
    turn_retry_off(term)
    assert json.loads(path.read_text()) == {"defaultProvider": "fake", "defaultModel": "fake-model",
                                            "retry": {"enabled": False}}


def test_settings_saves_a_setting_and_applies_it(terminal, fake_llm, agent_env):
    term = terminal()
    turn_retry_off(term)
    settings = json.loads((Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json").read_text())
    assert settings["retry"] == {"enabled": False} and settings["defaultModel"] == "fake-model"


def bracketed_paste(term: TmuxTerminal, tmp_path: Path, data: bytes) -> None:
    """Paste `data` as the terminal would (`paste-buffer -p`: wrapped in the bracketed-paste marks)."""
    source = tmp_path / "paste.bin"
    source.write_bytes(data)
    term._tmux("load-buffer", str(source))
    term._tmux("paste-buffer", "-p", "-t", "t")


def a_forged_end_of_paste_mark_cannot_run_a_command(term: TmuxTerminal, work: Path, fake_llm, tmp_path: Path) -> None:
    bracketed_paste(term, tmp_path, b"\x1b[201~!touch PWNED\r\x1b[200~tail")
    term.wait_for_all(r"› \x1b[201~!touch PWNED", r"\x1b[200~tail")  # shown as inert text in the editor, not run
    assert not (work / "PWNED").exists() and fake_llm.requests == []
    term.press("C-c")
    term.wait_until(lambda: "PWNED" not in term.screen(), "the editor to be cleared")


def test_bang_output_says_it_was_truncated_and_ctrl_o_expands_it(terminal, fake_llm):
    term = terminal(rows=40)
    term.type("!seq 10000")
    term.press("Enter")
    # of all 10,000, not of the 2,000 kept
    screen = term.wait_for_all("exit 0", "… 9995 earlier lines (ctrl+o to expand)",
                               "[Showing last 2000 lines of 10000. Full output:")
    full = re.search(r"Full output:\s*([^\]]+)\]", screen.replace("\n ", "")).group(1)
    assert Path(full).read_text().splitlines()[0] == "1"
    term.press("C-o")
    term.wait_for("tool output expanded")
    term.wait_for("\n 9000\n", where=term.scrollback)  # the ! block again, expanded (its top is past tmux's 2,000-line history)


def test_a_long_wrapped_line_collapses_to_a_few_rows(terminal, fake_llm):
    term = terminal(rows=40)
    term.type("!python3 -c \"print('ab' * 3000)\"")
    term.press("Enter")
    term.wait_until(lambda: "exit 0" in (shown := term.screen()) and "… the start of a long line (ctrl+o to expand)"
                    in shown and sum(1 for line in shown.splitlines() if line.startswith(" abab")) == 5,
                    "the line collapsed to 5 rows")


def a_bare_bang_says_how_to_use_it_and_sends_nothing(term: TmuxTerminal, fake_llm) -> None:
    term.type("!")
    term.press("Enter")
    term.wait_for_all("usage: !command runs a shell command", "› !")
    assert fake_llm.requests == []  # kept in the editor, not sent


def test_answered_prompts_tree_after_a_shell_command_at_files_odd_bytes_copy_and_long_output(terminal, fake_llm):
    """Five behaviours around answered prompts, on one agent (each step is named for its own; `seq` is the
    request its prompt makes)."""
    fake_llm.set_script([{"text": "Answer one."}, {"text": "Read your notes."}, {"text": "Still fine."},
                         {"text": "Answer to copy."},
                         {"text": "Counting.", "tool_calls": [{"name": "bash", "arguments": {"command": "seq 10000"}}]},
                         {"text": "Counted."}])
    (terminal.work / "docs").mkdir()
    (terminal.work / "docs" / "release-notes.md").write_text("NOTES-CONTENT-42\n")
    term = terminal()
    tree_marks_here_after_a_shell_command(term)
    term.press("Escape")
    term.wait_until(lambda: "→ shell: $ echo hi (here)" not in term.screen(), "the tree to close")
    at_file_is_found_fuzzily_and_attached(term, fake_llm, seq=1)
    invalid_utf8_from_the_terminal_is_replaced(term, fake_llm, seq=2)
    copy_puts_the_last_answer_on_the_clipboard(term)
    a_10000_line_output_is_collapsed(term)


def tree_marks_here_after_a_shell_command(term: TmuxTerminal) -> None:
    term.type("question one")
    term.press("Enter")
    term.wait_for("Answer one.")
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    term.type("!echo hi")
    term.press("Enter")
    term.wait_for("exit 0")
    term.type("/tree")
    term.press("Enter")
    term.wait_for("→ shell: $ echo hi (here)")


def test_a_40_column_terminal_wraps_streaming_text_between_words_and_an_answer_within_its_width(terminal, fake_llm):
    """Two behaviours of a narrow terminal, on one agent (each step is named for its own)."""
    words = [f"w{'x' * (i % 7)}{i}" for i in range(60)]
    long = "This answer is much longer than forty columns so it has to wrap over several lines to be read."
    fake_llm.set_script([{"text": " ".join(words), "hang_after": 50}, {"text": long}])
    term = terminal(columns=40, rows=20)
    streaming_text_wraps_between_words(term, fake_llm, words)
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the streamed run to end")
    a_40_column_terminal_wraps_and_keeps_the_footer(term)


def streaming_text_wraps_between_words(term: TmuxTerminal, fake_llm, words: list[str]) -> None:
    term.type("go")
    term.press("Enter")
    # one capture judged whole: a frame is written row by row, so a capture can hold a row half rewritten
    term.wait_until(lambda: whole_words(term.screen(), words), f"the streaming rows up to {words[40]} in whole words")
    fake_llm.release_hangs()


def whole_words(screen: str, words: list[str]) -> bool:
    """`screen` shows `words[40]`, and the streaming rows above the editor hold nothing but whole `words`."""
    live = screen.split("\n go\n")[-1].split("────")[0]
    tokens = [token for line in live.splitlines() if not line.startswith(("⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦",
                                                                          "⠧", "⠇", "⠏"))
              for token in line.split()]
    return words[40] in tokens and all(token in words for token in tokens)


def an_input_dialog_shows_its_placeholder(term: TmuxTerminal) -> None:
    term.type("/pick")
    term.press("Enter")
    term.wait_for("→ apple")
    term.press("Enter")
    term.wait_for("Really?")
    term.type("y")  # filters the options to "Yes" (No is highlighted first)
    term.press("Enter")
    term.wait_for("› a name")  # the placeholder, in an empty editor
    term.type("Ada")
    term.wait_until(lambda: "› Ada" in (shown := term.screen()) and "a name" not in shown, "the placeholder gone")
    term.press("Enter")
    term.wait_for("picked apple sure=True name=Ada")


def a_binary_attachment_is_refused_and_the_prompt_kept(term: TmuxTerminal, fake_llm) -> None:
    # blob.bin: written before the start
    term.type("look at @blob.bin please")
    term.press("Enter")
    term.wait_for_all("The prompt is back in the editor.", "› look at @blob.bin please")
    assert fake_llm.requests == []


def test_messages_queued_during_a_failed_run_come_back_to_the_editor(terminal, fake_llm, agent_env_factory):
    env = agent_env_factory(settings={"retry": {"enabled": False}})
    fake_llm.set_script([{"text": "partial words here", "hang_after": 3, "error_after": 4,
                          "error_event": "boom"}, {"text": "must not run"}])
    term = terminal(env=env)
    term.type("first")
    term.press("Enter")
    term.wait_for("partial")
    term.type("queued one")
    term.press("M-Enter")
    term.wait_for("follow-up: queued one")
    fake_llm.release_hangs()
    term.wait_for("the messages queued during it are back in the editor")
    term.wait_until(lambda: "esc to interrupt" not in (shown := term.screen()) and "› queued one" in shown,
                    "the run to end, the message back in the editor")
    assert len(fake_llm.requests) == 1


def test_dialogs_stay_usable_in_an_8_row_terminal(terminal, fake_llm, tmp_path):
    plugin = tmp_path / "pick.py"
    plugin.write_text(DIALOG_PLUGIN)
    term = terminal("-e", str(plugin), columns=40, rows=8)
    term.type("/pick")
    term.press("Enter")
    term.wait_for_all("→ apple", "Pick a fruit", "cherry", "esc cancel")
    term.press("Down")
    term.wait_for("→ banana")
    term.press("Enter")
    term.wait_for_all("→ No", "Really?", "take banana")  # a confirm's safe default
    term.press("Up")
    term.wait_for("→ Yes")
    term.press("Enter")
    term.wait_for("› a name")
    term.type("Ada")
    term.press("Enter")
    term.wait_for("picked banana sure=True name=Ada")
    # the footer is back (drawn again just after the line is printed)
    screen = term.wait_for_all("fake-model", "picked banana sure=True name=Ada")
    assert all(len(line) <= 40 for line in screen.splitlines())
