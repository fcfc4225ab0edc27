"""The interactive mode's pure parts: the streaming tail stays bounded, shown text cannot reach the terminal
as escape sequences or rich markup, tool blocks and the footer fit what they describe."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from rich.text import Text

from agent_forge.modes.interactive.blocks import assistant_block, retry_notice, user_block
from agent_forge.modes.interactive.footer import compact_count
from agent_forge.modes.interactive.render import clean, to_ansi
from agent_forge.modes.interactive.stream import StreamTail, wrap
from agent_forge.modes.interactive.tool_blocks import ToolCall, shell_block, tool_block

OSC_OR_CLEAR = re.compile(r"\x1b\]|\x1b\[2J|\x1b\[\d*[ABCDHf]")
"""Window titles, hyperlinks, clipboard writes (OSC), clearing the screen, cursor moves."""
HOSTILE = "a\x1b]0;TITLE\x07b\x1b[2Jc\x1b]52;c;ZXZpbA==\x07d\x1b[10;1He\x1b]8;;http://x\x1b\\f\x9b31mg\r\x00h"


def plain_text(ansi: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", ansi)


def test_clean_shows_escapes_and_controls_as_text():
    assert clean(HOSTILE) == ("a\\x1b]0;TITLE\\x07b\\x1b[2Jc\\x1b]52;c;ZXZpbA==\\x07d\\x1b[10;1He"
                              "\\x1b]8;;http://x\\x1b\\f\\x9b31mg\n\\x00h")  # shown, never obeyed
    assert clean(None) == "" and clean("a\tb") == "a    b"


def test_hostile_model_text_renders_without_escape_sequences_or_markup():
    message = {"role": "assistant", "stopReason": "stop",
               "content": [{"type": "text", "text": HOSTILE + " [bold red]x[/bold red] [link](http://evil)"}]}
    ansi = to_ansi([assistant_block(message, show_thinking=False), user_block(HOSTILE)], 80)
    assert not OSC_OR_CLEAR.search(ansi)
    shown = plain_text(ansi)
    assert "[bold red]x[/bold red]" in shown and "a\\x1b]0;TITLE\\x07b" in shown


def test_stream_tail_stays_bounded_however_long_the_message():
    tail = StreamTail(max_lines=10, max_chars=500)
    for i in range(5000):
        tail.feed(f"word{i} " + ("\n" if i % 7 == 0 else ""))
    assert len(tail._lines) <= 10 and len(tail._open) <= 500
    rows = tail.rows(40, 5)
    assert len(rows) == 5 and "word4999" in rows[-1]
    one_line = StreamTail(max_chars=300)
    for i in range(5000):
        one_line.feed("x")
    assert len(one_line._open) == 300 and one_line.chars == 5000


def test_stream_tail_shows_no_blank_rows_around_the_text():
    tail = StreamTail()
    tail.feed("\n\nFirst paragraph.\n\n")
    assert tail.rows(40, 10) == ["First paragraph."] and not tail.blank()
    tail.feed("Second")
    assert tail.rows(40, 10) == ["First paragraph.", "", "Second"]
    blank = StreamTail()
    blank.feed(" \n\n  ")
    assert blank.blank() and blank.rows(40, 10) == []


def test_stream_tail_wraps_a_complete_line_once_per_size(monkeypatch):
    from agent_forge.modes.interactive import stream

    wrapped: list[str] = []
    monkeypatch.setattr(stream, "wrap", lambda line, width, keep: wrapped.append(line) or wrap(line, width, keep))
    tail = StreamTail()
    tail.feed("first line, long enough to take two rows\nthe open line")
    for _ in range(3):  # a redraw per delta: the complete line is measured at the first alone
        assert tail.rows(20, 10) == ["first line, long ", "enough to take two ", "rows", "the open line"]
    assert wrapped.count("first line, long enough to take two rows") == 1 and wrapped.count("the open line") == 3
    assert tail.rows(30, 10) == ["first line, long enough to ", "take two rows", "the open line"]  # resized


@given(st.lists(st.tuples(st.text(alphabet="ab \n\u00e9\u65e5\U0001f1eb\U0001f1f7", max_size=12),
                          st.integers(1, 12), st.integers(1, 6)), max_size=30))
def test_stream_tail_rows_are_those_of_the_text_wrapped_afresh(steps):
    tail, text = StreamTail(max_lines=4), ""
    for delta, width, height in steps:
        tail.feed(delta)
        text += delta
        fresh = StreamTail(max_lines=4)
        fresh.feed(text)
        assert tail.rows(width, height) == fresh.rows(width, height)


def test_the_spinner_fits_the_width_and_is_drawn_only_while_the_model_is_waited_for():
    from agent_forge.modes.interactive.live import LiveState

    live = LiveState()
    assert live.spinner(80) == "" and not live.has_rows()
    live.start()
    assert live.spinner(80).endswith(" thinking… (0 s · esc to interrupt) ") and not live.has_rows()
    assert live.spinner(20).endswith(" thinking… (0 s) ") and len(live.spinner(12)) <= 12
    live.text.feed("Hello")
    assert "thinking" not in live.spinner(80) and live.has_rows()
    live.tool_started({"toolCallId": "c1", "toolName": "bash", "args": {"command": "ls"}})
    assert live.spinner(80) == ""  # the running call's row has its own spinner and time


def test_a_session_call_awaited_outside_a_run_has_the_spinner_and_makes_the_ui_busy():
    from agent_forge.modes.interactive.live import LiveState

    live = LiveState()
    outer = live.begin("summarising the branch left…")
    assert live.busy and live.spinner(80).endswith(" summarising the branch left… (0 s · esc to interrupt) ")
    inner = live.begin("sending the prompt…")
    assert " sending the prompt… (0 s" in live.spinner(80)  # the latest call's
    live.start()  # a run the call started: its own spinner
    assert live.spinner(80).endswith(" thinking… (0 s · esc to interrupt) ")
    live.stop()
    live.end(inner)
    assert " summarising the branch left… (" in live.spinner(80)
    live.end(outer)
    assert not live.busy and live.spinner(80) == ""


def test_an_open_dialogs_keys_replace_the_spinners_abort_hint():
    from agent_forge.modes.interactive.live import LiveState

    live = LiveState()
    live.begin("running /ask…")
    assert live.spinner(80, "enter choose · esc cancel").endswith(" running /ask… (0 s · enter choose · esc cancel) ")
    assert live.spinner(30, "enter choose · esc cancel").endswith(" running /ask… (0 s) ")  # too narrow: left out


def test_wrap_counts_wide_characters_twice():
    assert wrap("ab界c", 3, 10) == ["ab", "界c"]
    assert wrap("x" * 100, 10, 2) == ["x" * 10] * 2


def test_edit_block_shows_a_coloured_diff_and_bash_the_exit_status():
    edit = ToolCall("edit", {"path": "a.py", "edits": []})
    diff = "--- a.py\n+++ a.py\n@@ -1 +1 @@\n-old\n+new"
    result = {"content": [{"type": "text", "text": "ok"}], "details": {"diff": diff}}
    ansi = to_ansi([tool_block(edit, result, False, expanded=False)], 60)
    assert "edit a.py" in plain_text(ansi) and "-old" in ansi and "+new" in ansi
    assert "\x1b[32" in ansi or "\x1b[38;5;2m" in ansi  # green for the added line
    bash = ToolCall("bash", {"command": "make"})
    failed = {"content": [{"type": "text", "text": "\n".join(f"l{i}" for i in range(30)) +
                           "\n\nCommand exited with code 2"}]}
    shown = plain_text(to_ansi([tool_block(bash, failed, True, expanded=False)], 60))
    assert "$ make" in shown and "exit 2" in shown and "earlier lines" in shown and "l0\n" not in shown


def test_shell_block_and_read_range():
    shown = plain_text(to_ansi([shell_block("ls", "f1\nf2\n", 0, 0.25, in_context=False, expanded=False)], 60))
    assert "$ ls (not added to the context)" in shown and "exit 0 · 0.2 s" in shown
    assert ToolCall("read", {"path": "x.py", "offset": 10, "limit": 5}).title() == "read x.py:10-14"


def test_retry_notice_and_counts():
    event = {"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000, "errorMessage": "503"}
    assert retry_notice(event).plain == "retrying in 2 s, retry 1/3: 503"
    assert [compact_count(n) for n in (950, 1234, 34_000, 1_500_000)] == ["950", "1.2k", "34k", "1.5M"]
    assert isinstance(retry_notice(event), Text)
    event["errorMessage"] = "HTTP 529 from https://api.anthropic.com/v1/messages: Overloaded (overloaded_error)"
    assert retry_notice(event).plain == "retrying in 2 s, retry 1/3: 529 Overloaded (overloaded_error)"
    event["errorMessage"] = '529 {"type": "error", "error": {"message": "Overloaded"}}'  # an older session's text
    assert retry_notice(event).plain == "retrying in 2 s, retry 1/3: 529 Overloaded"


def test_a_5_mb_paste_collapses_to_a_marker_and_is_sent_whole(tmp_path):
    from agent_forge.modes.interactive.editor import PromptEditor

    editor = PromptEditor(tmp_path / "history")
    data = "0123456789abcdef\n" * (5 * 1024 * 1024 // 17)
    editor.buffer.insert_text("look: ")
    editor.paste(data)
    assert editor.buffer.text.startswith("look: [paste #1: ") and len(editor.buffer.text) < 100
    assert editor.take() == "look: " + data
    assert editor.buffer.text == "" and (tmp_path / "history").stat().st_size < 1000  # not kept: too long


def test_the_light_theme_changes_the_block_colours():
    from agent_forge.modes.interactive import theme

    try:
        dark = to_ansi([user_block("hi")], 40)
        assert theme.use("light").name == "light"
        light = to_ansi([user_block("hi")], 40)
        assert light != dark and plain_text(light) == plain_text(dark)
        assert theme.use("no-such-theme").name == "dark"
    finally:
        theme.use("dark")


def test_a_pasted_image_path_becomes_an_attachment(tmp_path):
    from agent_forge.modes.interactive.completion import attachments
    from agent_forge.modes.interactive.editor import PromptEditor

    image = tmp_path / "shot.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 20)
    editor = PromptEditor(None)
    editor.paste(f"'{image}'")
    assert editor.buffer.text == f"@{image} "
    text, images = attachments(editor.take() + "what is this?", str(tmp_path))
    assert images and images[0]["mimeType"] == "image/png" and text.startswith(f"@{image} what is this?")
    editor.paste(str(tmp_path / "missing.png"))
    assert editor.buffer.text == str(tmp_path / "missing.png")


def test_collapsed_output_counts_screen_rows_and_the_lines_a_truncation_cut():
    long = "x" * 1000
    shown = plain_text(to_ansi([shell_block("p", f"first\n{long}\n", 0, 0.1, in_context=True, expanded=False)], 70))
    rows = shown.splitlines()
    assert "… 1 earlier line and the start of a long line (ctrl+o to expand)" in shown
    assert sum(1 for row in rows if "xxxx" in row) == 5  # a 1000-character line is 5 rows here, not one line
    bash = ToolCall("bash", {"command": "seq 10000"})
    kept = "\n".join(str(n) for n in range(8001, 10001))
    result = {"content": [{"type": "text", "text": kept + "\n\n[Showing last 2000 lines of 10000.]"}],
              "details": {"truncation": {"totalLines": 10000, "outputLines": 2000}}}
    shown = plain_text(to_ansi([tool_block(bash, result, False, expanded=False)], 60))
    assert "… 9995 earlier lines" in shown and "[Showing last 2000 lines of 10000.]" in shown
    rows = [row.strip() for row in shown.splitlines()]  # the tail is the output's, the note after it
    assert rows[rows.index("10000") - 4:rows.index("10000") + 2] == [
        "9996", "9997", "9998", "9999", "10000", "[Showing last 2000 lines of 10000.]"], rows


def test_a_truncated_shell_block_names_the_full_output_or_why_there_is_none():
    cut = {"truncated": True, "fullOutputPath": "/tmp/full.log"}
    shown = plain_text(to_ansi([shell_block("seq 9", "8\n9\n", 0, 0.1, in_context=True, expanded=False,
                                            result=cut, total_lines=9)], 80))
    assert "[Showing last 2 lines of 9. Full output: /tmp/full.log]" in shown and "… 7 earlier lines" in shown
    unsaved = {"truncated": True, "fullOutputPath": None, "fullOutputError": "No space left on device"}
    shown = plain_text(to_ansi([shell_block("x", "y\n", 0, 0.1, in_context=True, expanded=False, result=unsaved)],
                               80))
    assert "[Showing last 1 line. Full output not saved: No space left on device]" in shown


def test_wrap_breaks_between_words_and_only_inside_a_word_longer_than_a_row():
    assert wrap("hello world this is a test", 10, 10) == ["hello ", "world this", "is a test"]
    assert wrap("abcdefghijklmnop qr", 5, 10) == ["abcde", "fghij", "klmno", "p qr"]


def test_a_5_mb_user_message_shows_its_start_and_how_much_more_was_sent():
    data = "0123456789abcdef0123456789abcdef\n" * (5 * 1024 * 1024 // 33)
    shown = plain_text(to_ansi([user_block(data)], 100))
    assert len(shown) < 20_000 and shown.count("0123456789abcdef0123456789abcdef") == 40
    assert f"… {len(data) - 40 * 33:,} more characters ({data.count(chr(10)) - 40:,} more lines) not shown " \
           f"(ctrl+o to expand); all of it was sent" in shown
    assert plain_text(to_ansi([user_block("short\ntext")], 40)).split() == ["short", "text"]


def test_a_finished_call_keeps_its_duration_when_its_block_is_built_again():
    call = ToolCall("bash", {"command": "make"})
    call.started -= 2.0
    call.finish()
    first = call.elapsed()
    assert 2.0 <= first == call.elapsed()


def test_collapsed_write_and_edit_blocks_count_screen_rows_from_the_top():
    content = "x" * 3000 + "\nsecond\n" + "\n".join(str(i) for i in range(30))
    write = ToolCall("write", {"path": "min.js", "content": content})
    shown = plain_text(to_ansi([tool_block(write, {"content": []}, False, expanded=False)], 80))
    assert sum(1 for row in shown.splitlines() if "xxxx" in row) == 20 and "second" not in shown
    assert "… the rest of a long line and 31 more lines (ctrl+o to expand)" in shown
    full = plain_text(to_ansi([tool_block(write, {"content": []}, False, expanded=True)], 80))
    assert "+second" in full and "+29" in full and "more lines" not in full


def test_the_ascii_fast_path_of_wrap_cuts_the_rows_the_general_one_does():
    import random

    from agent_forge.modes.interactive.stream import _wrap_ascii, _wrap_cells

    rng = random.Random(7)
    for _ in range(3000):
        line = "".join(rng.choice("ab  c") for _ in range(rng.randint(0, 50)))
        width = rng.randint(1, 12)
        assert _wrap_ascii(line, width) == _wrap_cells(line, width), (line, width)


def test_a_long_user_message_expands_with_ctrl_o_up_to_the_larger_limit():
    from agent_forge.modes.interactive.blocks import is_long

    forty = "".join(f"line {n}\n" for n in range(40))
    assert not is_long(forty) and "not shown" not in plain_text(to_ansi([user_block(forty)], 60))
    long = forty + "line 40\n"
    assert is_long(long) and "… 8 more characters (1 more line) not shown (ctrl+o to expand)" in \
        plain_text(to_ansi([user_block(long)], 80))
    assert "line 40" in plain_text(to_ansi([user_block(long, expanded=True)], 80))


def test_quoted_attachments_and_warnings_for_at_words_that_name_no_file(tmp_path):
    from agent_forge.modes.interactive.completion import attachments
    from agent_forge.modes.interactive.editor import PromptEditor

    (tmp_path / "we ird name.txt").write_text("spaced\n")
    (tmp_path / "shot 1.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 20)
    warnings: list[str] = []
    text, images = attachments('read @"we ird name.txt" and @"we ird name.txt"', str(tmp_path), warnings.append)
    assert text.count("spaced") == 1 and warnings == [] and images == []
    text, _ = attachments("read @we ird name.txt and @missing.txt, @alice and @\"no such\"", str(tmp_path),
                          warnings.append)
    assert "spaced" not in text
    assert warnings == ['@we was not attached: no such file; to attach we ird name.txt, write @"we ird name.txt"',
                        f"@missing.txt, was not attached: no such file in {tmp_path}",
                        f'@"no such" was not attached: no such file in {tmp_path}']
    editor = PromptEditor(None)
    editor.paste(str(tmp_path / "shot 1.png"))
    assert editor.buffer.text == f'@"{tmp_path / "shot 1.png"}" '
    assert attachments(editor.take(), str(tmp_path))[1][0]["mimeType"] == "image/png"
    (tmp_path / "notes.txt").write_text("noted\n")
    assert "noted" in attachments("see @notes.txt, then", str(tmp_path), warnings.append)[0]


def test_at_completion_quotes_a_path_with_spaces_and_completes_inside_quotes(tmp_path):
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from agent_forge.modes.interactive.completion import FileCompleter

    (tmp_path / "we ird name.txt").write_text("x")
    completer = FileCompleter(str(tmp_path))
    for typed in ("see @we", 'see @"we ir'):
        [completion] = completer.get_completions(Document(typed), CompleteEvent())
        assert completion.text == '@"we ird name.txt"' and completion.start_position == -len(typed.split(" ", 1)[1])


def test_a_bash_call_whose_arguments_were_not_json_says_it_failed_not_stopped():
    from agent_forge.modes.interactive.tool_blocks import ToolCall, tool_block

    call = ToolCall("bash", {})
    error = {"content": [{"type": "text", "text": "Tool arguments are not valid JSON: Expecting ',' delimiter"}]}
    shown = plain_text(to_ansi([tool_block(call, error, True, expanded=False)], 80))
    assert "bash (no command)" in shown and "failed · " in shown and "stopped" not in shown and "$" not in shown
    timed_out = {"content": [{"type": "text", "text": "x\n\nCommand timed out after 2 seconds"}]}
    shown = plain_text(to_ansi([tool_block(ToolCall("bash", {"command": "sleep 9"}), timed_out, True,
                                           expanded=False)], 80))
    assert "$ sleep 9" in shown and "stopped · " in shown


def test_a_widget_over_ten_lines_says_how_many_more_it_has():
    from agent_forge.modes.interactive.live import LiveState

    live = LiveState()
    live.widgets["w"] = [f"row {n}" for n in range(25)]
    rows = "".join(text for _, text in live.fragments(80, 40)).splitlines()
    assert rows == [*(f"row {n}" for n in range(9)), "… 16 more widget lines"]
    live.widgets["w"] = [f"row {n}" for n in range(10)]
    assert "".join(text for _, text in live.fragments(80, 40)).splitlines()[-1] == "row 9"


def test_the_header_wraps_its_key_hints_between_hints_never_inside_one():
    from agent_forge.modes.interactive.header import header

    for width in (80, 40, 24):
        rows = [row.rstrip() for row in plain_text(to_ansi([header("0.1.0", [], None)], width)).splitlines()]
        hint_rows = [row for row in rows[1:] if row]
        assert all(len(row) <= width for row in rows), rows
        assert " · ".join(hint_rows).endswith("! bash · /hotkeys keys"), rows  # each hint whole, in order
        assert not any(row.startswith("keys") for row in hint_rows), rows


def test_a_running_huge_command_shows_one_bounded_row_with_its_time():
    from agent_forge.modes.interactive.tool_blocks import running_line

    call = ToolCall("bash", {"command": "\n".join(f"echo {n} " + "x" * 5_000_000 for n in range(3))})
    row = running_line(call, "⠋", 60)
    assert "\n" not in row and len(row) <= 60 and row.endswith("… (+2 lines) (0 s)"), row
    assert running_line(ToolCall("bash", {"command": "ls\npwd"}), "⠋", 60) == "⠋ $ ls … (+1 line) (0 s)"


def test_a_newline_in_a_file_name_shows_escaped_in_tool_titles():
    assert ToolCall("write", {"path": "nl\nname.txt"}).title() == "write nl\\nname.txt"
    assert ToolCall("read", {"path": "a\tb", "offset": 2, "limit": 3}).title() == "read a\\tb:2-4"


def test_a_user_message_shows_its_attachments_as_lines_naming_them():
    from agent_forge.coding.file_blocks import file_block
    from agent_forge.modes.interactive.blocks import user_parts

    sent = "\n".join(['see @notes.txt, and @"nl\\nname.txt"', file_block("/w/notes.txt", "a\nb\n"),
                      file_block("/w/nl\nname.txt", "one </file> line")])
    message = {"role": "user", "content": [{"type": "text", "text": sent}, {"type": "image", "data": ""}]}
    assert user_parts(message) == ('see @notes.txt, and @"nl\\nname.txt"', [
        "attached: notes.txt (2 lines)", "attached: nl\\nname.txt (1 line)", "attached: an image"])
    typed = 'a pasted <file name="x">\nnot attached\n</file>'  # no @ reference named it: text
    assert user_parts({"role": "user", "content": typed}) == (typed, [])


def test_a_narrow_terminal_gets_blocks_at_its_own_width_and_one_more_line_is_singular():
    from agent_forge.modes.interactive.blocks import USER_SHOWN_LINES

    rows = plain_text(to_ansi([assistant_block({"role": "assistant", "content": [
        {"type": "text", "text": "Short answer with a few words"}]}, show_thinking=False)], 10)).splitlines()
    assert all(len(row) <= 10 for row in rows) and "answer" in " ".join(rows).split(), rows
    shown = plain_text(to_ansi([user_block("line\n" * USER_SHOWN_LINES + "last")], 100))
    assert "(1 more line) not shown" in " ".join(shown.split()), shown


def test_a_failed_compaction_is_one_sentence_with_the_providers_message():
    from agent_forge.modes.interactive.blocks import compaction_notice

    failed = {"type": "compaction_end", "reason": "threshold", "result": None, "aborted": False,
              "errorMessage": "Compaction failed: HTTP 500 from http://127.0.0.1:9/v1/chat/completions: boom"}
    assert compaction_notice(failed).plain.endswith("compaction failed: 500 boom")
    advice = "Context overflow persists after compaction: 400 too long Compaction keeps the latest messages"
    assert compaction_notice({**failed, "errorMessage": advice, "unresolvedOverflow": True}).plain.endswith(advice)


def test_rows_with_clusters_rich_measures_joined_fit_a_terminal_that_draws_them_apart():
    from agent_forge.modes.interactive.graphemes import widest

    text = "hi \U0001f44d\U0001f3fd x \U0001f469\u200d\U0001f469\u200d\U0001f467 \u2764\ufe0f end"
    answer = assistant_block({"role": "assistant", "content": [{"type": "text", "text": text}]},
                             show_thinking=False, with_error=False)
    for block in (answer, user_block(text)):
        rows = to_ansi([block], 30).split("\n")
        shown = [re.sub(r"\x1b\[[0-9;]*m", "", row) for row in rows]
        assert all(widest(row) <= 30 for row in shown), shown
        assert shown[0].rstrip().endswith(" end")  # only padding was left out


def test_a_failed_read_write_or_edit_shows_its_error_once():
    for name in ("read", "write", "edit"):
        result = {"content": [{"type": "text", "text": "File not found: /w/missing"}]}
        shown = to_ansi([tool_block(ToolCall(name, {"path": "missing"}), result, True, expanded=False)], 80)
        assert shown.count("File not found: /w/missing") == 1, (name, shown)


def test_a_line_cut_in_its_middle_is_no_line_more():
    """`[paste #1: 1 line, ...]` then `(1 more line) not shown` for the rest of that one line (round 33)."""
    one = "x " * 33000
    shown = plain_text(to_ansi([user_block(one)], 100))
    assert "more characters not shown" in shown and "more line" not in shown
    three = "a" * 9000 + "\nb\nc"
    assert "more characters (2 more lines) not shown" in plain_text(to_ansi([user_block(three)], 100))
    from agent_forge.modes.interactive.blocks import USER_SHOWN_CHARS

    at_a_break = "a" * (USER_SHOWN_CHARS - 1) + "\nbbbbbbbbbb\ncccccccccc"  # the cut falls right after a break
    assert "… 21 more characters (2 more lines) not shown" in plain_text(to_ansi([user_block(at_a_break)], 100))
