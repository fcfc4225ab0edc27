"""End to end: the reference CLI's flags that clients pass are accepted (implemented or documented no-ops)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agent_forge import __version__
from agent_forge.modes.rpc.client import RpcClient


def run_cli(args, env, cwd, **options):
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], env=env, cwd=cwd, capture_output=True,
                          timeout=60, stdin=subprocess.DEVNULL, **options)


def test_version_is_bare_for_clients_that_parse_it(agent_env, tmp_path):
    for flag in ("--version", "-v"):
        done = run_cli([flag], agent_env, tmp_path)
        assert done.returncode == 0 and done.stdout.decode() == f"{__version__}\n"


async def test_pi_acp_spawn_line_and_the_no_op_flags_start_rpc(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "hi"}])
    args = ["--no-themes", "--theme", "t.json", "--use-theme", "dark", "--tui-mode", "regular", "--verbose",
            "--offline", "--no-mcp", "-nc", "-ns", "-np", "-ne", "-na", "-n", "named"]
    async with await RpcClient.start(args, cwd=str(tmp_path), env=agent_env) as client:
        state = (await client.send({"type": "get_state"}))["data"]
        await client.prompt_and_wait("hello")
    assert state["sessionName"] == "named" and state["model"]["id"] == "fake-model"
    assert len(fake_llm.requests) == 1


async def test_tool_flags_and_their_short_aliases(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "a"}, {"text": "b"}, {"text": "c"}])
    offered = []
    for args in (["-xt", "bash,w*"], ["-t", "read,grep,ls", "--exclude-tools", "gr*"], ["-nbt"]):
        async with await RpcClient.start(args, cwd=str(tmp_path), env=agent_env) as client:
            await client.prompt_and_wait("which tools?")
        offered.append([t["function"]["name"] for t in fake_llm.requests[-1]["body"].get("tools", [])])
    assert offered == [["read", "edit"], ["read", "ls"], []]


def test_list_models_and_resume(agent_env, tmp_path):
    listed = run_cli(["--list-models"], agent_env, tmp_path)
    searched = run_cli(["--list-models", "no-such-thing"], agent_env, tmp_path)
    resume = run_cli(["-r"], agent_env, tmp_path)
    assert listed.returncode == 0 and "fake/fake-model\tFake fake-model\n" in listed.stdout.decode()
    assert searched.returncode == 0 and searched.stdout == b""
    assert searched.stderr.decode().endswith("no model with a key matches 'no-such-thing' (--list-models alone lists "
                                             "all 1)\n"), searched.stderr
    assert resume.returncode == 2 and b"--session" in resume.stderr and b"Traceback" not in resume.stderr


def test_list_models_without_any_key_says_how_to_set_one(agent_env, tmp_path):
    """It sends no prompt: the start-up wording "prompts will fail" does not fit."""
    (Path(agent_env["AGENT_FORGE_DIR"]) / "models.json").unlink()
    done = run_cli(["--list-models"], agent_env, tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 0 and done.stdout == b""
    assert "agent-forge: no model has a key: Set ANTHROPIC_API_KEY" in stderr and "auth.json" in stderr
    assert "prompts will fail" not in stderr


def test_usage_errors_are_one_line_and_exit_2(agent_env, tmp_path):
    cases = {
        ("--model",): "argument --model: expected one argument",
        ("--mode", "xml"): "argument --mode: invalid choice: 'xml'",
        ("--bogus",): "unrecognized arguments: --bogus",
        ("--session-id", "-abc"): "argument --session-id: expected one argument",
        ("--mode", "\x1b[31m"): "argument --mode: invalid choice: '\\x1b[31m'",
        ("mcp", "add"): "mcp: the following arguments are required: name",
        ("mcp", "list", "--bogus"): "mcp: unrecognized arguments: --bogus",
    }
    for args, problem in cases.items():
        done = run_cli(list(args), agent_env, tmp_path, text=True)
        assert done.returncode == 2 and done.stdout == "", (args, done.stderr)
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"agent-forge: {problem}"), (args, done.stderr)
        assert "usage:" not in done.stderr and "see agent-forge" in lines[0]


def test_tool_patterns_and_exclusions_matching_nothing_are_warned_about_as_unknown_names_are(agent_env, fake_llm,
                                                                                            tmp_path):
    fake_llm.set_script([{"text": "ok"}])
    done = run_cli(["-t", "zz*,a[,read", "-xt", "bogus,q*", "-p", "hi"], agent_env, tmp_path)
    warnings = [line for line in done.stderr.decode().splitlines() if line.startswith("Warning: ")]
    assert done.returncode == 0 and [line.split(" (")[0] for line in warnings] == [
        "Warning: --tools: pattern(s) zz*, a[ match no built-in tool",
        "Warning: --exclude-tools: unknown tool(s) bogus",
        "Warning: --exclude-tools: pattern(s) q* match no built-in tool"], warnings
