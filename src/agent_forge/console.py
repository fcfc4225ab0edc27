"""The `agent-forge` console script and `python -m agent_forge`: the stop signals are held (`modes/early_signals.py`)
before the command line's modules are imported, then `cli.main` runs."""

from __future__ import annotations


def main() -> int:
    """`cli.main()`'s exit code; 128 + N when signal N stopped the import of the command line."""
    from .modes.early_signals import StoppedEarly, hold, stopped

    hold()
    try:
        from .cli import main as run
    except StoppedEarly as exc:
        return stopped(exc)
    return run()
