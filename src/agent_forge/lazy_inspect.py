"""`dataclasses` without `inspect` until a dataclass is made: importing orjson does not import `inspect`.

orjson's import imports `dataclasses` (to recognise dataclass instances), and `dataclasses` imports `inspect`
at its top, with `ast`, `dis`, `tokenize` and `linecache`: ~5 ms of an RPC process resuming a session, before
its first `get_state` (issue 15), for a module `dataclasses` only calls into when it makes a class (Python 3.11
to 3.13 read: `inspect.signature`, `inspect.get_annotations` in `_process_class`). `deferred_inspect` puts a
stand-in module where `dataclasses`' `import inspect` finds it, for that import only; the stand-in's first
attribute read imports the real `inspect` (as any later importer gets it: the stand-in is not left in
`sys.modules`) and hands it to `dataclasses`. So is `copy` (with `weakref`: ~3.6 M instructions, 1% of a resumed
5,000-entry session's first `get_state`), which `dataclasses` calls only in `asdict` and `astuple`.

orjson's import imports `uuid` too, which on Linux imports `platform` (~1.2 ms: nine regexes compiled) only to call
`platform.system()` once, telling Linux from AIX; `deferred_platform` answers that call from `os.uname()`, as
`platform.system()` does on POSIX, and imports nothing. orjson's C code imports `datetime` for its C API capsule,
which the pure-Python `datetime` module re-exports from the C `_datetime` after defining its own classes:
`deferred_datetime` hands orjson that capsule from `_datetime`.

`pathlib` imports `urllib.parse`, which imports `ipaddress` (~0.6 ms: its classes) only to check a bracketed host
(`http://[::1]/`); `deferred_ipaddress` puts a stand-in where that import finds it, which imports the real module
at its first attribute read and hands it to `urllib.parse`.
"""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack, contextmanager
from types import ModuleType
from typing import Any, Iterator

_CHECKED = ((3, 11), (3, 14))
"""The Python versions (from, up to excluded) whose `dataclasses` was read for its use of `inspect`; on others
`inspect` is imported with it, as without this module."""


class _StandIn(ModuleType):
    """A stand-in for the module of its name, bound by the module named `importer`: its first attribute read
    imports the real module (the stand-in is never left in `sys.modules`) and hands it to `importer`, so that
    later reads go straight to it."""

    importer = ""

    def __getattr__(self, name: str) -> Any:
        module_name = self.__name__
        if sys.modules.get(module_name) is self:
            del sys.modules[module_name]  # read inside its block: the real module, not this one
        real = __import__(module_name)  # top-level names only
        importer = sys.modules.get(self.importer)
        if importer is not None and getattr(importer, module_name, None) is self:
            setattr(importer, module_name, real)
        return getattr(real, name)


class _InspectStandIn(_StandIn):
    """What `dataclasses` binds as `inspect` while the real module is not imported."""

    importer = "dataclasses"


class _CopyStandIn(_StandIn):
    """What `dataclasses` binds as `copy` while the real module is not imported (3.11 to 3.13 read: only
    `asdict` and `astuple` call it, `copy.deepcopy` of a field value that is not a plain type)."""

    importer = "dataclasses"


@contextmanager
def deferred_inspect() -> Iterator[None]:
    """While the block runs, `import inspect` and `import copy` bind stand-ins that import the real modules at
    their first attribute read; wrap an import of `dataclasses` (orjson's). Does nothing when `dataclasses` is
    already imported, or on a Python outside `_CHECKED`; a module already imported is not stood in for."""
    if "dataclasses" in sys.modules or not _CHECKED[0] <= sys.version_info < _CHECKED[1]:
        yield
        return
    with ExitStack() as stack:
        for stand_in in (_InspectStandIn("inspect"), _CopyStandIn("copy")):
            if stand_in.__name__ not in sys.modules:
                stack.enter_context(_standing_in(stand_in))
        yield


class _PlatformStandIn(_StandIn):
    """What `uuid` binds as `platform` while the real module is not imported: `uuid` (3.11 to 3.13 read) calls
    only `system()`, at its import; any other attribute read imports the real module and hands it to `uuid`."""

    importer = "uuid"

    def system(self) -> str:
        return os.uname().sysname  # `platform.system()` on POSIX: `platform.uname()` takes it from `os.uname()`


@contextmanager
def deferred_platform() -> Iterator[None]:
    """While the block runs, `import platform` binds a stand-in answering `system()` without the real module
    (wrap an import of `uuid`: orjson's). Does nothing when `platform` or `uuid` is already imported, where
    `uuid` imports no `platform` (Windows, macOS), or on a Python outside `_CHECKED`."""
    if ("platform" in sys.modules or "uuid" in sys.modules or not hasattr(os, "uname")
            or sys.platform in ("win32", "darwin") or not _CHECKED[0] <= sys.version_info < _CHECKED[1]):
        yield
        return
    with _standing_in(_PlatformStandIn("platform")):
        yield


class _DatetimeStandIn(_StandIn):
    """What orjson's import finds as `datetime`: the C API capsule it reads (`PyDateTime_IMPORT`), the very
    object the real module re-exports from `_datetime`; any other attribute read imports the real module."""


@contextmanager
def deferred_datetime() -> Iterator[None]:
    """While the block runs, `import datetime` finds a stand-in holding only `datetime_CAPI`, taken from the C
    module `_datetime` (wrap orjson's import: the pure-Python `datetime` it would run costs ~3.7 M instructions,
    1% of a resumed 5,000-entry session's first `get_state`). Does nothing when `datetime` is already imported,
    without `_datetime`, or on a Python outside `_CHECKED`."""
    if "datetime" in sys.modules or not _CHECKED[0] <= sys.version_info < _CHECKED[1]:
        yield
        return
    try:
        import _datetime
    except ImportError:
        yield
        return
    stand_in = _DatetimeStandIn("datetime")
    stand_in.datetime_CAPI = _datetime.datetime_CAPI  # type: ignore[attr-defined]
    with _standing_in(stand_in):
        yield


class _IpaddressStandIn(_StandIn):
    """What `urllib.parse` binds as `ipaddress` while the real module is not imported (3.11 to 3.13 read: it calls
    `ip_address` and reads `IPv4Address` for a bracketed host only)."""

    importer = "urllib.parse"


@contextmanager
def deferred_ipaddress() -> Iterator[None]:
    """While the block runs, `import ipaddress` binds a stand-in that imports the real module at its first
    attribute read; wrap the first import of `urllib.parse` (pathlib's). Does nothing when `ipaddress` or
    `urllib.parse` is already imported, or on a Python outside `_CHECKED`."""
    if "ipaddress" in sys.modules or "urllib.parse" in sys.modules or not _CHECKED[0] <= sys.version_info < _CHECKED[1]:
        yield
        return
    with _standing_in(_IpaddressStandIn("ipaddress")):
        yield


@contextmanager
def _standing_in(stand_in: ModuleType) -> Iterator[None]:
    """`stand_in` is what `import <its name>` binds while the block runs (unless the real module replaced it)."""
    name = stand_in.__name__
    sys.modules[name] = stand_in
    try:
        yield
    finally:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
