"""The terminal UI under test in tmux, set up one way for every end-to-end test of it: `needs_tmux` (the skip
mark), the `terminal` fixture (the CLI started in `tmp_path/work`, waited for until its start-up ended, closed
at teardown; `tests/e2e/conftest.py` offers it to every e2e test) and the steps tests share (`ask`, `choose`,
`flat`, `user_texts`).

Each wait reads the screen for a state (`TmuxTerminal.wait_for`), never sleeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from .tmux_terminal import TmuxTerminal, tmux_available

READY = "fake-model •"  # the footer: the UI is up

needs_tmux = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed (.ci/run installs it)")


@pytest.fixture
def terminal(agent_env: dict[str, str], tmp_path: Path) -> Iterator[Any]:
    """A function starting the CLI (its arguments; `columns`, `rows`, `env` in place of `agent_env`) in tmux in
    `tmp_path/work` (its `work`), returning the terminal once start-up ended (`started`); every terminal is
    closed at teardown."""
    work = tmp_path / "work"
    work.mkdir()
    opened: list[TmuxTerminal] = []

    def start(*args: str, columns: int = 100, rows: int = 30, env: dict[str, str] | None = None) -> TmuxTerminal:
        term = TmuxTerminal(env or agent_env, work, *args, columns=columns, rows=rows)
        opened.append(term)
        term.wait_for(READY)
        started(term)
        return term

    start.work = work  # type: ignore[attr-defined]
    yield start
    for term in opened:
        term.close()


def started(term: TmuxTerminal) -> None:
    """Wait for the end of start-up: the footer's `loading…` is gone once plugins are loaded and the header, a
    resumed transcript and the warnings are printed (the editor and footer are painted before them)."""
    term.wait_until(lambda: "loading…" not in term.screen(), "the end of start-up (no loading… in the footer)")


def user_texts(request: dict[str, Any]) -> list[str]:
    """The user messages' texts of a request the fake model received (OpenAI chat completions shape)."""
    texts = []
    for message in request["body"]["messages"]:
        if message["role"] == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return texts


def ask(term: TmuxTerminal, prompt: str, answer: str) -> None:
    """Send `prompt`, then wait for `answer` on screen and for the run to end."""
    term.type(prompt)
    term.press("Enter")
    term.wait_for(answer)
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")


def flat(term: TmuxTerminal) -> str:
    """The screen's words joined by single spaces (wrapped lines read as one)."""
    return " ".join(term.screen().split())


def choose(term: TmuxTerminal, title: str, needle: str, row: str) -> None:
    """In the open dialog `title`, filter with `needle` until `row` is highlighted, then Enter."""
    term.wait_for(title)
    term.type(needle)
    term.wait_for(f"→ {row}")
    term.press("Enter")
