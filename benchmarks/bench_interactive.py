"""Interactive-mode benchmarks (issue 12 budgets, 2-core machine):

- start → editor ready for typing: launch in a tmux pane until the footer is drawn, median over runs
  (target ≤ 350 ms; includes tmux's own pane start-up, so it slightly overstates);
- a resumed 500-message session from launch: `--session FILE` in a tmux pane until its last answer and the
  footer are on screen (target ≤ 1 s), and rendering its transcript alone (in-process);
- rendering a streamed answer: the live region's cost per delta (feed + redraw of the bounded tail, its rows
  drawn) for 200 deltas in the middle and the last 200 of N, in ASCII, accented, CJK and emoji text; it must
  not grow with the message's length;
- typing: the editor's cost per key (the key's edit and the editor's lines drawn again, its input processors
  included), at the end of a 100-character line of plain text and of one of emoji joined by zero-width joiners.

Run: `.venv/bin/python benchmarks/bench_interactive.py [--runs 10] [--deltas 2000]` (needs tmux; `--stream-only`
for the per-delta figures alone, `--keys-only` for the per-key ones).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from conftest import make_agent_env  # noqa: E402
from support.fake_llm import FakeLLMServer  # noqa: E402
from support.tmux_terminal import TmuxTerminal  # noqa: E402


def start_up(runs: int) -> list[float]:
    """Seconds from launching the CLI in tmux to the footer on screen, per run."""
    return _launches(runs, lambda root: [], ["fake-model •"])


def resumed_start_up(runs: int, count: int = 500) -> list[float]:
    """Seconds from launching `--session FILE` (a `count`-message session) in tmux to its last answer and the
    footer on screen, per run."""
    from agent_forge.coding.session.store import SessionStore

    def session(root: Path) -> list[str]:
        store = SessionStore.create(str(root), root / "sessions")
        for message in _messages(count):
            store.append_message(message)
        store.close()
        return ["--session", str(store.path)]

    return _launches(runs, session, [f"last answer {count // 4 - 1}", "fake-model •"])


def _launches(runs: int, arguments, shown: list[str]) -> list[float]:
    """Seconds from each launch (with `arguments(root)` for the CLI) until every text of `shown` is on screen."""
    server = FakeLLMServer().start()
    times = []
    try:
        with tempfile.TemporaryDirectory() as root:
            env = make_agent_env(Path(root), server)
            args = arguments(Path(root))
            for _ in range(runs):
                started = time.monotonic()
                term = TmuxTerminal(env, Path(root), *args, columns=100, rows=30)
                try:
                    for text in shown:
                        term.wait_for(text, deadline_s=30)
                    times.append(time.monotonic() - started)
                    term.press("C-d")
                    term.exit_code()
                finally:
                    term.close()
    finally:
        server.stop()
    return times


STREAMED_WORDS = {"ASCII": "word", "accented": "héllo", "CJK": "日本語", "flags and skin tones": "🇫🇷👍🏽x"}
"""What `per_delta` streams: each word a delta (with its count and a space), a paragraph every 40."""


def per_delta(deltas: int, word: str = "word") -> tuple[float, float]:
    """Microseconds per delta (feed + the live region's rows as its window gets them: `LiveState.fragments`,
    drawn) over 200 deltas in the middle and the last 200 (the first ones are cheaper: the tail is still
    filling up)."""
    from agent_forge.modes.interactive.live import LiveState

    live = LiveState()
    live.start()
    costs = []
    for i in range(deltas):
        started = time.perf_counter()
        live.text.feed(f"{word}{i} " + ("\n\n" if i % 40 == 39 else ""))
        live.fragments(100, 24)
        costs.append(time.perf_counter() - started)
    middle = deltas // 2
    return statistics.mean(costs[middle:middle + 200]) * 1e6, statistics.mean(costs[-200:]) * 1e6


def per_key(keys: int, line: str) -> float:
    """Microseconds per key: `keys` characters typed at the end of `line` (then as many Left presses), each
    followed by the editor's content drawn at 100 columns, as a redraw after the key draws it."""
    import asyncio

    return asyncio.run(_per_key(keys, line))  # the buffer loads its history in a task of the running loop


