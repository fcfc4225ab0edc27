"""`dataclasses` without `inspect` until a dataclass is made: importing orjson does not import `inspect`.

orjson's import imports `dataclasses` (to recognise dataclass instances), and `dataclasses` imports `inspect`
at its top, with `ast`, `dis`, `tokenize` and `linecache`: ~5 ms of an RPC process resuming a session, before
its first `get_state` (issue 15), for a module `dataclasses` only calls into when it makes a class (Python 3.11
to 3.13 read: `inspect.signature`, `inspect.get_annotations` in `_process_class`). `deferred_inspect` puts a
stand-in module where `dataclasses`' `import inspect` finds it, for that import only; the stand-in's first
attribute read imports the real `inspect` (as any later importer gets it: the stand-in is not left in
`sys.modules`) and hands it to `dataclasses`.

orjson's import imports `uuid` too, which on Linux imports `platform` (~1.2 ms: nine regexes compiled) only to call
`platform.system()` once, telling Linux from AIX; `deferred_platform` answers that call from `os.uname()`, as
`platform.system()` does on POSIX, and imports nothing.

`pathlib` imports `urllib.parse`, which imports `ipaddress` (~0.6 ms: its classes) only to check a bracketed host
(`http://[::1]/`); `deferred_ipaddress` puts a stand-in where that import finds it, which imports the real module
at its first attribute read and hands it to `urllib.parse`.
"""

from __future__ import annotations

import os
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
    with _standing_in(_InspectStandIn("inspect")):
        yield


class _PlatformStandIn(ModuleType):
    """What `uuid` binds as `platform` while the real module is not imported: `uuid` (3.11 to 3.13 read) calls
    only `system()`, at its import; any other attribute read imports the real module."""

    def system(self) -> str:
        return os.uname().sysname  # `platform.system()` on POSIX: `platform.uname()` takes it from `os.uname()`

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get("platform") is self:
            del sys.modules["platform"]  # read inside `deferred_platform`: the real module, not this one
        import platform

        return getattr(platform, name)


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


class _IpaddressStandIn(ModuleType):
    """What `urllib.parse` binds as `ipaddress` while the real module is not imported (3.11 to 3.13 read: it calls
    `ip_address` and reads `IPv4Address` for a bracketed host only)."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get("ipaddress") is self:
            del sys.modules["ipaddress"]  # read inside `deferred_ipaddress`: the real module, not this one
        import ipaddress

        parse = sys.modules.get("urllib.parse")
        if parse is not None and getattr(parse, "ipaddress", None) is self:
            parse.ipaddress = ipaddress  # type: ignore[attr-defined]  # later reads go straight to it
        return getattr(ipaddress, name)


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
