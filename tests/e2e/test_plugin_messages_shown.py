"""End to end: a plugin's message meant to be seen (`AddContext(..., display=True)`, the default) is shown in the
terminal UI and told to ACP editors, live and resumed, as `[<customType>] <text>`; one with `display=False` is
not (round 24 of issue 10: neither showed it, while RPC, `/tree` and the export did)."""

from __future__ import annotations

from pathlib import Path

from support.acp_client import AcpClient
from support.tui import READY, needs_tmux

PLUGIN = '''
from agent_forge.plugins import AddContext


def setup(plugin):
    @plugin.on("before_run")
    def context(event, ctx):
        return AddContext(["VISIBLE-CTX"]) if "seen" in str(event.prompts) else AddContext(["HIDDEN-CTX"],
                                                                                            display=False)
'''


def plugin_file(tmp_path: Path) -> str:
    path = tmp_path / "ctx.py"
    path.write_text(PLUGIN)
    return str(path)


@needs_tmux
def test_the_terminal_ui_shows_a_visible_plugin_message_live_and_resumed(terminal, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "first answer"}, {"text": "second answer"}])
    plugin = plugin_file(tmp_path)
    term = terminal("-e", plugin)
    term.wait_for(READY)
    for prompt, answer in (("seen please", "first answer"), ("quiet please", "second answer")):
        term.type(prompt)
        term.press("Enter")
        term.wait_for(answer)
    shown = term.wait_for("] VISIBLE-CTX")
    assert "HIDDEN-CTX" not in term.scrollback()
    customs = [line for line in shown.splitlines() if "VISIBLE-CTX" in line]
    term.press("C-d")
    assert term.exit_code() == 0
    resumed = terminal("-e", plugin, "--continue")
    resumed.wait_for("second answer")
    assert [line for line in resumed.screen().splitlines() if "VISIBLE-CTX" in line] == customs
    assert "HIDDEN-CTX" not in resumed.scrollback()


async def test_acp_tells_a_visible_plugin_message_as_a_thought_live_and_on_load(agent_env, fake_llm, project,
                                                                                tmp_path):
    fake_llm.set_script([{"text": "first answer"}, {"text": "second answer"}])
    plugin = plugin_file(tmp_path)
    client = await AcpClient.start(["-e", plugin], cwd=str(project), env=agent_env)
    await client.initialize()
    session_id = await client.new_session(str(project))
    for prompt in ("seen please", "quiet please"):
        assert await client.prompt(session_id, prompt) == {"stopReason": "end_turn"}
    live = [u["content"]["text"] for u in client.updates(session_id, "agent_thought_chunk")
            if "CTX" in u["content"]["text"]]
    assert await client.close() == 0
    client = await AcpClient.start(["-e", plugin], cwd=str(project), env=agent_env)
    await client.initialize()
    await client.request("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    replayed = [u["content"]["text"] for u in client.updates(session_id, "agent_thought_chunk")
                if "CTX" in u["content"]["text"]]
    assert await client.close() == 0
    assert len(live) == 1 and live[0].endswith("] VISIBLE-CTX") and replayed == live