async def _per_key(keys: int, line: str) -> float:
    from types import SimpleNamespace

    from prompt_toolkit.application import DummyApplication
    from prompt_toolkit.application.current import set_app

    from agent_forge.modes.interactive.editor import PromptEditor
    from agent_forge.modes.interactive.layout import _editor_control

    editor = PromptEditor(None)
    control = _editor_control(SimpleNamespace(editor=editor, dialogs=SimpleNamespace(current=None)))
    editor.buffer.insert_text(line)
    with set_app(DummyApplication()):  # one for all keys (`get_app` builds one per call without it)
        started = time.perf_counter()
        for i in range(keys):
            editor.buffer.insert_text("abcdefghij"[i % 10])
            _draw(control)
        for _ in range(keys):
            editor.buffer.cursor_position += editor.buffer.document.get_cursor_left_position()
            _draw(control)
        return (time.perf_counter() - started) / (2 * keys) * 1e6


def _draw(control) -> None:
    content = control.create_content(100, 12)
    for row in range(content.line_count):
        content.get_line(row)


def _messages(count: int) -> list[dict]:
    """`count` messages: questions, Markdown answers with a bash call, its result, and a closing answer."""
    messages: list[dict] = []
    for i in range(count // 4):
        answer = f"## Answer {i}\n\nSome **bold** text:\n\n- a\n- b\n\n```python\nprint({i})\n```"
        messages += [{"role": "user", "content": f"question {i}"},
                     {"role": "assistant", "stopReason": "toolUse", "content": [
                         {"type": "text", "text": answer},
                         {"type": "toolCall", "id": f"t{i}", "name": "bash", "arguments": {"command": "ls"}}]},
                     {"role": "toolResult", "toolCallId": f"t{i}", "toolName": "bash", "isError": False,
                      "content": [{"type": "text", "text": "a\nb\nc"}]},
                     {"role": "assistant", "stopReason": "stop",
                      "content": [{"type": "text", "text": f"last answer {i}"}]}]
    return messages


def resumed_render(count: int = 500) -> float:
    """Seconds to render `count` messages (Markdown answers, tool calls and results) for a 100-column screen."""
    from agent_forge.modes.interactive.render import to_ansi
    from agent_forge.modes.interactive.replay import transcript

    messages = _messages(count)
    started = time.perf_counter()
    to_ansi(list(transcript(messages, show_thinking=False, expanded=False)), 100)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--start-only", action="store_true", help="only the two launch figures")
    parser.add_argument("--keys-only", action="store_true", help="only the per-key figures (no tmux)")
    parser.add_argument("--stream-only", action="store_true", help="only the per-delta figures (no tmux)")
    args = parser.parse_args()
    if args.keys_only:
        return typing_costs()
    if args.stream_only:
        return streaming_costs(args.deltas)
    times = start_up(args.runs)
    print(f"start to editor ready: median {statistics.median(times) * 1000:.0f} ms "
          f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}, {len(times)} runs)")
    resumed = resumed_start_up(args.runs)
    print(f"resumed 500-message session, launch to transcript and editor: median "
          f"{statistics.median(resumed) * 1000:.0f} ms (min {min(resumed) * 1000:.0f}, max "
          f"{max(resumed) * 1000:.0f}, {len(resumed)} runs)")
    print(f"resumed 500-message session rendered in {resumed_render() * 1000:.0f} ms")
    if args.start_only:
        return
    streaming_costs(args.deltas)
    typing_costs()


def streaming_costs(deltas: int) -> None:
    for name, word in STREAMED_WORDS.items():
        runs = [per_delta(deltas, word) for _ in range(5)]
        first, last = min(r[0] for r in runs), min(r[1] for r in runs)
        print(f"streaming {deltas} deltas of {name} text: {first:.1f} µs/delta in the middle, {last:.1f} µs/delta "
              "for the last 200 (best of 5)")


def typing_costs() -> None:
    family = "\U0001f469\u200d\U0001f469\u200d\U0001f467"
    for name, line in (("plain text", "word " * 20), ("joined emoji", f"{family} " * 17)):
        costs = [per_key(500, line) for _ in range(7)]
        print(f"typing after 100 characters of {name}: median {statistics.median(costs):.0f} µs/key "
              f"(min {min(costs):.0f}, 7 runs of 1,000 keys)")


if __name__ == "__main__":
    main()
