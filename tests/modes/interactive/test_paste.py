"""Bracketed pastes: only what lies between the marks is pasted (keys typed after a paste are keys, however they
are batched), a forged end-of-paste mark inside the pasted text ends nothing (the terminal's own follows it), a
paste whose end mark never comes is ended and said so, and what a paste holds is inserted as inert text
(`modes/interactive/paste.py`)."""

from __future__ import annotations

from prompt_toolkit.keys import Keys

from agent_forge.modes.interactive.editor import PromptEditor
from agent_forge.modes.interactive.paste import END, PASTE_END_WAIT_S, START, PasteSafeParser, pasted_text


PAUSE = None
"""In `parse`'s bursts: the input pauses there (the key timeout passes, `flush`)."""


def parse(*bursts: str | None, clock=lambda: 0.0) -> list[tuple[object, str]]:
    keys: list = []
    parser = PasteSafeParser(keys.append, clock=clock)
    for burst in bursts:
        parser.flush() if burst is PAUSE else parser.feed_burst(burst)
    parser.flush()
    return [(key.key, key.data) for key in keys]


PASTE = Keys.BracketedPaste


def typed(text: str) -> list[tuple[object, str]]:
    return [(Keys.ControlM, "\r") if char == "\r" else (char, char) for char in text]


def test_keys_typed_after_a_paste_act_however_they_are_batched():
    # a slow link delivers the paste and the keys typed after it in one read, or in reads right after it
    assert parse(f"{START}pasted{END}x\r") == [(PASTE, "pasted"), *typed("x\r")]
    assert parse(f"{START}pasted{END}", "x", "\r") == [(PASTE, "pasted"), *typed("x\r")]
    assert parse(f"{START}a{END}", PAUSE, "!cmd\r") == [(PASTE, "a"), *typed("!cmd\r")]
    assert parse(f"{START}a", f"b{END}", "x") == [(PASTE, "ab"), ("x", "x")]  # a paste over two reads too
    assert parse(f"{START}a{END}\x1b\r") == [(PASTE, "a"), (Keys.Escape, "\x1b"), (Keys.ControlM, "\r")]  # Alt+Enter
    assert parse(f"{START}p{END}", PAUSE, f"x{START}q{END}") == [(PASTE, "p"), ("x", "x"), (PASTE, "q")]


def test_keys_after_a_paste_wait_for_the_pause_before_they_act():
    keys: list = []
    parser = PasteSafeParser(keys.append)
    parser.feed_burst(f"{START}pasted{END}!cmd\r")
    assert keys == []  # held: an end mark arriving before the pause would show the first one was forged
    parser.flush()
    assert [(key.key, key.data) for key in keys] == [(PASTE, "pasted"), *typed("!cmd\r")]


def test_a_forged_end_mark_inside_a_paste_ends_nothing():
    # the terminal's own end mark follows the forged one with no start mark between: the paste goes on to it
    assert parse(f"{START}hello{END}!touch PWNED\r more{END}") == [(PASTE, f"hello{END}!touch PWNED\r more")]
    assert parse(f"{START}a{END}", "!c", "md\r", f"x{END}y") == [(PASTE, f"a{END}!cmd\rx"), ("y", "y")]
    assert parse(f"{START}a{END}!cm", f"d\r{END}") == [(PASTE, f"a{END}!cmd\r")]
    assert parse(f"{START}a{END}b{END}c{END}") == [(PASTE, f"a{END}b{END}c")]
    # and one forging a start mark after its end mark: read as one paste, as what lies between cannot be told
    # from keys typed between two pastes within one read
    forged = f"{START}hello{END}!touch PWNED\r{START}more{END}"
    assert parse(forged) == [(PASTE, f"hello{END}!touch PWNED\r{START}more")]
    assert parse(f"{START}hello{END}!touch", f" PWNED\r{START}mo", f"re{END}x") == [
        (PASTE, f"hello{END}!touch PWNED\r{START}more"), ("x", "x")]


def test_an_end_mark_with_no_paste_pending_makes_what_its_read_holds_before_it_pasted():
    # the terminal stalled past the pause right after a forged mark: the rest of the paste comes on its own
    assert parse(f"{START}a{END}", PAUSE, f"!cmd\r{END}") == [(PASTE, "a"), (PASTE, "!cmd\r")]
    assert parse(f"tail{END}x") == [(PASTE, "tail"), ("x", "x")]


