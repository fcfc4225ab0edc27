"""How long one long line from a stdio MCP server takes to read: the SDK's `stdio_client` against our
`stdio_transport.open_stdio` (h-mcpline, issue 13: 20 MB took 4.9 s, 60 MB 50 s, through the SDK's reader).

The server is `tests/support/mcp_raw_server.py`: its `long` tool answers with one message of N MB of text on one
line. For each size, the time and the CPU time of this process from sending the call to receiving the answer
(`--runs`, median); then `toolong` (a line of `--over` MB, over the cap) through ours: the time to refuse it.
Run: `.venv/bin/python benchmarks/bench_mcp_lines.py [--sizes 10 20 40] [--sdk-max 40] [--over 1000]`.

Measured on the 2-core helper machine shared by 8 helpers (load average 5-7, so wall times are noisy; CPU is
this process's, where both readers run), one run each:

    MB   SDK stdio_client        ours (open_stdio)
    10   3.44 s (CPU 1.09 s)     0.42 s (CPU 0.05 s)
    20   8.65 s (CPU 2.16 s)     0.72 s (CPU 0.07 s)
    40   16.16 s (CPU 7.90 s)    0.63 s (CPU 0.26 s)

    a 1000 MB line with no newline, through ours: refused (MessageTooLong) in 0.61 s (CPU 0.14 s), after
    reading 64 MiB; peak memory +66 MiB (the SDK's reader would keep reading, and holding, all of it)
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAW = str(ROOT / "tests" / "support" / "mcp_raw_server.py")


def _call(name: str):
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCRequest

    return SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/call", params={"name": name}))


async def _time(streams_of, tool: str, size: int) -> tuple[float, float, object]:
    async with streams_of([RAW, "serve", str(size)]) as (read, write):
        started, cpu = time.monotonic(), time.process_time()
        await write.send(_call(tool))
        item = await read.receive()
        return time.monotonic() - started, time.process_time() - cpu, item


def sdk_streams(args: list[str]):
    from mcp.client.stdio import StdioServerParameters, stdio_client

    return stdio_client(StdioServerParameters(command=sys.executable, args=args))


def our_streams(args: list[str]):
    import contextlib

    from agent_forge.coding.mcp.stdio_transport import open_stdio

    @contextlib.asynccontextmanager
    async def streams():
        async with open_stdio(sys.executable, args, {"PATH": "/usr/bin:/bin"}, None, None) as server:
            yield server.read, server.write

    return streams()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--sdk-max", type=int, default=40, help="largest size for the SDK (it is quadratic)")
    parser.add_argument("--over", type=int, default=1000, help="MB of the line over the cap")
    parser.add_argument("--runs", type=int, default=1)
    options = parser.parse_args()
    _call("fine")  # the SDK's import, before the first figure
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wall, cpu, item = await _time(our_streams, "toolong", options.over)
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024
    print(f"a {options.over} MB line with no newline, through ours: {type(item).__name__} in {wall:.2f} s "
          f"(CPU {cpu:.2f} s); peak memory +{grown} MiB")
    print("MB   SDK stdio_client        ours (open_stdio)")
    for size in options.sizes:
        cells = []
        for streams_of in (sdk_streams, our_streams):
            if streams_of is sdk_streams and size > options.sdk_max:
                cells.append("-".ljust(22))
                continue
            runs = [await _time(streams_of, "long", size) for _ in range(options.runs)]
            wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            cells.append(f"{wall:.2f} s (CPU {cpu:.2f} s)".ljust(22))
        print(f"{size:<4} {'  '.join(cells)}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    asyncio.run(main())
