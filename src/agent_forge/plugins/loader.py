"""Finding and importing plugins, and running their `setup(plugin)`.

Sources, in load order (the first plugin to claim a command or tool name keeps it):

1. `-e/--plugin <path or module>` (scope "temporary"): a `.py` file, a package directory (with `__init__.py`),
   or an importable module name, optionally `module:attribute` naming the setup function;
2. `<agent dir>/plugins/` (scope "user"): every `*.py` file and package directory in it, by name, except names
   starting with `_` or `.`; then the `plugins` list of `<agent dir>/settings.json` (paths are relative to the
   agent dir);
3. the entry-point group `agent_forge.plugins` of installed distributions (scope "user", origin "package");
4. the project's `<cwd>/.agent-forge/agent/plugins/` and the `plugins` list of its `settings.json` (scope
   "project"): project code, so only when the project is trusted (`coding/resources/trust.py`); otherwise they
   are listed as skipped. When the project directory is not used at all (`--no-project-resources`), neither.

`--no-plugins` turns off 2-4; explicit `-e` plugins still load. A module or entry point may be the setup function
itself or a module defining `setup`. Every failure (not found, import error, no `setup`, `setup` raising, even
`SystemExit`, an async `setup` running past its timeout, a misuse of the API) is a `PluginLoadError` naming the
source; the other plugins load regardless. A plugin runs its current source at every load, `/reload` and new
ACP sessions included: a path plugin's files (`source_import.py`), a module's or entry point's package unless it
was imported before the plugin first loaded or holds compiled code (`module_import.py`: `Plugin.kept_code`).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import re
import stat
import sys
import types
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable

from ..coding.paths import path_text
from .bounded import PluginTimeout, bounded
from .discovery import (  # noqa: F401  (the loader's public names since before the split)
    ENTRY_POINT_GROUP, PLUGINS_DIR, Discovery, PluginObject, PluginSource, Setup, cli_source, discover, plugin_files)
from .isolation import PluginEscape, describe_error, is_cancellation
from ..coding.safe_read import is_dir, is_file

if TYPE_CHECKING:
    from .api import Plugin

SETUP_TIMEOUT_S = 10.0
"""How long an async `setup` may take (settings `pluginSetupTimeoutMs` overrides it): a plugin that waits on
something that never comes is skipped with a warning instead of hanging start-up."""


class PluginLoadError(Exception):
    """A plugin could not be loaded; the message names it and says why."""


# -- loading ------------------------------------------------------------------------------------------

async def load_plugin(source: PluginSource, *, setup_timeout: float = SETUP_TIMEOUT_S,
                      fresh: set[str] | None = None) -> Plugin:
    """Import `source` and run its setup on a new `Plugin`; an async setup gets `setup_timeout` seconds.
    Registration ends when setup returns (`Plugin.seal`). `fresh`: the packages of module plugins already
    imported anew in this load pass (`module_import.import_current`). Raises `PluginLoadError`; only a
    cancellation of the caller propagates as itself.

    The plugin's synchronous code (its module's top level, a synchronous setup, unbounded) runs in a worker
    thread (`threads.in_thread`) that the loop awaits: blocked there, it leaves the loop free, so a stop signal
    (`cli_loop`, `modes/termination.py`) or an abort of `/reload` still ends the wait at once, and the thread,
    a daemon, is abandoned. An async setup's coroutine runs on the loop, as before."""
    from .api import Plugin  # imported once there is a plugin: start-up without plugins stays lean
    from .threads import in_thread, is_async

    made: list[Plugin] = []  # the plugin, once the worker thread made it: sealed here whatever happens

    def set_up() -> tuple[Plugin, Setup | None, object]:
        """The plugin's synchronous code, in a worker thread: its import and a synchronous `setup(plugin)`:
        (the plugin, an async setup still to call, a synchronous setup's result)."""
        obj, plugin_id, path, (digest, kept) = _import(source, fresh)
        setup = _setup_of(obj)
        plugin = Plugin(id=plugin_id, path=path, scope=source.scope, origin=source.origin)
        plugin.source_digest, plugin.kept_code = digest, kept
        made.append(plugin)
        if is_async(setup):
            return plugin, setup, None  # its coroutine is made and awaited on the loop
        return plugin, None, setup(plugin)

    try:
        async with _loading(asyncio.get_running_loop()):
            plugin, async_setup, result = await in_thread(set_up)
        if async_setup is not None:
            result = async_setup(plugin)
        if inspect.isawaitable(result):
            await _bounded(result, setup_timeout, source.target)
    except PluginLoadError:
        raise
    except BaseException as exc:  # a plugin must not take the agent down, not even with sys.exit
        if is_cancellation(exc):
            raise
        error = exc.error if isinstance(exc, PluginEscape) else exc
        raise PluginLoadError(f"{path_text(source.target)}: {describe_error(error)}") from error
    finally:
        for each in made:
            each.seal()
    return plugin


