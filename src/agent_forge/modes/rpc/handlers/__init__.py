"""RPC command handlers, one module per area; importing this package registers them all in `HANDLERS`."""

from __future__ import annotations

from . import models, prompting, session, state  # noqa: F401  (registration side effects)
from . import bash  # noqa: F401  (user shell commands)
from . import retry  # noqa: F401  (automatic retry)
from . import lifecycle  # noqa: F401  (new_session, get_session_stats)
from . import export  # noqa: F401  (export_html)
from . import tree  # noqa: F401  (switch_session, fork, clone, get_fork_messages, get_entries, get_tree)
from . import compaction  # noqa: F401  (compact, set_auto_compaction)
from .registry import HANDLERS, handler

__all__ = ["HANDLERS", "handler"]
