"""Bracketed pastes never act as keys: a forged end-of-paste mark inside the pasted text ends nothing, and what
a paste holds is inserted as inert text (`modes/interactive/paste.py`)."""

from __future__ import annotations

from prompt_toolkit.keys import Keys

from agent_forge.modes.interactive.editor import PromptEditor
from agent_forge.modes.interactive.paste import END, START, PasteSafeParser, pasted_text


def parse(*bursts: str) -> list[tuple[object, str]]:
    keys: list = []
    parser = PasteSafeParser(keys.append)
    for burst in bursts:
        parser.feed_burst(burst)
    parser.flush()
    return [(key.key, key.data) for key in keys]


def test_a_forged_end_mark_inside_a_paste_ends_nothing():
    forged = f"{START}hello{END}!touch PWNED\r{START}more{END}"
    assert parse(forged) == [(Keys.BracketedPaste, f"hello{END}!touch PWNED\r{START}more")]


def test_keys_typed_after_a_paste_still_act():
    keys = parse(f"{START}pasted{END}", "x\r")
    assert keys == [(Keys.BracketedPaste, "pasted"), ("x", "x"), (Keys.ControlM, "\r")]


def test_a_burst_cut_just_after_a_forged_end_mark_is_still_paste():
    keys = parse(f"{START}hello{END}", f"!touch PWNED\r{END}", "y")
    assert keys == [(Keys.BracketedPaste, "hello"), (Keys.BracketedPaste, "!touch PWNED\r"), ("y", "y")]


def test_the_terminals_write_cut_anywhere_after_a_forged_end_mark_still_pastes():
    paste = Keys.BracketedPaste
    assert parse(f"{START}a{END}!cmd\r", END) == [(paste, "a"), (paste, "!cmd\r")]
    assert parse(f"{START}a{END}!cm", f"d\r{END}") == [(paste, "a"), (paste, "!cmd\r")]
    assert parse(f"{START}a{END}", "!c", "md", f"\r{END}") == [(paste, "a"), (paste, "!cmd\r")]


def test_keys_right_behind_a_paste_act_once_the_input_pauses():
    assert parse(f"{START}p{END}x") == [(Keys.BracketedPaste, "p"), ("x", "x")]
    assert parse(f"{START}p{END}", f"{START}q{END}") == [(Keys.BracketedPaste, "p"), (Keys.BracketedPaste, "q")]


def test_a_paste_split_over_many_reads_ends_at_its_mark():
    keys = parse(START + "a" * 5000, "b" * 5000 + END[:3], END[3:])
    assert keys == [(Keys.BracketedPaste, "a" * 5000 + "b" * 5000)]


def test_pasted_control_characters_are_inserted_as_visible_escapes():
    assert pasted_text(f"a\x1b[201~b\r\nc\rd\te\x00\x9b") == "a\\x1b[201~b\nc\nd\te\\x00\\x9b"
    editor = PromptEditor(None)
    editor.paste(f"{END}!rm -rf x\r")
    assert editor.buffer.text == "\\x1b[201~!rm -rf x\n" and editor.take() == "\\x1b[201~!rm -rf x\n"
