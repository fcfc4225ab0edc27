"""`/tree` on a large session (issue 12: "fast on a 5,000-entry session"), in process, no terminal:

- open: the flat tree of the store, the model (each entry's row text), the layout and the first draw;
- a move (Up) and its redraw; a search key (the layout again over every entry); a filter change.

Two session shapes of `--entries` entries: `wide` (50 branches off the first answer) and `deep` (a branch every
100 entries off the branch before, so the gutters grow). Medians over `--runs`.

Run: `.venv/bin/python benchmarks/bench_tree.py [--entries 5000] [--runs 7]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from agent_forge.coding.session.store import SessionStore
from agent_forge.coding.session.tree import get_flat_tree
from agent_forge.modes.interactive.dialogs import Dialogs
from agent_forge.modes.interactive.editor import PromptEditor
from agent_forge.modes.interactive.tree_layout import TreeModel
from agent_forge.modes.interactive.tree_view import TreeDialog


def message(role: str, text: str) -> dict:
    if role == "user":
        return {"role": "user", "content": text, "timestamp": 1}
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "provider": "p", "model": "m",
            "stopReason": "stop", "timestamp": 2}


def session(root: Path, entries: int, shape: str) -> SessionStore:
    store = SessionStore.create(root / "proj", root / "sessions")
    first = None
    for turn in range(entries // 2):
        if shape == "wide" and turn and turn % 50 == 0:
            store.set_leaf(first)
        if shape == "deep" and turn % 50 == 25:
            first = store.leaf_id
        if shape == "deep" and turn % 50 == 49:
            store.set_leaf(first)
        store.append_message(message("user", f"question {turn} " + "words " * 20))
        entry = store.append_message(message("assistant", f"answer {turn} " + "more words " * 30))
        if turn == 0 and shape == "wide":
            first = entry["id"]
    return store


def median_ms(work: Callable[[], None], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def bench(store: SessionStore, runs: int) -> dict[str, float]:
    editor = PromptEditor(None)
    dialogs = Dialogs(lambda fields: None, editor, lambda: None)
    holder: dict[str, TreeDialog] = {}

    def open_() -> None:
        flat = get_flat_tree(store)
        holder["dialog"] = TreeDialog(TreeModel(flat["nodes"], flat["leafId"]), lambda fields: None)
        dialogs.queue[:] = []
        dialogs.open(holder["dialog"])
        dialogs.fragments(100, 40)

    def move() -> None:
        dialogs.move(-1)
        dialogs.fragments(100, 40)

    needles = iter(["q", "qu", "que", "ques", "quest", "questi", "questio", "question"] * runs)

    def search() -> None:
        editor.set_text(next(needles))
        dialogs.fragments(100, 40)

    def filter_() -> None:
        holder["dialog"].press("tab")
        dialogs.fragments(100, 40)

    figures = {"open": median_ms(open_, runs)}
    figures["move"] = median_ms(move, runs * 20)
    figures["search key"] = median_ms(search, runs)
    figures["filter"] = median_ms(filter_, runs)
    figures["rows"] = len(holder["dialog"].rows)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    for shape in ("wide", "deep"):
        with tempfile.TemporaryDirectory() as root:
            figures = bench(session(Path(root), args.entries, shape), args.runs)
        print(f"{shape:5} {args.entries} entries: " + ", ".join(
            f"{name} {value:.1f} ms" if name != "rows" else f"{int(value)} rows after the last filter"
            for name, value in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
