"""End to end: `/tree` draws the session tree in a real terminal (tmux) against the loopback model server: a
branch made through the UI drawn with its branch lines, the filters and a fold; a 5,000-entry session written
with the session store navigated at 40 columns; entry text full of escapes shown as text."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from agent_forge.coding.session.store import SessionStore
from support.tui import ask, needs_tmux, user_texts

pytestmark = needs_tmux


def wait_for_tree(term, title: str, shown: Callable[[list[str]], bool]) -> str:
    """The screen once it shows `title` and its tree's rows (`tree_rows`) satisfy `shown`, judged on one capture:
    the rows under the title are written after it."""
    seen = [""]

    def drawn() -> bool:
        seen[0] = screen = term.screen()
        if title not in screen or not any(line.startswith("Session tree") for line in screen.split("\n")):
            return False
        return shown(tree_rows(screen))

    term.wait_until(drawn, f"the tree under {title!r}")
    return seen[0]


def tree_rows(screen: str) -> list[str]:
    """The screen's rows from the tree's title to the key hint (or the editor's rule), right spaces cut."""
    lines = [line.rstrip() for line in screen.split("\n")]
    start = next(n for n, line in enumerate(lines) if line.startswith("Session tree"))
    rows = []
    for line in lines[start + 1:]:
        if line.startswith(("↑↓", "────")):
            break
        rows.append(line)
    return rows


def test_a_branch_made_in_the_ui_is_drawn_with_its_branch_lines(terminal, fake_llm):
    fake_llm.set_script([{"text": "Answer one."}, {"text": "Answer two."}, {"text": "Answer three."}])
    term = terminal(columns=40, rows=24)
    ask(term, "question one", "Answer one.")
    ask(term, "question two", "Answer two.")
    term.type("/tree")
    term.press("Enter")
    term.wait_for("Session tree (4/4)")
    term.type("Answer one")
    term.wait_for("→ assistant: Answer one.")
    term.press("Enter")
    term.wait_for("→ Continue from here")
    term.press("Enter")
    term.wait_for("continuing from the chosen entry")
    ask(term, "question three", "Answer three.")
    assert user_texts(fake_llm.requests[2]) == ["question one", "question three"]
    term.type("/tree")
    term.press("Enter")
    wait_for_tree(term, "Session tree (6/6) · messages", lambda rows: rows == [
        "  user: question one",
        "  assistant: Answer one.",
        "  ├─ user: question two",
        "  │  assistant: Answer two.",
        "  └─ user: question three",
        "→    assistant: Answer three. (here)",
    ])
    term.press("Tab")  # your messages only: the same shape without the answers
    wait_for_tree(term, "your messages only", lambda rows: rows == [
        "  user: question one", "  ├─ user: question two", "→ └─ user: question three (here)"])
    term.press("BTab")  # back to the messages: the selection stays on question three
    term.wait_for("→ └─ user: question three\n")
    term.press("C-Left")  # at the start of a segment: fold it
    wait_for_tree(term, "→ └─ user: question three ▸ +1 (here)", lambda rows: bool(rows) and "Answer three." not in rows[-1])
    term.press("C-Right")
    term.wait_for("   assistant: Answer three. (here)")
    term.type("question")  # a search keeps the branch lines
    wait_for_tree(term, "· search", lambda rows: rows == [
        "  user: question one", "  ├─ user: question two", "→ └─ user: question three (here)"])
    term.press("Enter")
    term.wait_for("→ Continue from here")
    term.press("Escape")
    term.wait_until(lambda: "Session tree" not in term.screen(), "the tree to close")


def big_session(project: Path, sessions: Path) -> Path:
    """5,000 entries: a first exchange, then 49 branches of 100 messages hanging off its answer, and the
    active branch (the leaf) a short one, so the resumed transcript stays small."""
    store = SessionStore.create(project, sessions)
    store.append_message({"role": "user", "content": "first question", "timestamp": 1})
    root = store.append_message(answer("first answer"))["id"]
    for branch in range(50):
        store.set_leaf(root)
        for turn in range(50 if branch < 49 else 49):
            store.append_message({"role": "user", "content": f"branch {branch} question {turn}", "timestamp": 1})
            store.append_message(answer(f"branch {branch} answer {turn} with some more words after it"))
    store.close()
    return store.path


def answer(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "provider": "fake",
            "model": "fake-model", "stopReason": "stop", "timestamp": 2}


def test_a_five_thousand_entry_session_at_forty_columns(terminal, agent_env, tmp_path):
    path = big_session(terminal.work, tmp_path / "big-sessions")
    term = terminal("--session", str(path), columns=40, rows=14)
    term.wait_for("branch 49 answer 48")
    term.type("/tree")
    term.press("Enter")
    screen = wait_for_tree(term, "Session tree (", lambda rows: bool(rows) and rows[-1].endswith("(here)"))
    rows = tree_rows(screen)
    assert rows[-1].startswith("→ └─ ") or rows[-1].startswith("→    "), rows
    assert all(len(row) <= 40 for row in rows), rows
    position = screen.split("Session tree (")[1].split(")")[0]
    assert position.split("/")[1] == "5000", screen
    term.press("PageUp")
    term.wait_until(lambda: f"Session tree ({position})" not in (shown := term.screen()) and "Session tree (" in shown
                    and any(row.startswith("→") for row in tree_rows(shown)), "PageUp to move")
    term.type("branch 7 question 3")  # a search over 5,000 entries: every word somewhere in the entry
    found = sum(1 for branch in range(50) for turn in range(50 if branch < 49 else 49)
                if "7" in f"{branch} {turn}" and "3" in f"{branch} {turn}")
    wait_for_tree(term, f"/{found}) · messages", lambda rows: bool(rows) and all("question" in row for row in rows))
    term.press("Up")
    term.resize(40, 7)  # a short terminal: the tree scrolls in the rows left, the selection in view
    seen: list[str] = []

    def fitted() -> bool:  # one capture per check: a second one can be a frame still being drawn
        screen = term.screen()
        seen[:] = [row for row in screen.split("\n") if row.startswith("→ ")]
        return bool(seen) and "↑↓" not in screen

    term.wait_until(fitted, "the tree to fit 7 rows")
    chosen = seen
    assert len(chosen) == 1 and "branch" in chosen[0] and len(chosen[0].rstrip()) <= 40, term.screen()


def test_entry_text_with_escapes_is_shown_as_text(terminal, agent_env, tmp_path):
    store = SessionStore.create(terminal.work, tmp_path / "hostile-sessions")
    store.append_message({"role": "user", "content": "hi \x1b]0;PWNED\x07 \x1b[31mred\x1b[0m \x1b[2J", "timestamp": 1})
    store.append_message(answer("ok \x1b]8;;http://x\x07link\x1b]8;;\x07"))
    store.close()
    term = terminal("--session", str(store.path))
    term.type("/tree")
    term.press("Enter")
    wait_for_tree(term, "Session tree (2/2)", lambda rows: len(rows) == 2
                  and rows[0] == "  user: hi \\x1b]0;PWNED\\x07 \\x1b[31mred\\x1b[0m \\x1b[2J"
                  and rows[1].startswith("→ assistant: ok \\x1b]8;;http://x\\x07link"))
    assert "PWNED" not in term.title()


def test_a_message_with_an_attached_file_shows_its_typed_text_and_the_files_name(terminal, fake_llm):
    (terminal.work / "notes.txt").write_text("".join(f"NOTE-LINE-{n}\n" for n in range(30)))
    fake_llm.set_script([{"text": "Read it."}])
    term = terminal(columns=80, rows=24)
    ask(term, "summarise @notes.txt please", "Read it.")
    term.type("/tree")
    term.press("Enter")
    screen = wait_for_tree(term, "Session tree (2/2)",
                           lambda rows: rows[:1] == ["  user: summarise @notes.txt please [+ notes.txt]"])
    assert "NOTE-LINE" not in screen and "<file" not in screen
