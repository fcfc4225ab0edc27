"""A real AgentSession (session file in tmp_path, coding tools in tmp_path) driven by the scripted faux model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agent_forge.ai.providers.faux import faux_model, stream
from agent_forge.coding.factory import SessionOptions, create_session


class Recorder:
    """Collects events (without message_update) and lets a test await one."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._waiters: list[tuple[str, asyncio.Future]] = []

    def __call__(self, event: dict[str, Any]) -> None:
        if event["type"] == "message_update":
            return
        self.events.append(event)
        for kind, future in list(self._waiters):
            if kind == event["type"] and not future.done():
                future.set_result(event)

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    async def reached(self, kind: str, timeout: float = 10) -> dict[str, Any]:
        if self.of(kind):
            return self.of(kind)[-1]
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((kind, future))
        return await asyncio.wait_for(future, timeout)


@pytest.fixture
def key(request) -> str:
    """A faux script key of this test's own (the faux queues are process-wide)."""
    return request.node.name


@pytest.fixture
def make_session(tmp_path: Path, key: str):
    """`make_session(settings=None, context_window=128000, tools=None, session_file=None)` → (session, recorder)."""
    sessions = []

    def make(settings: dict[str, Any] | None = None, *, context_window: int = 128000, tools: Any = None,
             session_file: str | None = None):
        agent_dir = tmp_path / "agent"
        agent_dir.mkdir(exist_ok=True)
        (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 0}, **(settings or {})}))
        options = SessionOptions(cwd=str(tmp_path), agent_dir=agent_dir, session_dir=str(tmp_path / "sessions"),
                                 stream_fn=stream, session_file=session_file, system_prompt="You are a test agent.",
                                 tools=tools if tools is not None else [])
        session = create_session(options)
        session.agent.model = faux_model(key=key, context_window=context_window)
        recorder = Recorder()
        session.subscribe(recorder)
        sessions.append(session)
        return session, recorder

    yield make
    for session in sessions:
        session.store.close()


@pytest.fixture
def read_entries():
    """`read_entries(session)`: the session file's entries (header left out)."""

    def read(session) -> list[dict[str, Any]]:
        return [json.loads(line) for line in Path(session.store.path).read_text().splitlines()[1:]]

    return read
