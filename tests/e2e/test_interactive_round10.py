"""End to end: issue 10 round 10 in a real terminal (tmux) against the loopback model server: `/login` and
`/logout` take every provider the agent knows a key for (hosts without a model catalogue such as OpenRouter
included), and `/copy` writes its file in the private per-user directory."""

from __future__ import annotations

import json
import os
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


def test_copy_refuses_a_directory_that_is_not_private_and_follows_no_planted_link(terminal, fake_llm, agent_env,
                                                                                   tmp_path):
    fake_llm.set_script([{"text": "Answer to copy."}])
    private = Path(agent_env["TMPDIR"]) / f"agent-forge-{os.getuid()}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    private.symlink_to(elsewhere)  # another user's trap: the per-user directory is a link
    term = terminal(columns=160)
    term.type("hi")
    term.press("Enter")
    term.wait_for("Answer to copy.")
    term.type("/copy")
    term.press("Enter")
    term.wait_for("cannot write the answer's file")
    assert "is not a private directory of this user" in flat(term) and list(elsewhere.iterdir()) == []
    private.unlink()
    private.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (private / "last-answer.md").symlink_to(victim)  # planted: /copy must replace it, never write through it
    term.type("/copy")
    term.press("Enter")
    term.wait_for("copied the last answer")
    copied = private / "last-answer.md"
    assert not copied.is_symlink() and copied.read_text() == "Answer to copy."
    assert copied.stat().st_mode & 0o777 == 0o600 and victim.read_text() == "keep me"
    assert f"agent-forge-{os.getuid()}/last-answer.md" in flat(term)
    assert sorted(p.name for p in private.iterdir()) == ["last-answer.md"]  # no temp file left behind
    private.chmod(0o777)  # open to every user: they could replace its files
    term.type("/copy")
    term.press("Enter")
    term.wait_for("(mode 777; `chmod 700` it)")
    assert copied.read_text() == "Answer to copy."


def test_start_up_notes_name_a_misspelled_setting_once(terminal, fake_llm, agent_env):
    settings = Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "aprovals": "read-only"}))
    term = terminal(columns=160)
    term.wait_for("unknown key 'aprovals'")
    assert flat(term).count("unknown key 'aprovals' (did you mean 'approvals'?); ignored") == 1, flat(term)
