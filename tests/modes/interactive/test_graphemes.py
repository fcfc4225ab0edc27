"""graphemes.py: each cluster whose width prompt_toolkit and terminals count differently is drawn in parts
whose width they agree on (checked against tmux itself), the cursor and deletions of the editor keep to
cluster edges, and the width helpers (fit, the dialogs' wrap, the stream's rows) measure what is drawn."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prompt_toolkit.document import Document
from prompt_toolkit.layout.processors import TransformationInput
from prompt_toolkit.utils import get_cwidth
from rich.cells import cell_len

from agent_forge.modes.interactive.dialogs import wrap
from agent_forge.modes.interactive.editor import ClusterBuffer
from agent_forge.modes.interactive.graphemes import cells, cut, drawn, drawn_fragments, snapped
from agent_forge.modes.interactive.render import fit
from agent_forge.modes.interactive.stream import wrap as stream_wrap
from agent_forge.modes.interactive.visible import ShowInvisible

FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467"
KINDS = {  # each kind of cluster, and how it is drawn
    "zero-width joiners": (FAMILY, "\U0001f469\U0001f469\U0001f467"),
    "joiners and a skin tone": ("\U0001f469\U0001f3fd\u200d\U0001f4bb", "\U0001f469\U0001f4bb"),
    "skin-tone modifier": ("\U0001f44d\U0001f3fd", "\U0001f44d"),
    "skin tone on a narrow base": ("\u270c\U0001f3fd", "\u270c"),
    "flag": ("\U0001f1eb\U0001f1f7", "FR"),
    "lone regional indicator": ("\U0001f1eb", "F"),
    "variation selector 16": ("\u2764\ufe0f", "\u2764"),
    "joined with a selector": ("\u2764\ufe0f\u200d\U0001f525", "\u2764\U0001f525"),
    "keycap": ("#\ufe0f\u20e3", "#\u20e3"),
    "variation selector 15": ("\U0001f600\ufe0e", "\U0001f600"),
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_is_drawn_in_its_parts(kind):
    text, shown = KINDS[kind]
    assert drawn(f"a {text} b") == f"a {shown} b" and drawn(shown) == shown  # idempotent
    assert cells(text) == get_cwidth(shown) <= get_cwidth(text)


def test_plain_text_and_escaped_joiners_are_drawn_as_they_are():
    for text in ("plain", "名前 עברית", "e\u0301", "x\\u200dy", "\U0001f3fd at a line's start", ""):
        assert drawn(text) == text
    assert drawn("x\n\U0001f3fd") == "x\n\U0001f3fd"  # a modifier alone on its line is its own swatch


PIECES = st.text(st.sampled_from(["a", "\n", "\u200d", "\ufe0f", "\ufe0e", "\U0001f469", "\U0001f3fd", "\U0001f1eb",
                                   "\u2764", "名", "\u00a9", "\u20e3"]), max_size=12)


@given(PIECES)
def test_no_joiner_reaches_the_terminal_and_nothing_is_drawn_wider(text):
    """The editor shows each joiner escaped (`SHOWN`: not between pictographs) or leaves it out of the
    drawing; `drawn` is idempotent and never wider."""
    shown = ShowInvisible().apply_transformation(TransformationInput(None, Document(text), 0, lambda i: i,
                                                                    [("", line) for line in [text]], 80, 1))
    assert "\u200d" not in "".join(fragment[1] for fragment in shown.fragments)
    assert drawn(drawn(text)) == drawn(text) and cells(text) <= get_cwidth(text)


def tmux_width(text: str) -> int:
    """The columns tmux gives `text`: printed before digits in a 30-column pane, the digits left on its row."""
    socket = f"af-width-{uuid.uuid4().hex[:12]}"
    path = Path(f"/tmp/{socket}.txt")
    path.write_text(f"|{text}{'0123456789' * 5}\n")
    command = ["tmux", "-L", socket, "-f", "/dev/null"]
    try:
        subprocess.run([*command, "new-session", "-d", "-x", "30", "-y", "5",
                        f"cat {path}; tmux -L {socket} wait-for -S printed; sleep 60"], check=True, timeout=10)
        subprocess.run([*command, "wait-for", "printed"], check=True, timeout=10)  # the text is on screen
        row = subprocess.run([*command, "capture-pane", "-p"], capture_output=True, text=True,
                             timeout=10).stdout.splitlines()[0]
    finally:
        subprocess.run([*command, "kill-server"], capture_output=True, timeout=10)
        path.unlink()
        Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)  # tmux leaves its socket file behind
    return 29 - len(row[row.index("0123"):])


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("kind", KINDS)
def test_tmux_gives_each_drawn_cluster_the_columns_prompt_toolkit_counts(kind):
    text, shown = KINDS[kind]
    assert tmux_width(shown) == get_cwidth(shown) == cells(text)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("text", [FAMILY, "\U0001f468\u200d\U0001f466", "\U0001f1eb\U0001f1f7"])
def test_the_scrollback_measures_joined_emoji_and_flags_as_tmux_draws_them(text):
    # rich prints them whole; with a skin tone or a variation selector rich counts 2, as kitty or WezTerm
    # draw them, where tmux 3.3a gives 4 and 1 (it does not join those)
    assert cell_len(text) == tmux_width(text) == 2 != get_cwidth(text)


def test_fragments_are_drawn_across_their_edges_and_keep_their_handlers():
    handler = object()
    fragments = [("a", "x\U0001f469"), ("b", "\u200d\U0001f467 \U0001f1eb"), ("c", "\U0001f1f7", handler)]
    assert drawn_fragments(fragments) == [("a", "x\U0001f469"), ("b", "\U0001f467 F"), ("c", "R", handler)]
    plain = [("", "nothing to do")]
    assert drawn_fragments(plain) is plain


def test_every_row_of_the_live_region_is_drawn_once_by_its_builder():
    from agent_forge.modes.interactive.live import LiveState

    live = LiveState()
    live.start()
    live.text.feed(f"streamed {FAMILY} and \U0001f1eb\U0001f1f7\nnext \U0001f44d\U0001f3fd")
    live.steering.append(f"queued {FAMILY}")
    live.widgets["w"] = ["widget \u2764\ufe0f"]
    rows = [text for _, text in live.fragments(80, 20)]
    assert rows == [f"streamed {KINDS['zero-width joiners'][1]} and FR\n", "next \U0001f44d\n",
                    f"steer: queued {KINDS['zero-width joiners'][1]}\n", "widget \u2764\n"]
    assert all(drawn(row) == row for row in rows)  # the window draws nothing again (`layout.live_fragments`)


def test_snapping_moves_a_position_inside_a_cluster_to_its_edge():
    text = f"ab{FAMILY}cd"
    assert [snapped(text, at, True) for at in range(len(text) + 1)] == [0, 1, 2, 7, 7, 7, 7, 7, 8, 9]
    assert [snapped(text, at, False) for at in range(len(text) + 1)] == [0, 1, 2, 2, 2, 2, 2, 7, 8, 9]
    flags = "\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea"  # two flags: pairs counted from the start
    assert snapped(flags, 1, True) == 2 and snapped(flags, 3, False) == 2 and snapped("e\u0301x", 1, True) == 2


def buffer(text: str, cursor: int) -> ClusterBuffer:
    result = ClusterBuffer(multiline=True)
    result.document = Document(text, len(text))
    result.cursor_position = cursor
    return result


def test_the_editor_buffer_moves_and_deletes_whole_clusters():
    editor = buffer(f"{FAMILY}{FAMILY} x", 0)
    editor.cursor_position += 1  # Right
    assert editor.cursor_position == 5
    editor.cursor_position -= 1  # Left
    assert editor.cursor_position == 0
    editor.cursor_position = 7  # Home+count, Up/Down, a history entry: inside the second emoji
    assert editor.cursor_position == 10
    assert editor.delete_before_cursor() == FAMILY and editor.text == f"{FAMILY} x"
    editor.cursor_position = 0
    assert editor.delete() == FAMILY and editor.text == " x"


def test_line_kills_from_any_position_leave_whole_clusters():
    for kill in ("u", "k"):
        for at in range(len(FAMILY) * 3 + 1):
            editor = buffer(FAMILY * 3, at)  # the cursor lands at an edge first, wherever it was put
            position = editor.cursor_position
            if kill == "u":
                editor.delete_before_cursor(position)
            else:
                editor.delete(len(editor.text) - position)
            assert editor.text in ("", FAMILY, FAMILY * 2, FAMILY * 3), (kill, at, editor.text)


def test_word_kills_take_whole_clusters():
    editor = buffer("cafe\u0301 x", 5)  # after `é`, a letter and a combining mark
    editor.delete_before_cursor(-editor.document.find_start_of_previous_word())  # Alt+Backspace: the mark
    assert editor.text == "caf x"  # and its letter, not the mark alone
    editor = buffer(f"ab{FAMILY}cd", 0)
    editor.cursor_position += editor.document.find_next_word_ending()  # Alt+F: the end of `ab`
    editor.delete(editor.document.find_next_word_ending())  # Alt+D: the emoji (a non-word run)
    assert editor.text == "abcd"


def test_the_editor_shows_clusters_drawn_and_maps_the_cursor_over_them():
    text = f"{FAMILY}\U0001f1eb\U0001f1f7x\u200dy"
    shown = ShowInvisible().apply_transformation(TransformationInput(None, Document(text), 0, lambda i: i,
                                                                    [("", text)], 80, 1))
    assert "".join(fragment[1] for fragment in shown.fragments) == "\U0001f469\U0001f469\U0001f467FRx\\u200dy"
    assert [shown.source_to_display(at) for at in (0, 5, 6, 7, 8, len(text))] == [0, 3, 4, 5, 6, 13]
    assert shown.display_to_source(3) == 5 and shown.display_to_source(5) == 7


def test_the_width_helpers_measure_what_is_drawn():
    assert fit(f"{FAMILY} " + "v" * 20, 12) == f"{FAMILY} vvvv…"  # the text itself, cut at 11 columns drawn
    assert fit("\U0001f1eb\U0001f1f7 flag", 7) == "\U0001f1eb\U0001f1f7 flag"  # `FR flag`: 7 columns
    assert fit("e\u0301" * 5, 3) == "e\u0301e\u0301…"  # never a mark cut from its letter
    assert cut(f"a{FAMILY}", 3) == "a" and cut(f"a{FAMILY}", 7) == f"a{FAMILY}"
    assert wrap(FAMILY * 3, 7) == [("", FAMILY)] * 3
    assert stream_wrap(f"{FAMILY} {FAMILY}", 7, 5) == ["\U0001f469\U0001f469\U0001f467 ",
                                                       "\U0001f469\U0001f469\U0001f467"]
