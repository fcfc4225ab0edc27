"""SDK level: a resumed session's start-up model (`prelude._select_model`) treats `--api-key` as a new one does."""

from __future__ import annotations

import json
from pathlib import Path

from agent_forge.coding.session.store import SessionStore
from agent_forge.sdk import create_agent_session


def test_an_api_key_given_on_resume_is_bound_to_the_resumed_provider(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    model = {"id": "m", "contextWindow": 128_000, "maxTokens": 1000}
    providers = {name: {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": key,
                        "models": [model]} for name, key in (("first", "F"), ("second", "S"))}
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    store = SessionStore.create(tmp_path, tmp_path / "sessions")
    store.append_model_change("first", "m")
    store.append_message({"role": "user", "content": "hi", "timestamp": 1})
    store.close()
    session = create_agent_session(cwd=str(tmp_path), agent_dir=agent_dir, session_file=str(store.path),
                                   api_key="K", tools=[])
    assert session.model["provider"] == "first" and session.registry.get_api_key(session.model) == "K"
    second = session.registry.find("second", "m")
    assert second is not None and session.registry.get_api_key(second) == "S"  # never sent to another provider
    session.store.close()
