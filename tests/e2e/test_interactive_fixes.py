"""End to end: a fresh-eyes tester's findings in the interactive mode (tmux, loopback model server): keys that
`/login` must refuse, a plugin `confirm` defaulting to No, counted words."""

from __future__ import annotations

import json
from pathlib import Path

from support.tui import needs_tmux, user_texts

pytestmark = needs_tmux


def login(term, key: str) -> None:
    term.type("/login fake")
    term.press("Enter")
    term.wait_for_line("API key for fake")  # the dialog itself: an earlier "saved the API key for fake" is no sign
    if key:
        term.type(key)


def test_logout_counts_in_the_singular_and_login_takes_no_line_break_and_refuses_bad_keys(terminal, fake_llm,
                                                                                          agent_env):
    """Two behaviours of the key commands, on one agent (each step is named for its own)."""
    auth = Path(agent_env["AGENT_FORGE_DIR"]) / "auth.json"
    auth.write_text(json.dumps({"fake": {"type": "api_key", "key": "stored-key"}}))
    auth.chmod(0o600)
    term = terminal()
    logout_counts_one_model_in_the_singular(term)
    login_takes_no_line_break_and_refuses_unsendable_or_empty_keys(term, auth)


def login_takes_no_line_break_and_refuses_unsendable_or_empty_keys(term, auth: Path) -> None:
    login(term, "abc")
    term.press("C-j")  # a new line in the one-line key dialog: nothing
    term.type("def")
    term.wait_until(lambda: "› ******" in (shown := term.screen()) and "enter send · esc cancel" in shown
                    and "ctrl+j new line" not in shown, "the six stars and the dialog's hint")
    term.press("Enter")
    term.wait_for("saved the API key for fake")
    assert json.loads(auth.read_text())["fake"]["key"] == "abcdef"
    login(term, "sk-漢")
    term.wait_for("› ****")
    term.press("Enter")
    # the whole notice: its row is written in parts
    term.wait_for("nothing was saved for fake: the key holds a non-ASCII character (character 4)",
                  where=lambda: " ".join(term.screen().split()))
    assert json.loads(auth.read_text())["fake"]["key"] == "abcdef" and "漢" not in term.screen()
    login(term, "")
    term.press("Enter")
    term.wait_for("nothing was saved for fake: the key is empty")
    assert json.loads(auth.read_text())["fake"]["key"] == "abcdef"


CONFIRM_PLUGIN = '''
def setup(plugin):
    @plugin.command("wipe", description="asks twice")
    async def wipe(args, ctx):
        first = await ctx.ui.confirm("Delete all?", "everything goes")
        second = await ctx.ui.confirm("Keep going?", default=True)
        ctx.ui.notify(f"answers first={first} second={second}")
'''


def test_a_confirm_highlights_no_unless_the_plugin_asks_for_yes(terminal, fake_llm, tmp_path):
    plugin = tmp_path / "wipe.py"
    plugin.write_text(CONFIRM_PLUGIN)
    term = terminal("-e", str(plugin))
    term.type("/wipe")
    term.press("Enter")
    term.wait_for("Delete all?")
    assert "→ No" in term.wait_for("→ No") and "→ Yes" not in term.screen()
    term.press("Enter")
    term.wait_for("Keep going?")
    term.wait_for("→ Yes")
    term.press("Enter")
    term.wait_for("answers first=False second=True")


def flat(text: str) -> str:
    return " ".join(text.split())