def test_marks_split_over_two_reads_are_marks():
    assert parse("ab\x1b[20", "0~pasted\r\x1b[2", "01~typed\r") == [*typed("ab"), (PASTE, "pasted\r"),
                                                                     *typed("typed\r")]
    assert parse(f"{START}a{END}", "x\x1b[2", "01~") == [(PASTE, f"a{END}x")]
    assert parse("\x1b") == [(Keys.Escape, "\x1b")]  # a lone Escape is one, at the pause


def test_a_paste_whose_end_mark_never_comes_is_ended_after_the_input_paused_and_said_so():
    keys, notes, now = [], [], [0.0]
    parser = PasteSafeParser(keys.append, clock=lambda: now[0], notify=notes.append)
    parser.feed_burst(f"{START}half a paste")
    parser.flush()
    now[0] = PASTE_END_WAIT_S - 0.1
    parser.end_unfinished()
    assert keys == [] and parser.paste_open
    now[0] = PASTE_END_WAIT_S
    parser.end_unfinished()
    parser.feed_burst("x\r")
    parser.flush()
    assert [(key.key, key.data) for key in keys] == [(PASTE, "half a paste"), *typed("x\r")]
    assert notes == [f"a paste did not end: its end mark had not come {PASTE_END_WAIT_S:g} s after its last input, "
                     "so it ends there (12 characters pasted) and keys act again"]


def test_a_cursor_report_after_a_paste_reaches_the_renderer_at_once():
    report = "\x1b[24;1R"
    keys: list = []
    parser = PasteSafeParser(keys.append)
    parser.feed_burst(f"{START}a{END}{report}\r")
    assert [(key.key, key.data) for key in keys] == [(Keys.CPRResponse, report)]  # the rest waits for the pause
    parser.flush()
    assert [(key.key, key.data) for key in keys][1:] == [(PASTE, "a"), (Keys.ControlM, "\r")]


def test_a_mouse_report_with_mouse_reporting_off_is_dropped(capsys):
    assert parse("a\x1b[0mb\x1b[<0;1;1Mc") == [("a", "a"), ("b", "b"), ("c", "c")]
    assert "ignored a mouse report" in capsys.readouterr().err


def test_a_paste_split_over_many_reads_ends_at_its_mark():
    keys = parse(START + "a" * 5000, "b" * 5000 + END[:3], END[3:])
    assert keys == [(Keys.BracketedPaste, "a" * 5000 + "b" * 5000)]
    assert parse(START + "ab", *END, "x") == [(PASTE, "ab"), ("x", "x")]  # one character a read


def test_pasted_control_characters_are_inserted_as_visible_escapes():
    assert pasted_text("a\x1b[201~b\r\nc\rd\te\x00\x9b") == "a\\x1b[201~b\nc\nd\te\\x00\\x9b"
    editor = PromptEditor(None)
    editor.paste(f"{END}!rm -rf x\r")
    assert editor.buffer.text == "\\x1b[201~!rm -rf x\n" and editor.take() == "\\x1b[201~!rm -rf x\n"


def test_input_the_parser_fails_on_is_dropped_with_a_log_line_and_a_taken_paste_kept(capsys, monkeypatch):
    from agent_forge.modes.interactive.paste import PasteSafeInput

    terminal = PasteSafeInput.__new__(PasteSafeInput)  # the parser part only: no terminal in a unit test
    keys: list = []
    terminal._buffer = keys
    terminal.vt100_parser = PasteSafeParser(keys.append)
    terminal.vt100_parser.feed_burst(f"{START}kept{END}")

    def broken(data: str) -> None:
        raise ValueError("not enough values to unpack")

    monkeypatch.setattr(terminal.vt100_parser, "feed_burst", broken)
    terminal._parse(lambda: terminal.vt100_parser.feed_burst("x"))
    assert [(key.key, key.data) for key in keys] == [(Keys.BracketedPaste, "kept")]
    assert "dropped input the key parser failed on: ValueError" in capsys.readouterr().err
