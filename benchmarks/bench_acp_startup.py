"""ACP start-up: spawn → `initialize` response (issue 14: <= 300 ms on an idle 2-core machine), and what is
imported before that answer.

Prints the median, min and max over `--runs` spawns (milliseconds, wall clock from `Popen` to the answer line
read), the machine's 1-minute load average before and after (the figure means little under load), and with
`--imports` the modules the process imported up to its answer, heaviest first by `python -X importtime`'s
cumulative microseconds.

Run: `.venv/bin/python benchmarks/bench_acp_startup.py [--runs 10] [--imports] [--src DIR] [--against DIR]`.
`--src` measures another checkout's `src` (e.g. `git archive main | tar -x -C /tmp/base`, then `--src
/tmp/base/src`) with the same interpreter; `--against DIR` alternates spawns of this tree and of `DIR`, so both
medians see the same load (before/after figures on a shared machine). Uses the venv's console script
(DESIGN.md: the `python3` shim adds ~70 ms before Python starts).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import agent_command, clean_env

INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'


def spawn_to_initialize(env: dict[str, str], cwd: str) -> float:
    """Seconds from spawn to the `initialize` answer line (stdin then closed: the agent exits 0)."""
    start = time.perf_counter()
    proc = subprocess.Popen([*agent_command(), "--mode", "acp", "--no-session"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=30)
    if b'"result"' not in line:
        raise RuntimeError(f"no initialize answer: {line[:300]!r}")
    return elapsed


def imports_before_answer(env: dict[str, str], cwd: str) -> list[tuple[int, str]]:
    """(cumulative µs, module) of every top-level import up to the answer: stderr is read once the answer is
    (stdin stays open, so the agent waits idle and imports nothing more), then the process is killed."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "agent_forge", "--mode", "acp",
                             "--no-session"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=cwd)
    proc.stdin.write(INITIALIZE)  # type: ignore[union-attr]
    proc.stdin.flush()  # type: ignore[union-attr]
    proc.stdout.readline()  # type: ignore[union-attr]
    os.set_blocking(proc.stderr.fileno(), False)  # type: ignore[union-attr]
    text = (proc.stderr.read() or b"").decode()  # type: ignore[union-attr]
    proc.kill()
    proc.wait()
    found = []
    for line in text.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if cumulative.strip().isdigit() and not name.startswith("  "):  # top level: "| name"
                found.append((int(cumulative), name.strip()))
    return sorted(found, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--imports", action="store_true", help="also list the imports before the answer")
    parser.add_argument("--src", help="measure this checkout's src directory instead of the installed one")
    parser.add_argument("--against", help="another checkout's src directory, measured in alternation")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = clean_env(AGENT_FORGE_DIR=str(Path(home) / "agent"), HOME=home)
        if args.src:
            env["PYTHONPATH"] = str(Path(args.src).resolve())
        envs = {"this": env}
        if args.against:
            envs[args.against] = {**env, "PYTHONPATH": str(Path(args.against).resolve())}
        times: dict[str, list[float]] = {name: [] for name in envs}
        for name, each in envs.items():
            spawn_to_initialize(each, home)  # warm the bytecode and file caches
        load_before = os.getloadavg()[0]
        for _ in range(args.runs):
            for name, each in envs.items():
                times[name].append(spawn_to_initialize(each, home))
        load_after = os.getloadavg()[0]
        for name, found in times.items():
            found.sort()
            print(f"spawn -> initialize ({name}): median {statistics.median(found) * 1000:.0f} ms, min "
                  f"{found[0] * 1000:.0f} ms, max {found[-1] * 1000:.0f} ms over {args.runs} runs (target <= 300 "
                  f"ms; load {load_before:.2f} -> {load_after:.2f})")
        if args.imports:
            found = imports_before_answer(env, home)
            print(f"top-level imports before the answer: {len(found)}, {sum(c for c, _ in found) / 1000:.0f} ms "
                  "cumulative under -X importtime; heaviest:")
            for cumulative, name in found[:12]:
                print(f"  {cumulative / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