def bang_output_says_what_cleaning_removed_and_the_session_keeps_it(term, agent_env: dict[str, str]) -> None:
    term.type(r"!printf 'a\033[31mb\033]0;T\007c\rd\x08e\n'")
    term.press("Enter")
    term.wait_for("[Output cleaned: 12 characters of escape sequences or control characters removed; 1 line was "
                  "overwritten by a carriage return (only its last text is kept)]", where=lambda: flat(term.screen()))
    term.type("!head -c 3000000 /dev/zero")
    term.press("Enter")
    term.wait_until(lambda: "3,000,000 characters" in flat(term.screen()), "the note of a NUL-only output")
    assert "(no output)" not in term.screen()
    term.press("C-d")
    assert term.exit_code() == 0
    [session] = (Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl")
    outputs = [json.loads(line)["message"]["output"] for line in session.read_text().splitlines()
               if '"bashExecution"' in line]
    assert outputs[0].startswith("de\n\n[Output cleaned: 12 characters") and "Raw output: " in outputs[1]


def test_at_completion_quotes_spaces_and_warns_of_a_missing_file_and_bang_output_says_what_cleaning_removed(
        terminal, fake_llm, agent_env):
    """Two behaviours of what a prompt or a shell command brings in, on one agent (each step is named for its own)."""
    fake_llm.set_script([{"text": "Read the odd file."}, {"text": "Second answer."}])
    (terminal.work / "we ird name.txt").write_text("ODD-CONTENT-7\n")
    term = terminal()
    at_completion_quotes_a_path_with_spaces_and_a_missing_file_is_warned_about(term, fake_llm)
    bang_output_says_what_cleaning_removed_and_the_session_keeps_it(term, agent_env)


def at_completion_quotes_a_path_with_spaces_and_a_missing_file_is_warned_about(term, fake_llm) -> None:
    # "we ird name.txt": written before the start
    term.type("show @we")
    term.wait_for("we ird name.txt")  # the completion menu
    term.press("Tab")  # takes the completion and closes the menu
    term.wait_for('› show @"we ird name.txt"')
    term.press("Enter")
    term.wait_for("Read the odd file.")
    assert "ODD-CONTENT-7" in user_texts(fake_llm.requests[0])[-1]
    term.type("and @we ird name.txt too")
    term.press("Escape")  # the menu
    term.press("Enter")
    term.wait_for("Second answer.")
    assert 'write @"we ird name.txt"' in " ".join(term.screen().split())
    assert "ODD-CONTENT-7" not in user_texts(fake_llm.requests[1])[-1]


def test_the_slash_menu_reopens_at_backspace_enter_runs_its_only_match_and_an_unknown_command_is_text(terminal,
                                                                                                       fake_llm):
    """Three behaviours of the slash menu, on one agent (each step is named for its own)."""
    fake_llm.set_script([{"text": "Got your slash text."}])
    term = terminal()
    backspace_in_a_slash_command_reopens_the_menu(term)
    enter_in_the_slash_menu_runs_the_only_match_and_an_unknown_command_is_text(term, fake_llm)


def enter_in_the_slash_menu_runs_the_only_match_and_an_unknown_command_is_text(term, fake_llm) -> None:
    """(/session has run once before: its counts are on the screen already.)"""
    term.type("/sessio")
    # the menu, one match (its row: "/session" alone may be the earlier run's line in the transcript)
    term.wait_for("the session's file, id, message counts")
    term.press("Enter")
    term.wait_until(lambda: term.scrollback().count("messages on this branch: 0 (0 user") == 2,
                    "/session's second answer")
    assert fake_llm.requests == []
    term.type("/nosuchcommand here")
    term.press("Enter")
    term.wait_for("Got your slash text.")
    assert user_texts(fake_llm.requests[0])[-1] == "/nosuchcommand here"


def test_each_failed_attempt_is_one_line_with_the_error_message_not_the_body(terminal, fake_llm, agent_env_factory):
    env = agent_env_factory(settings={"retry": {"maxRetries": 2, "baseDelayMs": 1}})
    fake_llm.set_script([{"status": 500}, {"text": "Recovered."}, {"status": 503}, {"status": 502}, {"status": 500}])
    term = terminal(env=env)
    term.type("first")
    term.press("Enter")
    screen = term.wait_for_all("Recovered.", "retrying in 0.0 s, retry 1/2: 500 fake LLM scripted HTTP 500 (server_error)")
    assert "{" not in screen and "error: 500" not in screen
    term.type("second")
    term.press("Enter")
    term.wait_for("retries ended: 500 fake LLM scripted HTTP 500 (server_error) (after 3 attempts)")  # requests
    lines = [line for line in term.screen().splitlines() if "fake LLM scripted" in line]
    assert [line.split(":")[0].strip() for line in lines] == [
        "retrying in 0.0 s, retry 1/2", "retrying in 0.0 s, retry 1/2", "retrying in 0.0 s, retry 2/2",
        "retries ended"]
    assert len(fake_llm.requests) == 5  # 2 for the first prompt, 3 for the second: the "3" above


def test_hints_name_the_rebound_keys(terminal, fake_llm, agent_env):
    keys = {"app.exit": "ctrl+q", "app.model.cycle": "f2", "app.tools.expand": []}
    (Path(agent_env["AGENT_FORGE_DIR"]) / "keybindings.json").write_text(json.dumps(keys))
    term = terminal(columns=160, rows=60)
    screen = term.wait_for("ctrl+q exit")
    assert "ctrl+d exit" not in screen
    term.type("/hotkeys")
    term.press("Enter")
    term.wait_for("also ctrl+q on an empty editor")
    term.type("/scoped-models")
    term.press("Enter")
    term.wait_for("(none: f2 cycles every model with a key)")
    term.type("!seq 300")
    term.press("Enter")
    shown = term.wait_for_all("exit 0", "earlier lines")
    assert "ctrl+p" not in shown and "ctrl+d" not in shown and "to expand" not in shown  # unbound: no hint
    term.press("C-q")
    assert term.exit_code() == 0


def test_an_editor_that_writes_to_the_terminal_leaves_nothing_glued_to_the_live_region(terminal, fake_llm,
                                                                                         agent_env):
    env = {**agent_env, "EDITOR": "cat"}
    term = terminal(env=env)
    term.type("GLUEDTEXT")
    term.press("C-g")
    term.wait_until(lambda: "› GLUEDTEXT" in term.screen() and _separators(term.screen()) == 2,
                    "the live region redrawn")
    assert not any("GLUEDTEXT" in row and "─" in row for row in term.screen().splitlines())
    term.type(" more")  # the editor still works where it is drawn
    term.wait_for("› GLUEDTEXT more")


def _separators(screen: str) -> int:
    return sum(1 for row in screen.splitlines() if row.strip() and set(row.strip()) == {"─"})


def test_fork_onto_a_long_pasted_message_puts_a_paste_marker_in_the_editor(terminal, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Got the long one."}, {"text": "Got it again."}])
    pasted = "".join(f"line {n}\n" for n in range(5000))
    source = tmp_path / "paste.txt"
    source.write_text(pasted)
    term = terminal()
    term._tmux("load-buffer", str(source))
    term._tmux("paste-buffer", "-p", "-t", "t")
    term.wait_for("[paste #1: 5000 lines")
    term.press("Enter")
    term.wait_for("Got the long one.")
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    term.type("/fork")
    term.wait_for("› /fork")
    term.press("Enter")
    term.wait_for("→ 1. line 0")
    term.press("Enter")
    term.wait_for("forked into session")
    term.wait_for("› [paste #")
    assert "line 4999" not in term.screen().split("›")[-1]  # the editor holds the marker, not 5,000 lines
    term.press("Enter")
    term.wait_for("Got it again.")
    assert user_texts(fake_llm.requests[1])[-1] == pasted


def test_resume_titles_use_the_width_of_a_wide_terminal(terminal, fake_llm):
    question = "please look at " + " ".join(f"word{n}" for n in range(25))  # 160 characters
    fake_llm.set_script([{"text": "First answer."}])
    first = terminal(columns=250)
    first.type(question)
    first.press("Enter")
    first.wait_for("First answer.")
    first.press("C-d")
    assert first.exit_code() == 0
    term = terminal(columns=250)
    term.type("/resume")
    term.press("Enter")
    term.wait_for_all("→ please look at", "word24 · ")  # the whole first message, then its date
    term.press("Escape")
    term.press("C-d")
    term = terminal(columns=80)
    term.type("/resume")
    term.press("Enter")
    term.wait_until(lambda: any("→ please look at" in row and "… · " in row and " messages · " in row and len(row) <= 80
                                for row in term.screen().splitlines()), "the row cut, its date and id still shown")


def backspace_in_a_slash_command_reopens_the_menu(term) -> None:
    term.type("/sessx")
    term.wait_for("› /sessx")
    assert "counts, tokens" not in term.screen()  # no command matches: no menu
    term.press("BSpace")
    term.wait_for("the session's file, id, message counts")  # /session's row is back
    term.press("Enter")  # and Enter runs it
    term.wait_for("messages on this branch: 0 (0 user")


def test_a_resumed_truncated_bang_block_still_says_of_how_many_lines(terminal, fake_llm):
    """... and resumed `!` and bash tool blocks show no duration (no entry records one), not a made-up 0.0 s."""
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "echo tool-ran"}}]},
                         {"text": "ran it"}])
    term = terminal(rows=40)
    term.type("run it")
    term.press("Enter")
    term.wait_for("ran it")
    term.type("!seq 10000")
    term.press("Enter")
    term.wait_until(lambda: "exit 0" in term.screen().partition("$ seq 10000")[2], "the command's end")
    term.press("C-d")
    assert term.exit_code() == 0
    session_id = term.scrollback().split("agent-forge --session ")[1].split()[0]
    resumed = terminal("--session", session_id, rows=40)
    resumed.wait_for_all("[Showing last 2000 lines of 10000.", "… 9995 earlier lines")
    shown = resumed.scrollback()
    assert "$ echo tool-ran" in shown and shown.count("exit 0") == 2 and "exit 0 ·" not in shown


def logout_counts_one_model_in_the_singular(term) -> None:
    # auth.json: a key for fake, written before the start
    term.type("/logout fake")
    term.press("Enter")
    term.wait_for("logged out of fake (1 model still has a key)")  # fake-model's models.json apiKey


def test_a_resumed_answer_of_one_huge_line_shows_its_start_and_how_much_more(terminal, tmp_path):
    """Wrapping one 1 MB line took the renderer seconds (30 MB: minutes, deaf to SIGTERM meanwhile); the
    scrollback shows the first `ANSWER_SHOWN_CHARS` and says how many more the session holds."""
    from e2e.test_cli_sessions import write_session

    huge = "H" * 1_000_000
    path = write_session(tmp_path / "s", "eeee0000-0000-4000-8000-000000000001", ["question", huge],
                         mtime=1_000_000, cwd=str(terminal.work))
    term = terminal("--session", str(path))
    term.wait_for("… 800,000 more characters not shown (the session holds them all;")  # 200,000 shown
