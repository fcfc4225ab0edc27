"""What an MCP server's log messages cost the agent: one tool call of `tests/support/mcp_raw_server.py` in
`log-flood N` mode (N `notifications/message` before each answer) through the real CLI in RPC mode, and the CPU
time of the agent and the server together (children of this process), for N = 0 and each `--counts`.
Run: `.venv/bin/python benchmarks/bench_mcp_logs.py [--counts 20000]`.

Measured on the 2-core machine (load 0.1, 2026-12-02), N = 20,000, CPU of agent + server beyond N = 0:
before dropping log messages unread (the SDK validated each one: a task and pydantic per message) 2.9 s;
after (`coding/mcp/unshown.py`) 0.24 s, most of it the server writing them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "src")]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _agent_dir(base: Path, url: str, count: int) -> Path:
    agent = base / "agent"
    agent.mkdir()
    model = {"id": "fake-model", "contextWindow": 128000}
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": url, "api": "openai-completions", "apiKey": "x", "models": [model]}}}))
    (agent / "settings.json").write_text(json.dumps({"defaultProvider": "fake", "defaultModel": "fake-model"}))
    server = {"command": sys.executable, "args": [str(ROOT / "tests/support/mcp_raw_server.py"), "log-flood",
                                                  str(count)]}
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": {"r": server}}))
    return agent


async def _one(count: int) -> tuple[float, float]:
    """(wall s of the prompt, CPU s of the agent and server) for one run with `count` log messages."""
    from agent_forge.modes.rpc.client import RpcClient
    from support.fake_llm import FakeLLMServer

    with FakeLLMServer() as llm, tempfile.TemporaryDirectory() as tmp:
        agent = _agent_dir(Path(tmp), llm.base_url_openai, count)
        llm.set_script([{"tool_calls": [{"name": "r_fine", "arguments": {}}]}, {"text": "done"}])
        cpu = _children_cpu()
        env = {**os.environ, "AGENT_FORGE_DIR": str(agent)}
        async with await RpcClient.start(["--no-session"], cwd=tmp, env=env) as client:
            started = time.monotonic()
            await client.prompt_and_wait("go", timeout=300)
            wall = time.monotonic() - started
        return wall, _children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[20000])
    args = parser.parse_args()
    base_wall, base_cpu = asyncio.run(_one(0))
    print(f"N=0: prompt {base_wall:.2f} s, CPU {base_cpu:.2f} s (agent + server)")
    for count in args.counts:
        wall, cpu = asyncio.run(_one(count))
        print(f"N={count:,}: prompt {wall:.2f} s, CPU {cpu:.2f} s, +{cpu - base_cpu:.2f} s over N=0")


if __name__ == "__main__":
    main()
