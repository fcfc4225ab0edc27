"""`PasteParser`: a bracketed paste fed in chunks of any size (the end mark split across chunks included)
gives one paste key with exactly the pasted text, keys after it still arrive, and a 5 MB paste in 1 KB chunks
is collected in linear time."""

from __future__ import annotations

import time

import pytest

from agent_forge.modes.interactive.paste_input import PasteParser
from prompt_toolkit.keys import Keys

START, END = "\x1b[200~", "\x1b[201~"


def feed(chunks: list[str]) -> list:
    keys: list = []
    parser = PasteParser(keys.append)
    for chunk in chunks:
        parser.feed(chunk)
    return keys


@pytest.mark.parametrize("size", [1, 2, 3, 5, 6, 7, 100])
def test_chunks_of_any_size_give_the_paste_whole(size):
    stream = "a" + START + "line one\nline two ÄÖ €" + END + "b"
    keys = feed([stream[i:i + size] for i in range(0, len(stream), size)])
    assert [k.key for k in keys] == ["a", Keys.BracketedPaste, "b"]
    assert keys[1].data == "line one\nline two ÄÖ €"


def test_two_pastes_in_one_chunk():
    keys = feed([START + "one" + END + START + END + START + "three" + END])
    assert [k.data for k in keys] == ["one", "", "three"]


def test_a_5_mb_paste_in_1_kb_chunks_is_collected_in_linear_time():
    text = "0123456789 abcdefghij\n" * (5 * 1024 * 1024 // 22)
    stream = START + text + END
    chunks = [stream[i:i + 1024] for i in range(0, len(stream), 1024)]
    started = time.perf_counter()
    keys = feed(chunks)
    elapsed = time.perf_counter() - started
    assert len(keys) == 1 and keys[0].data == text
    assert elapsed < 2.0, f"{elapsed:.2f} s for 5 MB (the quadratic parser took minutes)"
