"""Bracketed pastes never act as keys: a forged end-of-paste mark inside the pasted text ends nothing, and what
a paste holds is inserted as inert text (`modes/interactive/paste.py`)."""

from __future__ import annotations

from prompt_toolkit.keys import Keys

from agent_forge.modes.interactive.editor import PromptEditor
from agent_forge.modes.interactive.paste import END, START, PasteSafeParser, pasted_text


PAUSE = None
"""In `parse`'s bursts: the input pauses there (the key timeout passes, `flush`)."""


def parse(*bursts: str | None, clock=lambda: 0.0) -> list[tuple[object, str]]:
    keys: list = []
    parser = PasteSafeParser(keys.append, clock=clock)
    for burst in bursts:
        parser.flush() if burst is PAUSE else parser.feed_burst(burst)
    parser.flush()
    return [(key.key, key.data) for key in keys]


def test_a_forged_end_mark_inside_a_paste_ends_nothing():
    forged = f"{START}hello{END}!touch PWNED\r{START}more{END}"
    assert parse(forged) == [(Keys.BracketedPaste, f"hello{END}!touch PWNED\r{START}more")]


def test_keys_typed_after_a_paste_and_a_pause_act():
    keys = parse(f"{START}pasted{END}", PAUSE, "x", "\r")
    assert keys == [(Keys.BracketedPaste, "pasted"), ("x", "x"), (Keys.ControlM, "\r")]


def test_a_key_right_after_a_paste_acts_without_waiting_for_a_pause():
    paste = Keys.BracketedPaste
    assert parse(f"{START}pasted{END}", "\r") == [(paste, "pasted"), (Keys.ControlM, "\r")]
    assert parse(f"{START}a", f"b{END}", "x") == [(paste, "ab"), ("x", "x")]  # a paste over two reads too
    assert parse(f"{START}a{END}", "!cmd\r") == [(paste, "a"), (paste, "!cmd\r")]  # several keys: its rest


def test_what_arrives_before_the_input_pauses_belongs_to_the_paste():
    paste = Keys.BracketedPaste
    assert parse(f"{START}p{END}x\r") == [(paste, "px\r")]  # the same burst
    assert parse(f"{START}a{END}", "!c", "md", f"x{END}") == [(paste, "a"), (paste, "!c"), (paste, "md"),
                                                             (paste, "x")]
    assert parse(f"{START}a{END}!c", "md", "\r", f"x{END}") == [(paste, f"a{END}!cmd\rx")]
    assert parse(f"{START}a{END}!cm", f"d\r{END}") == [(paste, f"a{END}!cmd\r")]
    assert parse(f"{START}p{END}", f"{START}q{END}") == [(paste, "p"), (paste, "q")]  # a new paste: its own


def test_the_stalled_rest_of_a_paste_stays_text():
    paste, now = Keys.BracketedPaste, [0.0]
    stalled = parse(f"{START}a{END}", PAUSE, "!cmd\rmore", "\r", PAUSE, f"tail{END}", clock=lambda: now[0])
    assert stalled == [(paste, "a"), (paste, "!cmd\rmore"), (Keys.ControlM, "\r"), (paste, "tail")]
    assert parse(f"{START}a{END}", PAUSE, f"!cmd\r{END}") == [(paste, "a"), (paste, "!cmd\r")]
    alt_enter = parse(f"{START}a{END}", PAUSE, "\x1b\r", clock=lambda: now[0])  # one key: acts
    assert alt_enter == [(paste, "a"), (Keys.Escape, "\x1b"), (Keys.ControlM, "\r")]
    late = parse(f"{START}a{END}", PAUSE, "ab", clock=lambda: now.__setitem__(0, now[0] + 2) or now[0])
    assert late == [(paste, "a"), ("a", "a"), ("b", "b")]  # long after the paste: typed


def test_a_key_read_with_a_cursor_report_after_a_paste_acts():
    # The renderer's question answered as Enter is pressed, within a second of a paste: one read, two "keys"
    paste, report = Keys.BracketedPaste, "\x1b[24;1R"
    assert parse(f"{START}a{END}", PAUSE, f"{report}\r") == [(paste, "a"), (Keys.CPRResponse, report),
                                                             (Keys.ControlM, "\r")]
    assert parse(f"{START}a{END}", PAUSE, f"\r{report}{report}") == [
        (paste, "a"), (Keys.ControlM, "\r"), (Keys.CPRResponse, report), (Keys.CPRResponse, report)]
    # several keys: the paste's rest, without the report, which still reaches the renderer
    assert parse(f"{START}a{END}", PAUSE, f"!c{report}md\r") == [(paste, "a"), (paste, "!cmd\r"),
                                                                (Keys.CPRResponse, report)]


def test_a_mouse_report_with_mouse_reporting_off_is_dropped(capsys):
    assert parse("a\x1b[0mb\x1b[<0;1;1Mc") == [("a", "a"), ("b", "b"), ("c", "c")]
    assert "ignored a mouse report" in capsys.readouterr().err


def test_a_paste_split_over_many_reads_ends_at_its_mark():
    keys = parse(START + "a" * 5000, "b" * 5000 + END[:3], END[3:])
    assert keys == [(Keys.BracketedPaste, "a" * 5000 + "b" * 5000)]


def test_pasted_control_characters_are_inserted_as_visible_escapes():
    assert pasted_text(f"a\x1b[201~b\r\nc\rd\te\x00\x9b") == "a\\x1b[201~b\nc\nd\te\\x00\\x9b"
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
