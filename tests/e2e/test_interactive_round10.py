"""End to end: issue 10 round 10 in a real terminal (tmux) against the loopback model server: `/login` and
`/logout` take every provider the agent knows a key for (hosts without a model catalogue such as OpenRouter
included), and `/copy` writes its file in the private per-user directory."""

from __future__ import annotations

import json
from pathlib import Path

from support.tui import choose, flat, needs_tmux

pytestmark = needs_tmux


def test_login_and_logout_take_a_host_without_a_model_catalogue(terminal, fake_llm, agent_env):
    auth = Path(agent_env["AGENT_FORGE_DIR"]) / "auth.json"
    term = terminal(columns=120)
    term.type("/login openrouter")
    term.press("Enter")
    term.wait_for("API key for openrouter")
    term.type("sk-or-123")
    term.press("Enter")
    term.wait_for("saved the API key for openrouter")
    assert json.loads(auth.read_text())["openrouter"] == {"type": "api_key", "key": "sk-or-123"}
    term.type("/logout openrouter")
    term.press("Enter")
    term.wait_for("logged out of openrouter")
    assert "openrouter" not in json.loads(auth.read_text())
    term.type("/login")
    term.press("Enter")
    choose(term, "Log in to which provider?", "groq", "groq")  # the picker offers it too
    term.wait_for("API key for groq")
    term.press("Escape")
    term.wait_for("login cancelled")
    term.type("/login nosuch")
    term.press("Enter")
    term.wait_for('Unknown provider "nosuch"')
    shown = flat(term)
    assert "openrouter" in shown and "groq" in shown.split('Unknown provider "nosuch"')[1], shown
