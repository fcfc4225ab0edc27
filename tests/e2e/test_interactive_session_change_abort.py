"""End to end: in a real terminal (tmux), a session change (`/new`, `/clone`) whose plugin `session_before_change`
handler waits shows the spinner with the abort hint, and Escape or Ctrl+C cancels it (said so, the session file
untouched, the old session goes on), and `/reload` waiting for a plugin's `session_shutdown` handler likewise;
while a plugin dialog is open the spinner shows the dialog's keys, since
Escape answers the dialog then."""

from __future__ import annotations

import pytest

from support.tui import ask, choose, needs_tmux

from .test_interactive_tree_abort import session_file

pytestmark = needs_tmux

HOLDING_PLUGIN = '''
import asyncio
from pathlib import Path


def setup(plugin):
    @plugin.on("session_before_change")
    async def veto(event, ctx):
        if Path("hold").exists():
            await asyncio.sleep(3600)  # a server or a person that never answers: only an abort ends it

    @plugin.on("session_shutdown")
    async def bye(event, ctx):
        if Path("hold-exit").exists():
            await asyncio.sleep(3600)

    @plugin.command("ask")
    async def ask(args, ctx):
        Path("answered.txt").write_text(str(await ctx.ui.confirm("Go on?")))
'''


@pytest.fixture
def plugin(tmp_path):
    path = tmp_path / "holding.py"
    path.write_text(HOLDING_PLUGIN)
    return str(path)


@pytest.mark.parametrize(("command", "activity", "key", "said"), [
    ("/new", "starting a new session…", "Escape", "new session cancelled: the current session stays as it was"),
    ("/clone", "cloning…", "C-c", "clone cancelled: the current session stays as it was")])
def test_a_change_waiting_for_a_plugin_shows_the_spinner_and_escape_or_ctrl_c_cancels_it(
        terminal, fake_llm, agent_env, plugin, command, activity, key, said):
    fake_llm.set_script([{"text": "Answer one."}, {"text": "Answer two."}])
    term = terminal("-e", plugin)
    ask(term, "question one", "Answer one.")
    (terminal.work / "hold").touch()
    before = session_file(agent_env).read_bytes()
    term.type(command)
    term.press("Enter")
    term.wait_for_all(f"{activity} (", "s · esc to interrupt)")
    term.press(key)
    term.wait_for(said)
    term.wait_until(lambda: activity not in term.screen(), "the spinner to go")
    assert session_file(agent_env).read_bytes() == before  # nothing written (and no other file: one file)
    (terminal.work / "hold").unlink()
    ask(term, "question two", "Answer two.")
    assert b"question two" in session_file(agent_env).read_bytes()  # the old session went on


def test_the_spinner_shows_an_open_dialogs_keys_instead_of_the_abort_hint(terminal, fake_llm, plugin):
    term = terminal("-e", plugin)
    term.type("/ask")
    term.press("Enter")
    screen = term.wait_for_all("Go on?", "running /ask… (", "esc cancel)")
    assert "esc to interrupt" not in screen
    term.press("Escape")  # answers the dialog (its default), as the hint says
    term.wait_until(lambda: (terminal.work / "answered.txt").exists(), "the dialog's answer")
    term.wait_until(lambda: "running /ask" not in term.screen(), "the spinner to go")
    assert (terminal.work / "answered.txt").read_text() == "False"


def test_reload_waiting_for_a_plugin_shows_the_spinner_and_escape_stops_the_wait(terminal, fake_llm,
                                                                                 agent_env_factory, plugin):
    fake_llm.set_script([{"text": "Answer one."}])
    term = terminal("-e", plugin, env=agent_env_factory(settings={"pluginHandlerTimeoutMs": 120000}))
    (terminal.work / "hold-exit").touch()
    term.type("/reload")
    term.press("Enter")
    term.wait_for_all("reloading… (", "s · esc to interrupt)")
    term.press("Escape")
    screen = term.wait_for_all("reloaded (plugin code still running was stopped)", "plugins: 1 loaded")
    assert "failed in session_shutdown" not in screen  # stopped by the abort, not timed out
    (terminal.work / "hold-exit").unlink()
    ask(term, "question one", "Answer one.")


def test_an_exit_waiting_for_a_plugin_says_so_and_ctrl_c_still_quits_with_the_resume_line(
        terminal, fake_llm, agent_env_factory, plugin):
    """The editor and footer went at Ctrl+D and nothing showed while `session_shutdown` waited (up to
    `pluginHandlerTimeoutMs`): it read as a hang."""
    fake_llm.set_script([{"text": "Answer one."}])
    term = terminal("-e", plugin, env=agent_env_factory(settings={"pluginHandlerTimeoutMs": 120000}))
    ask(term, "question one", "Answer one.")
    (terminal.work / "hold-exit").touch()
    term.press("C-d")
    term.wait_for("finishing: waiting for plugins to end… (ctrl+c to quit now)")
    term.press("C-c")
    assert term.exit_code() == 130
    assert "Resume this session: agent-forge --session " in term.scrollback()


VETOING_PLUGIN = '''
import asyncio
from pathlib import Path

from agent_forge.plugins import Cancel


async def released():
    while not Path("release").exists():  # a server answering late
        await asyncio.sleep(0.02)
    return True


def setup(plugin):
    @plugin.on("session_before_change")
    async def veto(event, ctx):
        if event.action == "switch_session" and ASK:
            return Cancel()
'''


VETOES = {"at-once": "True", "after-a-dialog": 'not await ctx.ui.confirm("Allow the resume?")',
          "after-a-wait": "await released()"}


@pytest.mark.parametrize("how", list(VETOES))
def test_escape_after_a_vetoed_resume_acts_on_nothing_gone_and_still_aborts_the_next_run(
        terminal, fake_llm, agent_env, tmp_path, how):
    """A stale abort handle of the vetoed step would show a wrong notice, abort the next run, or eat the key."""
    from .test_interactive_graphemes import write_sessions

    path = tmp_path / "vetoing.py"
    path.write_text(VETOING_PLUGIN.replace("ASK", VETOES[how]))
    write_sessions(agent_env, terminal.work, ["OTHER SESSION"])
    fake_llm.set_script([{"text": "Answer one."}, {"text": "Answer two."},
                         {"text": "never arrives", "hang": True, "hang_ms": 60000}])
    term = terminal("-e", str(path))
    ask(term, "question one", "Answer one.")
    term.type("/resume")
    term.press("Enter")
    choose(term, "Resume a session", "OTHER", "OTHER SESSION")
    if how == "after-a-dialog":
        term.wait_for("Allow the resume?")
        term.press("Escape")  # answers the dialog: No
    elif how == "after-a-wait":
        term.wait_for_all("opening the session… (", "s · esc to interrupt)")
        (terminal.work / "release").touch()
    term.wait_for("a plugin cancelled the resume: the current session stays as it was")
    term.press("Escape")
    ask(term, "question two", "Answer two.")  # the next run is not aborted
    term.type("question three")
    term.press("Enter")
    fake_llm.wait_for(lambda: len(fake_llm.requests) == 3 and fake_llm.requests[2]["hanging"])
    term.press("Escape")  # not eaten: it aborts this run
    term.wait_for("aborted")
    screen = term.scrollback()
    assert "resume cancelled" not in screen
    assert screen.count("a plugin cancelled the resume") == 1
    assert "Answer one." in screen and "OTHER SESSION" not in screen.split("a plugin cancelled the resume")[-1]
