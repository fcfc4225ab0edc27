"""End to end: `--approvals ask` in the terminal UI (tmux): a question is the mode's own select dialog."""

from __future__ import annotations

from support.tui import needs_tmux

pytestmark = needs_tmux


def test_a_write_is_allowed_with_enter_and_a_command_rejected_by_filtering(terminal, fake_llm):
    work = terminal.work
    fake_llm.set_script([
        {"tool_calls": [{"name": "write", "arguments": {"path": "out.txt", "content": "hi\n"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf out.txt"}}]},
        {"text": "Left it alone."},
    ])
    term = terminal("--approvals", "ask")
    term.type("write then clean")
    term.press("Enter")
    term.wait_for_all("Allow write out.txt?", "Always allow the write tool (this session)")  # options under it
    assert not (work / "out.txt").exists()
    term.press("Enter")  # the highlighted first option: Allow once
    term.wait_for("Allow bash: rm -rf out.txt?")
    assert (work / "out.txt").read_text() == "hi\n"
    term.type("tell the model why")  # filters the options: the one rejecting with a reason
    term.press("Enter")
    term.wait_until(lambda: "Allow bash: rm -rf out.txt?" not in term.screen(), "the reason's dialog")
    term.type("keep it")
    term.press("Enter")
    term.wait_for("Left it alone.")
    assert (work / "out.txt").exists()
    rejected = [m for m in fake_llm.requests[-1]["body"]["messages"] if m["role"] == "tool"][-1]
    # the user's words end as a sentence, and the screen shows them too (round 32, 35)
    assert "The user rejected this bash call. The user said: keep it. Do not retry" in str(rejected["content"])
    assert "rejected: keep it" in term.screen()
    term.press("C-d")
    assert term.exit_code() == 0


def test_the_approvals_command_shows_and_changes_the_policy(terminal, fake_llm):
    work = terminal.work
    fake_llm.set_script([{"tool_calls": [{"name": "write", "arguments": {"path": "out.txt", "content": "x"}}]},
                         {"text": "It was refused."}])
    term = terminal()
    term.type("/approvals")
    term.press("Enter")
    term.wait_for("Approvals for this session:")
    # the dialog's title and its options can arrive in separate frames: wait for the option itself
    term.wait_for("approvals: full (every tool call runs)")
    term.type("read-only")
    term.press("Enter")
    term.wait_for("approvals: read-only (only tools that read run) for this session")
    term.type("write it")
    term.press("Enter")
    term.wait_for("It was refused.")
    assert not (work / "out.txt").exists()
    term.type("/approvals nonsense")
    term.press("Enter")
    term.wait_for("Unknown approval policy 'nonsense'")


def test_a_question_opening_while_typing_gives_the_draft_back_when_it_closes(terminal, fake_llm):
    """Round-2 finding: a dialog that opens by itself (here an approval question) emptied the editor, and the
    text being typed was lost when it closed."""
    work = terminal.work
    fake_llm.set_script([
        # the stream stops after "Let " (role chunk, one word) until the draft is typed: no race, no 3 s of delays
        {"text": "Let me look around the project first.", "hang_after": 2,
         "tool_calls": [{"name": "bash", "arguments": {"command": "touch made.txt"}}]},
        {"text": "Not done, as you asked."},
    ])
    term = terminal("--approvals", "ask")
    term.type("make it")
    term.press("Enter")
    term.wait_for("Let")
    term.type("my draft")
    term.wait_for("› my draft")
    fake_llm.release_hangs()
    term.wait_until(lambda: "Allow bash: touch made.txt?" in (shown := term.screen()) and "my draft" not in shown,
                    "the question, the editor its filter now (the draft put aside)")
    term.press("Escape")  # rejects the call
    term.wait_for("Not done, as you asked.")
    term.wait_for("› my draft")
    assert not (work / "made.txt").exists()
