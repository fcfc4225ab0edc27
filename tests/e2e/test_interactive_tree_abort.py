"""End to end: `/tree`'s summarised move in a real terminal (tmux) against the loopback model server, whose
summary request hangs until released: the spinner and the abort hint show while it runs, Escape or Ctrl+C
aborts it (the session file untouched, the tree still at the old leaf), and a prompt typed meanwhile is queued
with the UI's words, never the RPC refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.tui import ask, choose, needs_tmux, user_texts

pytestmark = needs_tmux

HANGING_SUMMARY = {"text": "SUMMARY: question two was asked.", "hang": True, "hang_ms": 60000}


def session_file(agent_env: dict[str, str]) -> Path:
    files = list((Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl"))
    assert len(files) == 1, files
    return files[0]


def start_summary(term, fake_llm) -> str:
    """Two turns, then `/tree`'s summarised move to the first answer, until its request hangs and the spinner
    with the abort hint shows; returns that screen."""
    ask(term, "question one", "Answer one.")
    ask(term, "question two", "Answer two.")
    term.type("/tree")
    term.press("Enter")
    choose(term, "Session tree", "Answer one", "assistant: Answer one.")
    choose(term, "What to do with this entry?", "summary", "Continue from here, with a summary of the branch left")
    fake_llm.wait_for(lambda: len(fake_llm.requests) == 3 and fake_llm.requests[2]["hanging"])
    return term.wait_for_all("summarising the branch left… (", "s · esc to interrupt)")


def still_at_old_leaf(term) -> None:
    term.type("/tree")
    term.press("Enter")
    term.wait_for("→ assistant: Answer two. (here)")
    term.press("Escape")
    term.wait_until(lambda: "Session tree" not in term.screen(), "the tree to close")


@pytest.mark.parametrize("key", ["Escape", "C-c"])
def test_escape_or_ctrl_c_aborts_the_branch_summary_and_nothing_moves(terminal, fake_llm, agent_env, key):
    fake_llm.set_script([{"text": "Answer one."}, {"text": "Answer two."}, HANGING_SUMMARY])
    term = terminal()
    start_summary(term, fake_llm)
    before = session_file(agent_env).read_bytes()
    term.press(key)
    term.wait_for("branch summary aborted: the conversation stays where it was (nothing was written)")
    term.wait_until(lambda: "summarising the branch left" not in term.screen(), "the spinner to go")
    fake_llm.wait_for(lambda: fake_llm.requests[2]["client_disconnected"])  # the request itself was stopped
    assert "continuing from the chosen entry" not in term.screen()
    assert session_file(agent_env).read_bytes() == before
    still_at_old_leaf(term)
    assert len(fake_llm.requests) == 3


def test_a_prompt_typed_during_the_summary_is_queued_and_sent_after_the_move(terminal, fake_llm):
    fake_llm.set_script([{"text": "Answer one."}, {"text": "Answer two."}, HANGING_SUMMARY,
                         {"text": "Answer three."}])
    term = terminal()
    start_summary(term, fake_llm)
    term.type("question three")
    term.press("Enter")
    screen = term.wait_for("steer: question three")
    assert "streamingBehavior" not in screen and "already processing" not in screen
    fake_llm.release_hangs()
    term.wait_for_all("continuing from the chosen entry (the branch left is summarised)", "Answer three.")
    sent = fake_llm.requests[3]
    assert user_texts(sent)[0] == "question one" and user_texts(sent)[-1] == "question three"
    assert "Answer two." not in str(sent["body"]["messages"])


def test_escape_during_the_summary_brings_a_typed_prompt_back_into_the_editor(terminal, fake_llm):
    fake_llm.set_script([{"text": "Answer one."}, {"text": "Answer two."}, HANGING_SUMMARY])
    term = terminal()
    start_summary(term, fake_llm)
    term.type("question three")
    term.press("Enter")
    term.wait_for("steer: question three")
    term.press("Escape")
    term.wait_for_all("branch summary aborted", "› question three")
    term.wait_until(lambda: "steer: question three" not in term.screen(), "the queue to be emptied")
    assert len(fake_llm.requests) == 3  # nothing sent: not the prompt, not the move's run


def compacting(terminal, fake_llm, agent_env_factory):
    """A terminal after two answers whose `/compact` waits on a summary request that hangs (spinner shown)."""
    filler = " ".join(f"w{i}" for i in range(150))
    env = agent_env_factory(settings={"compaction": {"keepRecentTokens": 60}})
    fake_llm.set_script([{"text": "First answer. " + filler}, {"text": "Second answer. " + filler},
                         {"text": "## Goal\nSummary.", "hang": True, "hang_ms": 60000}])
    term = terminal(env=env)
    ask(term, "one " + filler, "First answer.")
    ask(term, "two " + filler, "Second answer.")
    term.type("/compact")
    term.press("Enter")
    fake_llm.wait_for(lambda: len(fake_llm.requests) == 3 and fake_llm.requests[2]["hanging"])
    term.wait_for("s · esc to interrupt)")
    return term


def test_ctrl_c_aborts_compact_and_a_prompt_typed_meanwhile_comes_back(terminal, fake_llm, agent_env_factory):
    term = compacting(terminal, fake_llm, agent_env_factory)
    term.type("question three")
    term.press("Enter")
    screen = term.wait_for("steer: question three")  # queued, as during a run
    assert "streamingBehavior" not in screen and "already processing" not in screen
    term.press("C-c")
    term.wait_for_all("compaction aborted: the conversation stays as it was", "› question three")
    fake_llm.wait_for(lambda: fake_llm.requests[2]["client_disconnected"])
    assert len(fake_llm.requests) == 3


def test_an_aborted_compact_is_a_warning_in_the_uis_words_said_once(terminal, fake_llm, agent_env_factory):
    """The user's own Escape showed the RPC error `Compaction aborted` as an error line."""
    term = compacting(terminal, fake_llm, agent_env_factory)
    term.press("Escape")
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the spinner to go")
    term.type("/thinking")
    term.press("Enter")
    term.wait_for("thinking level: ")  # printed after anything the abort printed
    said = [line for line in term.scrollback().splitlines() if "compaction aborted" in line.lower()]
    assert said == ["compaction aborted: the conversation stays as it was (nothing was written)"], said
    assert len(fake_llm.requests) == 3


