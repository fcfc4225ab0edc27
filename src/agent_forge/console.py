"""The `agent-forge` console script and `python -m agent_forge`: the collector is paused (`cli_gc.py`) and the stop
signals are held (`modes/early_signals.py`) before the command line's modules are imported, then `cli.main` runs."""

from __future__ import annotations


def main() -> int:
    """`cli.main()`'s exit code; 128 + N when signal N stopped the import of the command line."""
    from . import cli_gc

    cli_gc.pause()  # from here, not from `cli.main`: the command line's imports' collections find no garbage
    from .modes.early_signals import StoppedEarly, hold, stopped

    hold()
    try:
        from .cli import main as run
    except StoppedEarly as exc:
        return stopped(exc)
    return run()
