"""End to end: a session name made only of invisible characters (spaces, zero-width characters, the BOM, a
combining mark alone, a Hangul filler) is refused with a clear message, and nothing is stored: RPC
`set_session_name`, `--name` in every mode, and the terminal UI's `/name` (docs/rpc.md, "Session names")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient
from support.tui import needs_tmux


INVISIBLE = ["\u200b", " \u200b\u200c\u200d\ufeff ", "\u0301", "\u0301\u20dd", "\u3164", "\u2060\u2800", "\u00ad"]
REFUSED = "Session name must hold a visible character, not only invisible ones"


@pytest.mark.parametrize("name", INVISIBLE)
async def test_rpc_refuses_an_invisible_name_and_keeps_the_old_one(name, agent_env, tmp_path):
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        assert (await client.send({"type": "set_session_name", "name": "kept"}))["success"]
        reply = await client.send({"type": "set_session_name", "name": name})
        assert reply["success"] is False and reply["error"].startswith(REFUSED), reply
        state = (await client.send({"type": "get_state"}))["data"]
    assert state["sessionName"] == "kept"
    assert Path(state["sessionFile"]).read_text().count('"session_info"') == 1  # the refused name wrote nothing


async def test_rpc_keeps_a_visible_name_with_a_zero_width_character_inside(agent_env, tmp_path):
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        assert (await client.send({"type": "set_session_name", "name": " caf\u00e9\u200b "}))["success"]
        assert (await client.send({"type": "get_state"}))["data"]["sessionName"] == "caf\u00e9\u200b"


@pytest.mark.parametrize("mode", [["-p", "hi"], ["--mode", "rpc"]])
def test_the_name_flag_refuses_an_invisible_name(mode, agent_env, fake_llm, tmp_path):
    done = subprocess.run([sys.executable, "-m", "agent_forge", "--name", "\u200b\u200b", *mode], cwd=tmp_path,
                          env=agent_env, input=b"", capture_output=True, timeout=60)
    assert done.returncode == 2 and done.stdout == b""
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith(f"agent-forge: {REFUSED} ('\\u200b\\u200b'") and fake_llm.requests == []


@needs_tmux
def test_slash_name_refuses_an_invisible_name(terminal, fake_llm):
    term = terminal()
    term.type("/name \u200b\u200b\u3164")
    term.press("Enter")
    term.wait_for(REFUSED)
    term.type("/name")
    term.press("Enter")
    term.wait_for("session name: (none)")
    term.type("/name  plans ")
    term.press("Enter")
    term.wait_for("session name: plans")
