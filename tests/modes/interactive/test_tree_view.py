"""`/tree`'s drawn tree: branch lines show siblings, filters and searches keep the shape, folds hide and count,
the selection follows changes and stays in view, every row fits the width, entry text is shown harmlessly, and
a 5,000-entry session lays out, draws, searches and moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_forge.coding.session.store import SessionStore
from agent_forge.coding.session.tree import get_flat_tree
from agent_forge.modes.interactive.dialogs import Dialogs
from agent_forge.modes.interactive.editor import PromptEditor
from agent_forge.modes.interactive.tree_layout import TreeModel, layout
from agent_forge.modes.interactive.tree_view import TreeDialog


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str = "", calls: list[dict] | None = None) -> dict:
    content = ([{"type": "text", "text": text}] if text else []) + [
        {"type": "toolCall", "id": f"c{n}", "name": c["name"], "arguments": c["arguments"]}
        for n, c in enumerate(calls or [])]
    return {"role": "assistant", "content": content, "provider": "p", "model": "m", "stopReason": "stop",
            "timestamp": 2}


def tool_result(text: str) -> dict:
    return {"role": "toolResult", "toolCallId": "c0", "toolName": "bash", "content": [{"type": "text",
            "text": text}], "isError": False, "timestamp": 3}


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    """q1 → a1 ┬ q2 → [bash: ls] → result → a2 ┬ q3a → a3a
               │                              └ q3b → a3b (the leaf)
               └ q2b → a2b  (labelled "alt")"""
    store = SessionStore.create(tmp_path / "proj", tmp_path / "sessions")
    store.append_model_change("p", "m")
    store.append_message(user("q1"))
    a1 = store.append_message(assistant("a1"))["id"]
    store.append_message(user("q2"))
    store.append_message(assistant(calls=[{"name": "bash", "arguments": {"command": "ls"}}]))
    store.append_message(tool_result("file.txt"))
    a2 = store.append_message(assistant("a2"))["id"]
    for branch in "ab":
        store.set_leaf(a2)
        store.append_message(user(f"q3{branch}"))
        store.append_message(assistant(f"a3{branch}"))
    leaf = store.leaf_id
    store.set_leaf(a1)
    q2b = store.append_message(user("q2b"))["id"]
    store.append_message(assistant("a2b"))
    store.append_label(q2b, "alt")
    store.set_leaf(leaf)
    return store


def model_of(store: SessionStore) -> TreeModel:
    flat = get_flat_tree(store)
    return TreeModel(flat["nodes"], flat["leafId"])


def drawn(rows) -> list[str]:
    return [f"{row.gutter}{'[' + row.item.label + '] ' if row.item.label else ''}"
            f"{row.item.role + ': ' if row.item.role else ''}{row.item.text}{' (here)' if row.here else ''}"
            for row in rows]


def screen(dialog: TreeDialog, width: int = 60, height: int = 30, needle: str = "") -> list[str]:
    return "".join(text for _, text in dialog.draw(needle, width, height)).rstrip("\n").split("\n")


def test_branch_lines_show_which_entries_are_siblings(store):
    assert drawn(layout(model_of(store))) == [
        "user: q1",
        "assistant: a1",
        "├─ user: q2",
        "│  [bash: ls]",
        "│  assistant: a2",
        "│  ├─ user: q3a",
        "│  │  assistant: a3a",
        "│  └─ user: q3b",
        "│     assistant: a3b (here)",
        "└─ [alt] user: q2b",
        "   assistant: a2b",
    ]


def test_the_path_to_the_leaf_is_marked_and_the_leaf_is_here(store):
    rows = layout(model_of(store))
    assert [row.item.text for row in rows if row.on_path] == ["q1", "a1", "q2", "[bash: ls]", "a2", "q3b", "a3b"]
    assert [row.item.text for row in rows if row.here] == ["a3b"]


def test_filters_project_the_tree_on_what_they_show(store):
    model = model_of(store)
    assert drawn(layout(model, filter_="user")) == [
        "user: q1", "├─ user: q2", "│  ├─ user: q3a", "│  └─ user: q3b (here)", "└─ [alt] user: q2b"]
    assert drawn(layout(model, filter_="labelled")) == ["[alt] user: q2b"]
    q2b = next(item.id for item in model.items if item.text == "q2b")
    everything = drawn(layout(model, filter_="all"))
    assert everything[:6] == ["model change: p/m", "user: q1", "assistant: a1", "├─ user: q2", "│  [bash: ls]",
                              "│  [result: bash] file.txt"]
    assert everything[-3:] == ["└─ [alt] user: q2b", "   assistant: a2b", f"   label: {q2b} → alt"]


def test_a_search_keeps_the_tree_shape(store):
    assert drawn(layout(model_of(store), needle="A3")) == ["├─ assistant: a3a", "└─ assistant: a3b (here)"]
    assert drawn(layout(model_of(store), needle="alt q2")) == ["[alt] user: q2b"]  # every word, label too
    assert layout(model_of(store), needle="nothing like it") == []


def test_a_fold_hides_the_branch_under_an_entry_and_counts_it(store):
    model = model_of(store)
    q2 = next(item.id for item in model.items if item.text == "q2")
    rows = layout(model, folded={q2})
    assert drawn(rows) == ["user: q1", "assistant: a1", "├─ user: q2 (here)", "└─ [alt] user: q2b",
                           "   assistant: a2b"]
    assert rows[2].hidden == 6 and rows[2].here  # the leaf is inside the fold


def dialog_for(store: SessionStore, **options) -> tuple[TreeDialog, Dialogs, list[dict]]:
    answers: list[dict] = []
    dialogs = Dialogs(lambda fields: None, PromptEditor(None), lambda: None)
    dialog = TreeDialog(model_of(store), answers.append, **options)
    dialogs.open(dialog)
    return dialog, dialogs, answers


def test_the_dialog_opens_on_the_leaf_and_enter_answers_with_the_entry_id(store):
    dialog, dialogs, answers = dialog_for(store)
    shown = screen(dialog, 100)
    assert shown[0] == "Session tree (9/11) · messages"
    assert "→ │     assistant: a3b (here)" in shown and shown[-1].startswith("↑↓ move · enter actions")
    dialogs.move(-1)
    dialogs.submit()
    assert answers == [{"value": store.get_entry(store.get_entry(store.leaf_id)["parentId"])["id"]}]


def test_the_selection_follows_filter_and_search_changes(store):
    dialog, dialogs, _ = dialog_for(store)
    dialog.press("tab")  # user messages only: a3b's nearest shown ancestor, q3b
    assert dialog.filter == "user" and dialog.selected.item.text == "q3b"
    dialog.press("s-tab")
    assert dialog.filter == "default" and dialog.selected.item.text == "q3b"
    screen(dialog, needle="a2")
    assert [row.item.text for row in dialog.rows] == ["a2", "a2b"] and dialog.selected.item.text == "a2"


def test_fold_and_unfold_keys_move_between_segments(store):
    dialog, dialogs, _ = dialog_for(store)
    dialog.press("c-left")  # a3b → the start of its segment, q3b
    assert dialog.selected.item.text == "q3b"
    dialog.press("c-left")  # on it: fold it
    assert dialog.selected.hidden == 1 and "q3b ▸ +1 (here)" in " ".join(screen(dialog))
    dialog.press("c-left")  # folded: to the segment above (q2's)
    assert dialog.selected.item.text == "q2"
    dialog.press("escape right")  # not folded: to the next segment start
    assert dialog.selected.item.text == "q3a"
    dialog.press("c-right")
    assert dialog.selected.item.text == "q3b"
    dialog.press("c-right")  # folded: unfold
    assert dialog.selected.hidden == 0 and len(dialog.rows) == 11


def test_small_heights_and_narrow_widths_keep_the_selection_in_view(store):
    from prompt_toolkit.utils import get_cwidth

    dialog, dialogs, _ = dialog_for(store)
    for width in (12, 20, 40):
        for height in (1, 2, 3, 5, 8):
            shown = screen(dialog, width, height)
            assert len(shown) <= height and all(get_cwidth(line) <= width for line in shown), (width, height)
            assert any(line.startswith("→") for line in shown)
    assert screen(dialog, 40, 1)[0].startswith("→ │     assistant: a3b")
    for _ in range(8):
        dialogs.move(-1)
    assert screen(dialog, 40, 3)[1:] == ["→ user: q1", "  assistant: a1"]
    dialog.press("pagedown")
    assert dialog.index == 2


def test_entry_text_is_shown_harmlessly_on_one_row(tmp_path):
    store = SessionStore.create(tmp_path / "proj", tmp_path / "sessions")
    store.append_message(user("title \x1b]0;pwned\x07 and\nnew line \x1b[2J 界界"))
    dialog, _, _ = dialog_for(store)
    row = screen(dialog, 80, 10)[1]
    assert "\x1b" not in row and "\x07" not in row
    assert row == "→ user: title \\x1b]0;pwned\\x07 and new line \\x1b[2J 界界 (here)"


def test_a_deep_gutter_keeps_its_end(tmp_path):
    store = SessionStore.create(tmp_path / "proj", tmp_path / "sessions")
    parent = store.append_message(user("root"))["id"]
    for depth in range(40):  # each level has two children: a dead end and the way on
        store.set_leaf(parent)
        store.append_message(user(f"dead end {depth}"))
        store.set_leaf(parent)
        parent = store.append_message(user(f"level {depth}"))["id"]
    dialog, _, _ = dialog_for(store)
    shown = screen(dialog, 40, 6)
    assert "→ …" in shown[-2] and "level 39" in shown[-2] and all(len(line) <= 40 for line in shown)


def test_a_five_thousand_entry_session_lays_out_draws_searches_and_moves(tmp_path):
    # its speed is measured in benchmarks/bench_tree.py, not here (no timed tests)
    store = SessionStore.create(tmp_path / "proj", tmp_path / "sessions")
    branch_point = None
    for turn in range(2500):
        if turn % 100 == 50:
            branch_point = store.leaf_id
        if turn % 100 == 99 and branch_point:
            store.set_leaf(branch_point)
        store.append_message(user(f"question {turn} " + "words " * 30))
        store.append_message(assistant(f"answer {turn} " + "more words " * 30))
    dialog, dialogs, _ = dialog_for(store)
    first = screen(dialog, 100, 40)
    assert len(dialog.rows) == 5000 and dialog.selected is not None and len(first) <= 40
    for needle in ("q", "qu", "que", "ques"):
        dialogs._editor.set_text(needle)
        assert all(len(line) <= 100 for line in screen(dialog, 100, 40, needle))
    assert len(dialog.rows) == 2500  # the questions only
    before = dialog.selected
    for _ in range(100):
        dialogs.move(-1)
        shown = screen(dialog, 100, 40, "ques")
    assert dialog.selected != before and any(line.startswith("→") for line in shown)


def test_the_keys_the_tree_claims_are_bound_while_it_is_open():
    from agent_forge.modes.interactive.keys import OWN_DIALOG_KEYS
    from agent_forge.modes.interactive.tree_view import OWN_KEYS

    assert set(OWN_KEYS) <= set(OWN_DIALOG_KEYS)


def test_several_roots_are_drawn_as_siblings():
    nodes = [{"entry": {"type": "message", "id": "a", "message": user("first root")}, "parentId": None},
             {"entry": {"type": "message", "id": "b", "message": user("orphan root")}, "parentId": None},
             {"entry": {"type": "message", "id": "c", "message": assistant("its answer")}, "parentId": "b"}]
    assert drawn(layout(TreeModel(nodes, "c"))) == ["├─ user: first root", "└─ user: orphan root",
                                                    "   assistant: its answer (here)"]
