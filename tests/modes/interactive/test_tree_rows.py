"""`/tree`'s row text for user messages: what was typed, `[+ name]` for each file an `@` reference attached and
`[image]` for each image, never the attached file's text; a `<file>` block the user typed stays text."""

from __future__ import annotations

import base64
from pathlib import Path

from agent_forge.coding.intake import user_message
from agent_forge.coding.session.store import SessionStore
from agent_forge.coding.session.tree import get_flat_tree
from agent_forge.modes.interactive.completion import attachments
from agent_forge.modes.interactive.tree_layout import TreeModel, layout

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def user_rows(tmp_path: Path, *typed: str) -> list[str]:
    """The `user:` rows of a session holding `typed` prompts, each sent as the editor sends it (`@path`
    references attached from `tmp_path/work`)."""
    work = tmp_path / "work"
    store = SessionStore.create(work, tmp_path / "sessions")
    for text in typed:
        sent, images = attachments(text, str(work))
        store.append_message(user_message(sent, images))
    flat = get_flat_tree(store)
    rows = layout(TreeModel(flat["nodes"], store.leaf_id))
    return [row.item.text for row in rows if row.item.role == "user"]


def test_an_attached_file_is_named_not_expanded(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("".join(f"NOTE-LINE-{n}\n" for n in range(30)))
    rows = user_rows(tmp_path, "summarise @notes.txt please")
    assert rows == ["summarise @notes.txt please [+ notes.txt]"]


def test_an_image_shows_as_image_and_two_files_as_two_marks(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "shot.png").write_bytes(PNG)
    (work / "a.txt").write_text("alpha\n")
    (work / "we ird.txt").write_text("beta\n")
    rows = user_rows(tmp_path, "look at @shot.png", 'compare @a.txt and @"we ird.txt"')
    assert rows == ["look at @shot.png [image]", 'compare @a.txt and @"we ird.txt" [+ a.txt] [+ we ird.txt]']


def test_a_typed_file_block_and_a_plain_message_stay_as_typed(tmp_path):
    (tmp_path / "work").mkdir()
    typed = 'see this:\n<file name="x">\nINSIDE\n</file>'
    rows = user_rows(tmp_path, "just a question", typed)
    assert rows == ["just a question", 'see this: <file name="x"> INSIDE </file>']


def test_an_attached_name_with_escapes_is_shown_harmlessly(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "evil\x1b]0;t\x07.txt").write_text("body\n")
    rows = user_rows(tmp_path, '@"evil\\x1b]0;t\\x07.txt"')
    assert len(rows) == 1 and "[+ evil\\x1b]0;t\\x07.txt]" in rows[0] and "\x1b" not in rows[0], rows
    assert "body" not in rows[0]
