"""The editor's input helpers on real files: a sent message's typed text back, escaped `@"..."` names, the
`@` file index (breadth-first, cut, refreshed), and no control character left in the editor."""

from __future__ import annotations

import pytest

from agent_forge.modes.interactive.completion import attachment_token, attachments, typed_text


@pytest.mark.parametrize("name", ["nl\nname.txt", 'q"uote x.txt', "tab\there.txt", "esc\x1bx.txt", "we ird.txt"])
def test_an_odd_file_name_is_written_on_one_line_and_attached(tmp_path, name):
    (tmp_path / name).write_text("content of it\n")
    token = attachment_token(name)
    assert "\n" not in token and "\x1b" not in token and token.startswith('@"')
    text, _ = attachments(f"look {token} please", str(tmp_path))
    assert "content of it" in text


def test_a_quoted_name_with_a_backslash_that_names_a_file_is_taken_as_written(tmp_path):
    (tmp_path / "a\\nb c.txt").write_text("literal\n")
    text, _ = attachments('see @"a\\nb c.txt"', str(tmp_path))
    assert "literal" in text


def test_typed_text_takes_the_file_blocks_off_and_keeps_the_references(tmp_path):
    (tmp_path / "one.txt").write_text("1\n</file>\n")  # a file holding the closing mark itself
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "two.txt").write_text("2\n")
    typed = "compare @one.txt with @sub/two.txt, then <file name=\"x\"> stays"
    sent, _ = attachments(typed, str(tmp_path))
    assert sent.count("<file name=") == 3 and typed_text(sent, str(tmp_path)) == typed
    assert typed_text("no attachment here", str(tmp_path)) == "no attachment here"


def test_the_file_index_walks_shallow_paths_first_and_says_when_it_was_cut(tmp_path):
    from agent_forge.modes.interactive.file_index import FileIndex

    (tmp_path / "big").mkdir()
    for n in range(50):
        (tmp_path / "big" / f"f{n:02d}.txt").touch()
    (tmp_path / "zz_top.txt").touch()
    index = FileIndex(str(tmp_path), max_files=20)
    files = index.files()
    assert "zz_top.txt" in files and len(files) == 20 and index.truncated
    whole = FileIndex(str(tmp_path))
    assert len(whole.files()) == 51 and not whole.truncated


def test_the_file_index_offers_a_file_created_after_a_refresh(tmp_path):
    from agent_forge.modes.interactive.file_index import FileIndex

    index = FileIndex(str(tmp_path))
    assert index.files() == []
    (tmp_path / "new.txt").touch()
    index.refresh()
    index._thread.join(5)  # the background walk's end, not a sleep
    assert index.files() == ["new.txt"]


def test_a_use_while_a_refresh_walks_waits_for_that_walk(tmp_path, monkeypatch):
    """An `@` typed right after a turn: the refresh's walk has not ended yet, and its list is the one used."""
    import threading

    from agent_forge.modes.interactive import file_index

    index = file_index.FileIndex(str(tmp_path))
    assert index.files() == []
    (tmp_path / "made_by_the_turn.txt").touch()
    gate = threading.Event()  # the walk starts only once `files` waits for it
    real_walk = file_index.walk
    monkeypatch.setattr(file_index, "walk", lambda *args, **kwargs: (gate.wait(5), real_walk(*args, **kwargs))[1])
    index.refresh()
    walking, real_join = index._thread, index._thread.join
    walking.join = lambda timeout=None: (gate.set(), real_join(timeout))[1]
    assert index.files() == ["made_by_the_turn.txt"]


def test_the_editor_keeps_no_control_character(tmp_path):
    from agent_forge.modes.interactive.editor import PromptEditor

    editor = PromptEditor(None)
    editor.buffer.insert_text("a\x1ab\x00c\x1b[31m\td\ne\x9b")
    assert editor.buffer.text == "abc[31m\td\ne"
    assert editor.buffer.cursor_position == len(editor.buffer.text)


def test_the_rpc_refusal_of_a_prompt_while_busy_gets_the_uis_words():
    from agent_forge.coding.errors import BusyError, CommandError
    from agent_forge.modes.interactive.wording import error_text

    shown = error_text(BusyError("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') "
                                 "to queue the message."))
    assert "streamingBehavior" not in shown and "not queued" in shown and "enter queues it" in shown
    assert error_text(CommandError("session is closed")) == "session is closed"
