"""Importing a path plugin (a `.py` file or a package directory) from its current source, every time.

A loaded plugin must run the code its files hold now, also when `/reload` (or a second session of the same
process) loads it again. The import system's defaults get that wrong twice: a `.pyc` is trusted while the source's
size and mtime in whole seconds match what it recorded, so a same-size rewrite within the second runs the old
code; and submodules a package plugin imported stay in `sys.modules`, so its `from . import helper` gets the old
module. So plugin modules, named `<ROOT_PREFIX>...` (`loader._module_name`), are loaded by `SourceLoader`, which
trusts only a checked-hash `.pyc` (PEP 552) of the very bytes the source holds now; their submodules are found
by `PluginSubmoduleFinder` with the same loader; and every module of a plugin is dropped from `sys.modules` before
it is loaded again.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import marshal
import sys
import types
from pathlib import Path
from typing import Sequence

from ..coding.paths import path_text
from ..coding.safe_read import is_dir, is_file

ROOT_PREFIX = "_agent_forge_plugin_"
"""The start of every path plugin's module name: what `PluginSubmoduleFinder` answers for."""

CHECKED_HASH = 0b11
"""The `.pyc` flags word of a hash-based pyc whose hash is checked against the source (PEP 552)."""

_digests: dict[str, bytes] = {}
"""Module name → the hash of the source it was last compiled from (`SourceLoader`)."""


class UnreadableSource(ImportError):
    """A plugin source file the OS refuses to read (no permission, an I/O error): `path` is the file, `reason`
    the OS's words. An `ImportError`, so that a plugin importing an optional submodule may catch it as one."""

    def __init__(self, reason: str, path: str):
        super().__init__(f"{path}: {reason}", path=path)
        self.reason = reason

    def message_for(self, plugin: Path) -> str:
        """`<plugin>: <reason>` when the file is the plugin itself, else `<plugin>: <file>: <reason>`."""
        shown = path_text(plugin)
        if self.path == str(plugin):
            return f"{shown}: {self.reason}"
        return f"{shown}: {path_text(self.path)}: {self.reason}"


class SourceLoader(importlib.machinery.SourceFileLoader):
    """A source file loader that runs the file's current bytes: the cached code only when it is a checked-hash
    `.pyc` of exactly these bytes, else compiled anew (and cached so, unless `sys.dont_write_bytecode`). Reading
    and hashing the source adds ~0.04 ms to a load from the cache (a 100- or a 1,600-line plugin: 0.16 ms instead
    of 0.12, 0.23 instead of 0.19); compiling costs 0.6-1.1 ms per 100 lines."""

    def get_code(self, fullname: str) -> types.CodeType:
        try:
            source = self.get_data(self.path)
        except OSError as exc:  # the file was examined, but the OS refuses to read it
            raise UnreadableSource(exc.strerror or str(exc), self.path) from None
        key = importlib.util.source_hash(source)
        _digests[fullname] = key
        try:
            cached: str | None = importlib.util.cache_from_source(self.path)
        except NotImplementedError:  # a Python without bytecode caches (`sys.implementation.cache_tag` None)
            cached = None
        code = _cached_code(cached, key) if cached else None
        if code is None:
            code = self.source_to_code(source, self.path)
            if cached and not sys.dont_write_bytecode:
                pyc = importlib.util.MAGIC_NUMBER + CHECKED_HASH.to_bytes(4, "little") + key + marshal.dumps(code)
                self.set_data(cached, pyc)  # atomic, and silent when the directory is not writable
        return code


def _cached_code(cached: str, key: bytes) -> types.CodeType | None:
    """The code of the checked-hash `.pyc` at `cached` when it was compiled from source of hash `key` by this
    Python; None when there is none, it is stale or it is any other kind."""
    try:
        with open(cached, "rb") as f:
            data = f.read()
    except OSError:
        return None
    header = importlib.util.MAGIC_NUMBER + CHECKED_HASH.to_bytes(4, "little") + key
    if not data.startswith(header):
        return None
    try:
        code = marshal.loads(data[len(header):])
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None


class PluginSubmoduleFinder:
    """A `sys.meta_path` finder for the submodules of path plugins (`<ROOT_PREFIX>...`.`name`), relative or
    absolute imports alike: `name/__init__.py` or `name.py` in the parent's `__path__`, loaded by
    `SourceLoader`. Anything else (extension modules, namespace packages) is left to the path finder."""

    @classmethod
    def find_spec(cls, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(ROOT_PREFIX) or "." not in fullname:
            return None
        leaf = fullname.rpartition(".")[2]
        for directory in path or ():
            spec = plugin_spec(fullname, Path(directory, leaf))
            if spec is None:
                spec = plugin_spec(fullname, Path(directory, leaf + ".py"))
            if spec is not None:
                return spec
        return None


def plugin_spec(name: str, path: Path) -> importlib.machinery.ModuleSpec | None:
    """The spec of module `name` from `path`: a package directory (with `__init__.py`) or a `.py` file; None
    when `path` is neither."""
    if is_dir(path):
        init = path / "__init__.py"
        if not is_file(init):
            return None
        return importlib.util.spec_from_file_location(name, init, loader=SourceLoader(name, str(init)),
                                                      submodule_search_locations=[str(path)])
    if path.suffix == ".py" and is_file(path):
        return importlib.util.spec_from_file_location(name, path, loader=SourceLoader(name, str(path)))
    return None


def import_fresh(spec: importlib.machinery.ModuleSpec) -> tuple[types.ModuleType, str]:
    """Run the plugin module of `spec` (`plugin_spec`) anew: its modules of an earlier load are dropped from
    `sys.modules` first. Returns (the module, a digest of the sources of it and of the submodules it imported
    while it ran). Raises what the module raises; it is then not left in `sys.modules`."""
    if PluginSubmoduleFinder not in sys.meta_path:
        sys.meta_path.insert(0, PluginSubmoduleFinder)
    forget(spec.name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look their module up here
    try:
        assert spec.loader is not None
        spec.loader.exec_module(module)
    except BaseException:
        # not when a stopped `/reload` put the running plugin's modules back meanwhile (this import went on in
        # its abandoned thread: `loader.load_plugin`)
        if sys.modules.get(spec.name) is module:
            forget(spec.name)
        raise
    return module, source_digest(spec.name)


def forget(root: str) -> None:
    """Drop module `root` and its submodules from `sys.modules` (and their digests)."""
    for name in [n for n in sys.modules if _within(n, root)]:
        del sys.modules[name]
    for name in [n for n in _digests if _within(n, root)]:
        del _digests[name]


def saved_digests() -> dict[str, bytes]:
    """The source hashes of the plugin modules loaded so far (module name → hash), for `restore_digests`."""
    return dict(_digests)


def restore_digests(saved: dict[str, bytes]) -> None:
    """Make the source hashes those `saved_digests` gave (a dropped load's hashes go)."""
    _digests.clear()
    _digests.update(saved)


def source_digest(root: str) -> str:
    """SHA-256 (hex) over the names and source hashes of `root` and its submodules loaded so far."""
    parts = sorted((name, key.hex()) for name, key in _digests.items() if _within(name, root))
    return hashlib.sha256("".join(f"{name}\0{key}\0" for name, key in parts).encode()).hexdigest()


def _within(name: str, root: str) -> bool:
    return name == root or name.startswith(root + ".")
