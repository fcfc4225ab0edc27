"""End to end: an MCP server's prompt in the interactive mode's `/` menu (tmux), completed and sent."""

from __future__ import annotations

from support.tui import needs_tmux, user_texts

from .test_mcp import stdio, write_mcp

pytestmark = needs_tmux


def test_the_slash_menu_offers_server_prompts_with_their_arguments(terminal, fake_llm, agent_env):
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
