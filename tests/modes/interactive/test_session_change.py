"""`session_change`: every interactive session change (`/new`, `/resume`, `/fork`, `/clone`) is awaited through
one shape, the change's `cancelled` flag, and answers the change's result when it was made, None when not."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from agent_forge.modes.interactive.session_commands import SessionCommands, session_change


def fake_ui(said: list[tuple[str, str]], *, interrupted: bool = False, fork_answer: dict | None = None):
    async def interruptible(activity, work):
        return await work, interrupted

    async def fork(entry_id):
        return fork_answer

    editor: list[str] = []
    session = SimpleNamespace(fork=fork, store=SimpleNamespace(session_id="s2"), cwd="/nowhere")
    return SimpleNamespace(interruptible=interruptible, say=lambda text, style="": said.append((text, style)),
                           session=session, show_transcript=lambda: None,
                           editor=SimpleNamespace(set_text=editor.append, texts=editor))


async def answer(cancelled: bool) -> bool:
    return cancelled


def test_a_made_change_answers_its_result_and_a_cancelled_one_none_and_said():
    said: list[tuple[str, str]] = []
    assert asyncio.run(session_change(fake_ui(said), "…", "clone", answer(False))) is False  # not cancelled
    assert said == []
    assert asyncio.run(session_change(fake_ui(said), "…", "clone", answer(True))) is None
    assert asyncio.run(session_change(fake_ui(said, interrupted=True), "…", "clone", answer(True))) is None
    assert said == [("a plugin cancelled the clone: the current session stays as it was", "warning"),
                    ("clone cancelled: the current session stays as it was", "warning")]


def test_a_fork_goes_through_the_same_shape_and_puts_its_text_back_in_the_editor():
    said: list[tuple[str, str]] = []
    ui = fake_ui(said, fork_answer={"text": "the question", "cancelled": False})
    asyncio.run(SessionCommands(ui)._fork("e1"))
    assert ui.editor.texts == ["the question"] and said == [("forked into session s2", "success")]
    vetoed = fake_ui(said, fork_answer={"text": "the question", "cancelled": True})
    asyncio.run(SessionCommands(vetoed)._fork("e1"))
    assert vetoed.editor.texts == [] and said[-1][0].startswith("a plugin cancelled the fork")
