"""End to end: grapheme clusters whose width prompt_toolkit counts otherwise than the terminal (emoji joined
by zero-width joiners, flags, skin tones, variation selectors) in a real terminal (tmux): the editor wraps a
long line at the terminal's edge, its cursor and deletions take whole clusters (what is sent has no lone
joiner), and the resume picker cuts a row at the terminal's last column and leaves no stale text."""

from __future__ import annotations

import re
from pathlib import Path

from wcwidth import wcswidth

from support.tui import needs_tmux, user_texts

pytestmark = needs_tmux

FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467"
FAMILY_DRAWN = "\U0001f469\U0001f469\U0001f467"  # its parts: 6 columns in every terminal
LINE = f"{FAMILY * 4} family test abcdefghijklmnopqrstuvwxyz 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ end"


def rows_from(screen: str, start: str, count: int) -> list[str]:
    rows = screen.splitlines()
    at = next(n for n, row in enumerate(rows) if row.startswith(start))
    return rows[at:at + count]


def test_a_long_line_of_joined_emoji_wraps_at_the_terminal_edge_with_no_hole(terminal, fake_llm):
    term = terminal(columns=80, rows=24)
    term.type(LINE)
    first, second = rows_from(term.wait_for("XYZ end"), "› ", 2)
    assert "\u200d" not in first and first.startswith(f"› {FAMILY_DRAWN * 4} family test"), first
    assert wcswidth(first) == 80, first  # full to the edge (it was 64: a 16-column hole)
    assert first[2:] + second[2:] == LINE.replace(FAMILY, FAMILY_DRAWN)  # nothing lost, nothing between


def test_right_steps_over_a_joined_emoji_and_ctrl_u_leaves_no_lone_joiner(terminal, fake_llm):
    fake_llm.set_script([{"text": "Got the family."}])
    term = terminal(columns=80, rows=24)
    term.type(LINE)
    term.wait_for("XYZ end")
    term.press("Home", "Right", "Right", "Right", "C-u")  # three emoji, not three code points
    term.type("X")
    term.wait_for("› X")
    term.press("Enter")
    term.wait_for("Got the family.")
    assert user_texts(fake_llm.requests[0])[-1] == "X" + LINE[3 * len(FAMILY):]


def test_backspace_and_delete_take_a_whole_flag_and_skin_toned_emoji(terminal, fake_llm):
    fake_llm.set_script([{"text": "Deleted whole."}])
    term = terminal(columns=80, rows=24)
    term.type("a\U0001f1eb\U0001f1f7b\U0001f44d\U0001f3fdc\u2764\ufe0fd end")
    term.wait_for("d end")
    term.press(*["Left"] * 5, "BSpace", "Left", "BSpace", "Home", "Right", "Delete")  # ❤️, 👍🏽, the flag
    term.press("Enter")
    term.wait_for("Deleted whole.")
    assert user_texts(fake_llm.requests[0])[-1] == "abcd end"


def test_each_kind_of_cluster_is_drawn_in_its_parts(terminal, fake_llm):
    term = terminal(columns=80, rows=24)
    term.type("a\U0001f1eb\U0001f1f7b\U0001f44d\U0001f3fdc\u2764\ufe0fd \U0001f469\U0001f3fd\u200d\U0001f4bb end")
    shown = term.wait_for("› aFRb\U0001f44dc\u2764d \U0001f469\U0001f4bb end")  # a flag as its letters
    assert "\ufe0f" not in shown and "\U0001f3fd" not in shown and "\u200d" not in shown


def write_sessions(env: dict[str, str], cwd: Path, names: list[str]) -> None:
    from agent_forge.coding.session.store import SessionStore

    for name in names:
        store = SessionStore.create(str(cwd), Path(env["AGENT_FORGE_DIR"]) / "sessions")
        store.append_message({"role": "user", "content": "hello", "timestamp": 1})
        store.append_session_info(name)
        store.close()


