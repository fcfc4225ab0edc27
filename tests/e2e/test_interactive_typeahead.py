"""Prompts typed ahead in the terminal UI: each one is sent, queued or given back, never dropped (round 20 of
issue 10), and what comes back into the editor while a dialog holds it waits for the dialog to close. A plugin's
`input` handler holds prompts in their intake, so a prompt is typed while an earlier one is still being taken in."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.tmux_terminal import TmuxTerminal
from support.tui import READY, needs_tmux, user_texts

pytestmark = needs_tmux

HOLDING_PLUGIN = '''
import asyncio, os

def setup(plugin):
    @plugin.on("input")
    async def hold(event, ctx):
        # "hold ..." waits for ever (until an abort cancels it); "first ..." until the test makes GO_FILE
        while event.text.startswith("hold") or (event.text.startswith("first")
                                                 and not os.path.exists(os.environ["GO_FILE"])):
            await asyncio.sleep(0.01)
'''


@pytest.fixture
def holding(terminal, tmp_path, agent_env):
    plugin, go = tmp_path / "hold.py", tmp_path / "go"
    plugin.write_text(HOLDING_PLUGIN)
    term = TmuxTerminal({**agent_env, "GO_FILE": str(go)}, terminal.work, "-e", str(plugin))
    try:
        term.wait_for_all(READY, "loaded: 1 plugin")
        yield term, go
    finally:
        term.close()


def send(term: TmuxTerminal, *prompts: str) -> None:
    for prompt in prompts:
        term.type(prompt)
        term.press("Enter")


def test_prompts_typed_ahead_are_all_sent_and_refused_ones_come_back_in_their_order(holding, fake_llm, agent_env):
    """Two behaviours on one agent: an Escape refuses three prompts still in their intake while more was
    typed (they come back above it, in the order they were sent: they were lost once the editor held text);
    then prompts typed while the first is taken in are queued behind it (they were refused as "the agent got
    busy", and the third was lost)."""
    term, go = holding
    fake_llm.set_script([{"text": "answer one"}, {"text": "answer two"}, {"text": "answer three"}])
    send(term, "hold one", "hold two", "hold three")
    term.type("typed since")
    term.wait_for("› typed since")
    term.press("Escape")
    back = "not sent. The prompt is back in the editor."  # its lines wrap where their words end
    term.wait_until(lambda: " ".join(term.screen().split()).count(back) == 3, "three refusals")
    term.wait_for("› hold one\n  hold two\n  hold three\n  typed since")
    term.press("C-c")
    term.wait_until(lambda: "› hold one" not in term.screen(), "the editor cleared")
    send(term, "first A", "second B", "third C")
    history = Path(agent_env["AGENT_FORGE_DIR"]) / "prompt-history"
    term.wait_until(lambda: "third C" in history.read_text(), "the third prompt taken from the editor")
    go.write_text("")  # the first one's run starts now, the two behind it still in their intake
    term.wait_until(lambda: fake_llm.requests and "esc to interrupt" not in term.screen(), "the run to end")
    assert user_texts(fake_llm.requests[-1]) == ["first A", "second B", "third C"]
    assert "not queued" not in term.scrollback()


DIALOG_PLUGIN = '''
import asyncio, os

def setup(plugin):
    @plugin.on("input")
    async def hold(event, ctx):
        while not os.path.exists(os.environ["GO_FILE"]):  # the test says when the prompt goes on
            await asyncio.sleep(0.01)

    @plugin.command("pick", description="opens a select")
    async def pick(args, ctx):
        ctx.ui.notify(f"picked {await ctx.ui.select('Pick a letter', ['alpha', 'beta'])}")

    @plugin.command("later", description="sets the editor's text once GO_FILE is there, and opens a select")
    async def later(args, ctx):
        async def when_go():
            while not os.path.exists(os.environ["GO_FILE"]):
                await asyncio.sleep(0.01)
            ctx.ui.set_editor_text("set by the plugin")
            ctx.ui.notify("the editor's text was set")
        task = asyncio.ensure_future(when_go())
        ctx.ui.notify(f"picked {await ctx.ui.select('Pick a letter', ['alpha', 'beta'])}")
        await task
'''


def comes_back_after_the_dialog(term: TmuxTerminal, release, text: str) -> None:
    """With `/pick`'s select open and filtered, `release()` makes `text` come back: it stays out of the filter
    and is in the editor once the dialog is answered."""
    term.wait_for("Pick a letter")
    term.type("be")
    term.wait_for("› be")
    release()
    term.wait_until(lambda: "back in the editor" in " ".join(term.screen().split()), "the text given back")
    assert "› be" in term.screen() and text not in term.screen().split("────")[-2]
    term.press("Enter")
    term.wait_for("picked beta")
    term.wait_for(f"› {text}")


def test_a_prompt_refused_while_a_dialog_is_open_waits_for_it_to_close(terminal, tmp_path, agent_env):
    """The refused prompt (no model: refused once the plugin let it go on) comes back when the dialog closes;
    it was written into the dialog's filter, which then filtered by it."""
    for name in ("models.json", "settings.json"):
        (Path(agent_env["AGENT_FORGE_DIR"]) / name).unlink()
    plugin, go = tmp_path / "dialog.py", tmp_path / "go"
    plugin.write_text(DIALOG_PLUGIN)
    term = TmuxTerminal({**agent_env, "GO_FILE": str(go)}, terminal.work, "-e", str(plugin))
    try:
        term.wait_for("loaded: 1 plugin")
        send(term, "held prompt", "/pick")
        comes_back_after_the_dialog(term, lambda: go.write_text(""), "held prompt")
    finally:
        term.close()


def test_messages_a_failed_run_gives_back_wait_for_an_open_dialog_to_close(terminal, fake_llm, tmp_path,
                                                                          agent_env_factory):
    """A run that fails for good gives its queued messages back; with a plugin's dialog open they were written
    into its filter."""
    env = agent_env_factory(settings={"retry": {"enabled": False}})
    plugin, go = tmp_path / "dialog.py", tmp_path / "go"
    plugin.write_text(DIALOG_PLUGIN)
    go.write_text("")  # the input handler lets every prompt through
    fake_llm.set_script([{"text": "partial answer then an error", "hang_after": 2, "error_after": 3}])
    term = TmuxTerminal({**env, "GO_FILE": str(go)}, terminal.work, "-e", str(plugin))
    try:
        term.wait_for("loaded: 1 plugin")
        send(term, "start")
        term.wait_for("partial")
        send(term, "queued thought")
        term.wait_for("steer: queued thought")
        send(term, "/pick")  # a plugin command runs at once, mid-run
        comes_back_after_the_dialog(term, fake_llm.release_hangs, "queued thought")
    finally:
        term.close()


def test_a_plugin_setting_the_editor_text_while_a_dialog_is_open_sets_it_for_after(terminal, tmp_path, agent_env):
    """It replaced the dialog's filter."""
    plugin, go = tmp_path / "dialog.py", tmp_path / "go"
    plugin.write_text(DIALOG_PLUGIN)
    term = TmuxTerminal({**agent_env, "GO_FILE": str(go)}, terminal.work, "-e", str(plugin))
    try:
        term.wait_for("loaded: 1 plugin")
        send(term, "/later")
        term.wait_for("Pick a letter")
        term.type("be")
        term.wait_for("› be")
        go.write_text("")
        term.wait_for("the editor's text was set")
        assert "› be" in term.screen() and "set by the plugin" not in term.screen()
        term.press("Enter")
        term.wait_for("picked beta")
        term.wait_for("› set by the plugin")
    finally:
        term.close()