_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


def _loading(loop: asyncio.AbstractEventLoop) -> asyncio.Lock:
    """The lock of `loop`'s loads: one plugin's synchronous code (import, setup) at a time, as when it ran on the
    loop's thread (two ACP sessions load theirs side by side, and a path plugin's import replaces its modules in
    `sys.modules`). A load given up (cancelled) releases it: its thread, abandoned, does not hold up the next."""
    lock = _locks.get(loop)
    if lock is None:
        lock = _locks[loop] = asyncio.Lock()
    return lock


async def _bounded(awaitable: Awaitable[object], timeout: float, target: str) -> None:
    """Await an async setup for at most `timeout` seconds (`bounded.py`). A setup still running then is
    cancelled and, when it ignores that, abandoned: it must not hang start-up either."""
    try:
        await bounded(awaitable, timeout, grace=0)
    except PluginTimeout:
        raise PluginLoadError(f"{path_text(target)}: setup did not finish within {timeout:g} s; plugin "
                              "skipped") from None


def _import(source: PluginSource, fresh: set[str] | None = None
            ) -> tuple[object, str, str, tuple[str | None, str | None]]:
    """(the loaded object, the plugin id, the plugin's path for messages, (the digest of the source it ran:
    `Plugin.source_digest`, why it keeps the code first imported: `Plugin.kept_code`)). Paths, modules and entry
    points run their current source (`source_import.py`, `module_import.py`)."""
    ident = plugin_id(source)
    if source.kind == "path":
        module, path, digest = _import_path(Path(source.target))
        return module, ident, path, (digest, None)
    if source.kind == "module":
        obj, versions = _import_value(source.target, fresh)
        return obj, ident, _file_of(obj, f"<module:{ident}>"), versions
    if source.kind == "entry_point":
        obj, versions = _import_value(source.value.value, fresh)
        return obj, ident, _file_of(obj, f"<entry-point:{ident}>"), versions
    return source.value, ident, _file_of(source.value, f"<object:{ident}>"), (None, "it was given as an object")


def plugin_id(source: PluginSource) -> str:
    """The id the plugin of `source` gets (`Plugin.id`, what messages and the `/reload` report name it by): a
    `.py` file's name without `.py`, a package directory's whole name (`holding.d`), a module's name (`pkg.mod`
    of `pkg.mod:setup`), an entry point's name, an object's name (`startup._object_name`)."""
    if source.kind == "path":
        path = Path(source.target)
        return path.stem if is_file(path) else path.name
    if source.kind == "module":
        return source.target.partition(":")[0]
    if source.kind == "entry_point":
        return source.value.name
    return source.target


