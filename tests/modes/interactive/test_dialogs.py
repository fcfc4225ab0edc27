"""Dialogs fit the rows they are given: the highlighted option stays in view, every row fits the width, and
one row still shows the title with the choice."""

from __future__ import annotations

from agent_forge.modes.interactive.dialogs import Dialogs
from agent_forge.modes.interactive.editor import PromptEditor

FRUITS = ["apple", "banana", "cherry", "durian", "elder", "fig", "grape"]


def rows(dialogs: Dialogs, width: int, height: int) -> list[str]:
    return "".join(text for _, text in dialogs.fragments(width, height)).rstrip("\n").split("\n")


def open_select(title: str = "Pick a fruit", options: list[str] = FRUITS) -> Dialogs:
    dialogs = Dialogs(lambda fields: None, PromptEditor(None), lambda: None)
    dialogs.open({"method": "select", "title": title, "options": options}, lambda fields: None)
    return dialogs


def test_a_long_select_scrolls_to_keep_the_highlighted_option_in_view():
    dialogs = open_select()
    for _ in range(5):
        dialogs.move(1)
    shown = rows(dialogs, 40, 6)
    assert shown[0] == "Pick a fruit (6/7)" and "→ fig" in shown and len(shown) == 6
    assert shown[-1] == "↑↓ move · enter choose · esc cancel"  # the short hint at 40 columns


def test_one_or_two_rows_still_show_the_title_and_the_choice():
    dialogs = open_select()
    dialogs.move(2)
    assert rows(dialogs, 40, 1) == ["Pick a fruit (3/7): → cherry"]
    assert rows(dialogs, 40, 2)[0] == "Pick a fruit (3/7): → cherry"


def test_every_row_fits_the_width_even_with_wide_characters_and_newlines():
    from prompt_toolkit.utils import get_cwidth

    dialogs = open_select("标题\nwith a newline and a long tail of words", ["界" * 30, "b\nc"])
    for height in (1, 3, 5, 12):
        assert all(get_cwidth(row) <= 20 for row in rows(dialogs, 20, height))
        assert len(rows(dialogs, 20, height)) <= height


def test_the_completion_menu_keeps_the_selected_entry_in_the_rows_it_has():
    from types import SimpleNamespace

    from prompt_toolkit.completion import Completion

    from agent_forge.modes.interactive.completion import menu_fragments

    completions = [Completion(f"/c{n}", display_meta="a description long enough to be cut at forty columns")
                   for n in range(10)]
    shown = "".join(text for _, text in menu_fragments(SimpleNamespace(completions=completions, complete_index=6),
                                                       2, 40)).split("\n")
    assert [row.split()[0] for row in shown] == ["/c5", "/c6"] and all(len(row) <= 40 for row in shown)
    assert menu_fragments(None, 8, 40) == []


def test_a_message_at_every_height_shows_its_end_or_marks_what_is_left_out():
    message = "echo " + "a" * 400 + " ; rm -rf ~/LAST"
    for height in range(1, 30):
        dialogs = Dialogs(lambda fields: None, PromptEditor(None), lambda: None)
        dialogs.open({"method": "select", "title": "Allow bash?", "options": ["Allow once", "Reject"],
                      "message": message}, lambda fields: None)
        shown = rows(dialogs, 40, height)
        assert len(shown) <= height and all(len(row) <= 40 for row in shown), (height, shown)
        assert "".join(shown).count("rm -rf ~/LAST") == 1 or dialogs.current.cut, (height, shown)
        if any(row.startswith("… ") for row in shown):
            assert "rm -rf ~/LAST" in "".join(shown) or height < 7, (height, shown)  # the end stays
        whole = "".join(shown[1:shown.index("→ Allow once")]) if "→ Allow once" in shown else ""
        if whole and "more line" not in whole:
            assert whole == message, (height, shown)  # wrapped, nothing cut


def test_an_approval_shows_the_calls_own_command_and_counts_the_characters_it_hides():
    from agent_forge.modes.interactive.dialogs import APPROVAL_MESSAGE, Dialog, head_and_tail

    command = "echo a; " * 4_000 + "echo END"
    request = {"method": "select", "title": "Allow bash: echo a …?", "options": ["Allow once"], "toolCallId": "c1",
               "toolName": "bash", "args": {"command": command}, "message": command[:100] + "[… cut …]"}
    dialog = Dialog(request)
    assert dialog.message == command  # the request's message is cut for protocol clients; the dialog is not
    rows = dialog.wrapped(80)
    shown = head_and_tail(rows, 5, False)
    assert shown[2][1] == f"… {len(rows) - 4:,} more lines, {sum(len(t) for _, t in rows[2:-2]):,} characters " \
                          "(ctrl+o shows all)"
    huge = Dialog({**request, "args": {"command": "x" * (3 * APPROVAL_MESSAGE)}})
    mark = head_and_tail(huge.wrapped(80), 3, False)[1][1]
    assert mark.startswith(f"… {len(huge.wrapped(80)) - 2:,} more lines, {3 * APPROVAL_MESSAGE - 160:,} characters")


def test_one_row_cuts_a_long_title_and_keeps_the_choice_in_view():
    title = "Allow bash: echo " + " ".join(f"arg{n}" for n in range(400))
    dialogs = open_select(title, ["Allow once", "Reject", "Reject with a reason"])
    dialogs.move(1)
    shown = rows(dialogs, 80, 1)
    assert shown[0].startswith("Allow bash: echo arg0") and shown[0].endswith("… (2/3): → Reject"), shown
    assert rows(dialogs, 10, 2)[0] == "(2/3) → R…"  # no room for a title: the position and the choice
    assert rows(dialogs, 19, 1) == ["Al… (2/3): → Reject"]


def test_a_secret_fields_two_line_paste_is_one_row_and_keeps_its_line_break():
    editor = PromptEditor(None)
    editor.paste("sk-one\nsk-two", one_line=True)
    assert "\n" not in editor.buffer.text and editor.text() == "sk-one\nsk-two"
    assert editor.buffer.text == "[paste #1: 2 lines, 13 chars]"
    editor.clear()
    editor.paste("x" * 3000)
    assert editor.buffer.text == "[paste #1: 1 line, 3,000 chars]"  # one line: no plural
