"""End to end: a plugin exception whose message holds newlines and tabs is shown on one line wherever its text
appears (load, hook, command and tool errors; stderr, `extension_error` events, tool results)."""

from __future__ import annotations

import subprocess
import sys

from agent_forge.modes.rpc.client import RpcClient

MULTI = "first line\nWarning: a second line\tand a tab"
SHOWN = "first line\\nWarning: a second line\\tand a tab"
FAILING_PLUGIN = f'''
MULTI = {MULTI!r}


def setup(plugin):
    @plugin.command("boom")
    def boom(args, ctx):
        raise ValueError(MULTI)

    @plugin.on("before_run")
    def before(event, ctx):
        raise RuntimeError(MULTI)

    @plugin.tool("explode", description="raises", parameters={{"type": "object", "properties": {{}}}})
    def explode(args, ctx):
        raise LookupError(MULTI)
'''


def write_plugins(directory) -> None:
    (directory / "failing.py").write_text(FAILING_PLUGIN)
    (directory / "broken.py").write_text(f"raise RuntimeError({MULTI!r})\n")


def test_print_mode_shows_each_plugin_failure_on_one_stderr_line(agent_env, fake_llm, tmp_path):
    write_plugins(tmp_path)
    fake_llm.set_script([{"tool_calls": [{"name": "explode", "arguments": {}}]}, {"text": "done"}])
    done = subprocess.run([sys.executable, "-m", "agent_forge", "-p", "-e", "failing.py", "-e", "broken.py",
                           "/boom", "go"], cwd=tmp_path, env=agent_env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    lines = done.stderr.splitlines()
    assert f"agent-forge: plugin failing failed in command:boom: ValueError: {SHOWN}" in lines
    assert f"agent-forge: plugin failing failed in before_run: RuntimeError: {SHOWN}" in lines
    assert any(line.endswith(f"broken.py: RuntimeError: {SHOWN}") and "Plugin not loaded" in line for line in lines)
    assert not any(line.startswith("Warning: a second line") for line in lines), done.stderr
    tool_results = [m for m in fake_llm.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_results] == [f"LookupError: {SHOWN}"]


async def test_extension_error_events_carry_one_line(agent_env, fake_llm, tmp_path):
    write_plugins(tmp_path)
    fake_llm.set_script([{"text": "done"}])
    async with await RpcClient.start(["-e", "failing.py"], cwd=str(tmp_path), env=agent_env) as client:
        await client.send({"type": "prompt", "message": "/boom"})
        await client.prompt_and_wait("go")
    errors = [(r["event"], r["error"]) for r in client.records if r.get("type") == "extension_error"]
    assert errors == [("command:boom", f"ValueError: {SHOWN}"), ("before_run", f"RuntimeError: {SHOWN}")]