WAITING_PLUGIN = '''
import asyncio
from pathlib import Path


def setup(plugin):
    @plugin.command("wait", description="waits for a server that never answers")
    async def wait(args, ctx):
        try:
            await asyncio.sleep(3600)
        finally:
            Path("stopped.txt").write_text("cancelled")
'''


@pytest.mark.parametrize("key", ["Escape", "C-c"])
def test_a_plugin_command_that_waits_shows_the_spinner_and_escape_or_ctrl_c_cancels_it(terminal, fake_llm,
                                                                                      tmp_path, key):
    fake_llm.set_script([{"text": "Answer after."}])
    plugin = tmp_path / "wait.py"
    plugin.write_text(WAITING_PLUGIN)
    term = terminal("-e", str(plugin))
    term.type("/wait")
    term.press("Enter")
    term.wait_for_all("running /wait… (", "s · esc to interrupt)")
    term.press(key)
    term.wait_until(lambda: (terminal.work / "stopped.txt").exists(), "the command to be cancelled")
    term.wait_until(lambda: "running /wait" not in term.screen(), "the spinner to go")
    ask(term, "question", "Answer after.")


SLOW_INPUT_PLUGIN = '''
import asyncio


def setup(plugin):
    @plugin.on("input")
    async def hang_input(event, ctx):
        if event.text.startswith("hang"):
            await asyncio.sleep(3600)
'''


def test_a_prompt_held_by_a_plugin_input_handler_shows_the_spinner_and_escape_takes_it_back(terminal, fake_llm,
                                                                                          tmp_path):
    fake_llm.set_script([{"text": "Answer after."}])
    plugin = tmp_path / "slow_input.py"
    plugin.write_text(SLOW_INPUT_PLUGIN)
    term = terminal("-e", str(plugin))
    term.type("hang on")
    term.press("Enter")
    term.wait_for_all("sending the prompt… (", "s · esc to interrupt)")
    term.press("Escape")
    term.wait_for_all("Aborted while plugin input handlers were running: the prompt was not sent.", "› hang on")
    assert fake_llm.requests == []
    term.press("C-c")  # clears the editor
    term.wait_until(lambda: "› hang on" not in term.screen(), "the editor to be cleared")
    ask(term, "question", "Answer after.")