def test_the_resume_picker_cuts_a_joined_emoji_row_at_the_last_column(terminal, fake_llm, agent_env):
    write_sessions(agent_env, terminal.work, [f"LONGZWJ {FAMILY} " + "v" * 70])
    term = terminal(columns=80, rows=24)
    term.type("/resume")
    term.press("Enter")
    [row] = rows_from(term.wait_for("→ LONGZWJ"), "→ LONGZWJ", 1)
    assert row == f"→ LONGZWJ {FAMILY_DRAWN} " + "v" * (80 - 18) + "…", row
    assert wcswidth(row) == 80  # it ended 4 columns early


def picker_rows(screen: str) -> list[str]:
    """The picker's session rows (under its title, above its key hint), joiners left out: drawn either way,
    each row must read as one whole label."""
    rows = screen.splitlines()
    title = next(n for n, row in enumerate(rows) if row.startswith("Resume a session"))
    hint = next(n for n, row in enumerate(rows) if row.startswith("type to filter"))
    return [row.replace("\u200d", "") for row in rows[title + 1:hint]]


LABEL = re.compile(f"[→ ] 名前 (\\d+) {FAMILY_DRAWN} עברית א www(\\d+) · \\d{{4}}-\\d\\d-\\d\\d \\d\\d:\\d\\d · "
                   "1 message · [0-9a-f]{8}")


def test_the_resume_picker_leaves_no_stale_text_after_scrolling_and_filtering(terminal, fake_llm, agent_env):
    write_sessions(agent_env, terminal.work, [f"名前 {n} {FAMILY} עברית א www{n}" for n in range(200)])
    term = terminal(columns=80, rows=24)
    term.type("/resume")
    term.press("Enter")
    term.wait_for("www")
    for _ in range(40):
        term.press("Down")
    assert_whole_labels(term.wait_for("(41/200)"))
    term.type("www13")
    term.wait_until(lambda: len(picker_rows(term.screen())) == 11, "the 11 rows of www13 and www130-www139")
    assert_whole_labels(term.screen())


def assert_whole_labels(screen: str) -> None:
    """Each picker row is one label, its name's number and its `www` number the same: no row holds text of
    another (a row drawn narrower than prompt_toolkit believed kept the old row's cells)."""
    rows = picker_rows(screen)
    assert rows and all((found := LABEL.fullmatch(row)) and found[1] == found[2] for row in rows), screen


def test_the_scrollback_prints_joined_emoji_whole_and_within_the_width(terminal, fake_llm):
    fake_llm.set_script([{"text": f"Your {FAMILY} family, {FAMILY} again."}])
    term = terminal(columns=80, rows=24)
    term.type(LINE)
    term.press("Enter")
    answer = f"Your {FAMILY} family, {FAMILY} again."
    # the scrollback itself, not the screen: read apart, a redraw between the two reads lost the answer's row
    rows = term.wait_for(answer, where=term.scrollback).splitlines()
    message = [row for row in rows if FAMILY in row or "ABCDEFGHIJKLMNOPQRSTUVWXYZ end" in row]
    assert any(f" {FAMILY * 4} family test" in row for row in message), message  # as typed, joined
    assert any(f"Your {FAMILY} family, {FAMILY} again." in row for row in message), message
    assert all(wcswidth(row) <= 80 for row in message), message  # rich wrapped it as tmux draws it


def test_a_skin_toned_emoji_in_the_scrollback_leaves_no_extra_blank_row(terminal, fake_llm):
    # rich measures 👍🏽 as 2 columns and pads the row to the width; tmux draws it as 4, so the padding's last two
    # spaces made a row of their own: a second blank line after the answer, under the user's block too
    fake_llm.set_script([{"text": "Thumbs \U0001f44d\U0001f3fd up."}, {"text": "Second."}])
    term = terminal(columns=60, rows=24)
    term.type("mine \U0001f44d\U0001f3fd too")
    term.press("Enter")
    term.wait_for("up.")
    term.type("next")
    term.press("Enter")
    rows = term.wait_for("Second.").splitlines()
    at = next(n for n, row in enumerate(rows) if row.startswith("Thumbs"))
    assert rows[at + 1:at + 3] == ["", " next"], rows
    mine = next(n for n, row in enumerate(rows) if row.startswith(" mine"))
    assert rows[mine + 1:mine + 3] == ["", "Thumbs \U0001f44d\U0001f3fd up."], rows
