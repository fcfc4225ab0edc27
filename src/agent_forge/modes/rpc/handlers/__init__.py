"""RPC command handlers, one module per area; importing this package registers them all in `HANDLERS`."""

from __future__ import annotations

from . import models, prompting, session, state  # noqa: F401  (registration side effects)
from .registry import HANDLERS, handler

__all__ = ["HANDLERS", "handler"]
