"""`asyncio` without `ssl` until something else imports it: the event loop of a session that has made no HTTPS
request yet does not map OpenSSL.

`import asyncio` imports `ssl` (three of its modules, for TLS over the loop's own transports), and `ssl` loads
libssl and libcrypto: ~6 MB of resident memory and ~5 ms of start-up, a sixth of an RPC process resuming a
5,000-entry session (issue 15). Those modules are written to run without `ssl` (`ssl = None` when it is
missing), and they only use it for an `SSLContext` or `SSLSocket` a caller passes in, which no caller can have
without importing `ssl` first. So `defer_ssl` (called by the CLI before anything imports asyncio) makes their
`import ssl` fail, and the first import of `ssl` by anyone else (the model providers' TLS context, httpx2, the
MCP SDK, a plugin) gives them the module (`_give_asyncio_ssl`) before the importer gets it back.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import ModuleType

_ASYNCIO_SSL_USERS = ("asyncio.base_events", "asyncio.selector_events", "asyncio.sslproto")
"""The asyncio modules with a top-level `try: import ssl / except ImportError: ssl = None` (3.11 to 3.13)."""


_NOT_IMPORTERS = (__name__, "importlib", "_frozen_importlib")
"""Modules whose frames sit between an `import` statement and `find_spec`: this one, and the import system."""


class _SslFinder:
    """First on `sys.meta_path` while `ssl` is not imported: refuses it to asyncio's modules; for any other
    importer, finds the real module and has it handed to asyncio once it has run. (Not an `importlib.abc`
    subclass: that module costs more to import than `ssl`.)"""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if fullname != "ssl":
            return None
        if _importer() in _ASYNCIO_SSL_USERS:
            raise ImportError("ssl is imported when first needed (agent_forge/lazy_ssl.py)", name="ssl")
        from importlib.machinery import PathFinder  # where the stdlib's `ssl.py` is found

        _remove_finder()
        spec = PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _GivingLoader(spec.loader)
        return spec


class _GivingLoader:
    """The real loader of `ssl`; once the module has run, asyncio's modules get it too."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _give_asyncio_ssl(module)


def _importer() -> str | None:
    """`__name__` of the module whose code runs the `import` being resolved (the first frame outside importlib)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_NOT_IMPORTERS):
        frame = frame.f_back  # type: ignore[assignment]
    return None if frame is None else frame.f_globals.get("__name__")


def _give_asyncio_ssl(ssl: ModuleType) -> None:
    """Set `ssl` in the asyncio modules that did without it, and what `sslproto` derives from it at import."""
    for name in _ASYNCIO_SSL_USERS:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "ssl", False) is None:
            module.ssl = ssl  # type: ignore[attr-defined]
    sslproto = sys.modules.get("asyncio.sslproto")
    if sslproto is not None and not hasattr(sslproto, "SSLAgainErrors"):
        sslproto.SSLAgainErrors = (ssl.SSLWantReadError, ssl.SSLSyscallError)  # type: ignore[attr-defined]


_FINDER = _SslFinder()
_CHECKED_UP_TO = (3, 14)
"""The first Python version whose asyncio was not checked against `_ASYNCIO_SSL_USERS`: there `ssl` is imported
with asyncio, as without this module."""


def defer_ssl() -> None:
    """Install the finder, unless `ssl` or `asyncio` is already imported (nothing to gain), it is installed, the
    interpreter cannot name an importer (no `sys._getframe`) or is newer than the asyncio this was checked
    against (`_CHECKED_UP_TO`)."""
    if "ssl" in sys.modules or "asyncio" in sys.modules or _FINDER in sys.meta_path or not hasattr(sys, "_getframe"):
        return
    if sys.version_info >= _CHECKED_UP_TO:  # asyncio's use of `ssl` was read for these versions only
        return
    sys.meta_path.insert(0, _FINDER)


def _remove_finder() -> None:
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
