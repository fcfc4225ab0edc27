"""A real AgentSession (session file in tmp_path, coding tools in tmp_path) driven by this test's faux provider."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from support.doubles import Recorder, session_factory  # noqa: F401 (Recorder: imported by the tests here)


@pytest.fixture
def key(faux) -> str:
    """The key of this test's own faux provider (for `set_faux_responses(..., key)`, `faux_requests(key)`)."""
    return faux.key


@pytest.fixture
def make_session(tmp_path: Path, faux):
    """`make_session(settings=None, context_window=128000, tools=None, session_file=None)` → (session, recorder)
    (`support.doubles.session_factory`)."""
    sessions: list = []
    yield session_factory(tmp_path, faux, sessions)
    for session in sessions:
        session.store.close()


@pytest.fixture
def read_entries():
    """`read_entries(session)`: the session file's entries (header left out)."""

    def read(session) -> list[dict[str, Any]]:
        return [json.loads(line) for line in Path(session.store.path).read_text().splitlines()[1:]]

    return read
