"""The cyclic garbage collector during the CLI's start-up.

Start-up creates tens of thousands of objects that live as long as the process (modules, classes, functions,
the settings, a resumed session's entries) and almost no garbage cycles, yet the collector scans them again and
again as they accumulate: about 8 ms of CPU before the first RPC response, 13 ms with a 5,000-entry session.
So the console entry point pauses it (`pause`), and once the mode is about to serve (`resume`) the objects made
so far are moved to the permanent generation (`gc.freeze`: later collections skip them; reference counting
still frees them) and the collector runs as usual. An in-process run (`agent_forge.testing.cli`) is not paused.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Stop the collector until `resume`, unless it is already off or something else froze objects."""
    global _paused
    if gc.isenabled() and gc.get_freeze_count() == 0:
        gc.disable()
        _paused = True


def resume() -> None:
    """Freeze what start-up made and restart the collector, when `pause` stopped it; else nothing."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