def _import_value(value: str, fresh: set[str] | None) -> tuple[object, tuple[str | None, str | None]]:
    """`pkg.mod` or `pkg.mod:obj.attr` imported (`module_import.import_current`) and resolved: (the object,
    (source digest, why the code first imported is kept))."""
    from .module_import import import_current

    module_name, _, attrs = value.partition(":")
    obj, digest, kept = import_current(module_name.strip(), fresh)
    for attr in filter(None, attrs.strip().split(".")):
        obj = getattr(obj, attr)
    return obj, (digest, kept)


def _not_a_plugin(path: Path) -> str:
    """Why `path` cannot be imported: it names nothing, or what it is (`/dev/zero` is no missing file)."""
    from ..coding.safe_read import examine, found_text

    found = examine(path)
    if isinstance(found, os.stat_result) and stat.S_ISREG(found.st_mode):
        return "it is not a .py file"
    return "no such plugin" if found is None else "it " + found_text(found)


def _import_path(path: Path) -> tuple[types.ModuleType, str, str]:
    """Run the plugin at `path` from its current source (`source_import.py`): (module, path, source digest)."""
    from .source_import import UnreadableSource, import_fresh, plugin_spec

    problem = _package_problem(path) if is_dir(path) else None
    if problem:
        raise PluginLoadError(f"{path_text(path)}: {problem}")
    spec = plugin_spec(_module_name(path), path)
    if spec is None:
        raise PluginLoadError(f"{path_text(path)}: {_not_a_plugin(path)} (expected a .py file or a package directory)")
    try:
        module, digest = import_fresh(spec)
    except UnreadableSource as exc:
        raise PluginLoadError(exc.message_for(path)) from None
    return module, str(path), digest


def _package_problem(directory: Path) -> str | None:
    """Why the directory `directory` is no package plugin, None when its `__init__.py` is a regular file: it
    cannot be listed (the OS's reason: a plugins directory without read permission comes here too), it has no
    `__init__.py`, or that is something else (a FIFO, a link loop: what it is or the OS's reason)."""
    from ..coding.safe_read import describe_kind, examine

    init = examine(directory / "__init__.py")
    if isinstance(init, os.stat_result) and stat.S_ISREG(init.st_mode):
        return None
    try:
        os.listdir(directory)
    except OSError as exc:
        return f"it cannot be listed: {exc.strerror or exc}"
    if init is None:
        return "a plugin directory needs an __init__.py"
    if isinstance(init, OSError):
        return f"its __init__.py cannot be examined: {init.strerror or init}"
    return f"its __init__.py is {describe_kind(init.st_mode)}, not a regular file"


def _module_name(path: Path) -> str:
    """A unique, importable module name per plugin path (two `plugin.py` files must not collide)."""
    import hashlib

    # realpath, not Path.resolve: Python 3.11's raises RuntimeError for a link loop (reported by `_not_a_plugin`)
    digest = hashlib.sha1(os.path.realpath(path).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    from .source_import import ROOT_PREFIX

    return f"{ROOT_PREFIX}{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}_{digest}"


def _setup_of(obj: object) -> Setup:
    if isinstance(obj, types.ModuleType):
        setup = getattr(obj, "setup", None)
        if not callable(setup):
            raise PluginLoadError(f"{_file_of(obj, obj.__name__)}: defines no setup(plugin) function")
        return setup
    if callable(obj):
        return obj
    raise PluginLoadError(f"{_object_text(obj)} is neither a module nor a setup function")


def _object_text(obj: object) -> str:
    """`repr(obj)` as one line of a warning, at most 200 characters: an object handed over through the SDK has
    the `__repr__` its author wrote, which may hold a newline or an escape code, or raise."""
    try:
        text = repr(obj)
    except Exception:  # a broken __repr__ still leaves its type to name
        text = f"<{type(obj).__name__} object>"
    text = path_text(text)
    return text if len(text) <= 200 else text[:200] + "…"


def _file_of(obj: object, fallback: str) -> str:
    module = obj if isinstance(obj, types.ModuleType) else sys.modules.get(getattr(obj, "__module__", "") or "")
    return str(getattr(module, "__file__", None) or fallback)
