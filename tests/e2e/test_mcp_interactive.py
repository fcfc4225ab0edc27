"""End to end: an MCP server's prompt in the interactive mode's `/` menu (tmux), completed and sent."""

from __future__ import annotations

import pytest

from support.tmux_terminal import tmux_available

from .test_interactive import terminal, user_texts  # noqa: F401 (the fixture)
from .test_mcp import stdio, write_mcp

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed (.ci/run installs it)")


def test_the_slash_menu_offers_server_prompts_with_their_arguments(terminal, fake_llm, agent_env):  # noqa: F811
    write_mcp(agent_env, {"tools": stdio()})
    fake_llm.set_script([{"text": "Hello there."}, {"text": "Reviewed it."}])
    term = terminal()
    term.type("hi")
    term.press("Enter")
    term.wait_for("Hello there.")  # the run waited for the server: its prompts are known now
    term.type("/mcp:tools:re")
    term.wait_for("/mcp:tools:review <path> [focus]  Review a file")
    term.press("Tab")
    term.type(" a.py")
    term.press("Enter")
    term.wait_for("Reviewed it.")
    assert user_texts(fake_llm.requests[1])[-1] == "Review a.py, looking for bugs."
