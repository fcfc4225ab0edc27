"""`dataclasses` without `inspect` until a dataclass is made: importing orjson does not import `inspect`.

orjson's import imports `dataclasses` (to recognise dataclass instances), and `dataclasses` imports `inspect`
at its top, with `ast`, `dis`, `tokenize` and `linecache`: ~5 ms of an RPC process resuming a session, before
its first `get_state` (issue 15), for a module `dataclasses` only calls into when it makes a class (Python 3.11
to 3.13 read: `inspect.signature`, `inspect.get_annotations` in `_process_class`). `deferred_inspect` puts a
stand-in module where `dataclasses`' `import inspect` finds it, for that import only; the stand-in's first
attribute read imports the real `inspect` (as any later importer gets it: the stand-in is not left in
`sys.modules`) and hands it to `dataclasses`.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Iterator

_CHECKED = ((3, 11), (3, 14))
"""The Python versions (from, up to excluded) whose `dataclasses` was read for its use of `inspect`; on others
`inspect` is imported with it, as without this module."""


class _InspectStandIn(ModuleType):
    """What `dataclasses` binds as `inspect` while the real module is not imported."""

    def __getattr__(self, name: str) -> Any:
        import inspect  # the real module: the stand-in is never left in `sys.modules`

        dataclasses = sys.modules.get("dataclasses")
        if dataclasses is not None and getattr(dataclasses, "inspect", None) is self:
            dataclasses.inspect = inspect  # type: ignore[attr-defined]  # later reads go straight to it
        return getattr(inspect, name)


@contextmanager
def deferred_inspect() -> Iterator[None]:
    """While the block runs, `import inspect` binds a stand-in that imports the real module at its first
    attribute read; wrap an import of `dataclasses` (orjson's). Does nothing when `inspect` or `dataclasses`
    is already imported, or on a Python outside `_CHECKED`."""
    if "inspect" in sys.modules or "dataclasses" in sys.modules or not _CHECKED[0] <= sys.version_info < _CHECKED[1]:
        yield
        return
    stand_in = _InspectStandIn("inspect")
    sys.modules["inspect"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("inspect") is stand_in:
            del sys.modules["inspect"]
