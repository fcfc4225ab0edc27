"""Importing a path plugin (a `.py` file or a package directory) from its current source, every time.

A loaded plugin must run the code its files hold now, also when `/reload` (or a second session of the same
process) loads it again. The import system's defaults get that wrong twice: a `.pyc` is trusted while the source's
size and mtime in whole seconds match what it recorded, so a same-size rewrite within the second runs the old
code; and submodules a package plugin imported stay in `sys.modules`, so its `from . import helper` gets the old
module. So plugin modules, named `<ROOT_PREFIX>...` (`loader._module_name`), are compiled from their source bytes
(no bytecode read or written; a plugin compiles in well under a millisecond per 100 lines), their submodules are
found by `PluginSubmoduleFinder` with the same loader, and every module of a plugin is dropped from `sys.modules`
before it is loaded again.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path
from typing import Sequence

ROOT_PREFIX = "_agent_forge_plugin_"
"""The start of every path plugin's module name: what `PluginSubmoduleFinder` answers for."""

_digests: dict[str, str] = {}
"""Module name → SHA-256 of the source it was last compiled from (`SourceOnlyLoader`)."""


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """A source file loader that compiles the file's bytes at each load and never reads or writes a `.pyc`."""

    def get_code(self, fullname: str) -> types.CodeType:
        source = self.get_data(self.path)
        _digests[fullname] = hashlib.sha256(source).hexdigest()
        return self.source_to_code(source, self.path)


class PluginSubmoduleFinder:
    """A `sys.meta_path` finder for the submodules of path plugins (`<ROOT_PREFIX>...`.`name`), relative or
    absolute imports alike: `name/__init__.py` or `name.py` in the parent's `__path__`, loaded by
    `SourceOnlyLoader`. Anything else (extension modules, namespace packages) is left to the path finder."""

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
    if path.is_dir():
        init = path / "__init__.py"
        if not init.is_file():
            return None
        return importlib.util.spec_from_file_location(name, init, loader=SourceOnlyLoader(name, str(init)),
                                                      submodule_search_locations=[str(path)])
    if path.suffix == ".py" and path.is_file():
        return importlib.util.spec_from_file_location(name, path, loader=SourceOnlyLoader(name, str(path)))
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
        forget(spec.name)
        raise
    return module, source_digest(spec.name)


def forget(root: str) -> None:
    """Drop module `root` and its submodules from `sys.modules` (and their digests)."""
    for name in [n for n in sys.modules if _within(n, root)]:
        del sys.modules[name]
    for name in [n for n in _digests if _within(n, root)]:
        del _digests[name]


def source_digest(root: str) -> str:
    """SHA-256 (hex) over the names and source digests of `root` and its submodules compiled so far."""
    parts = sorted((name, digest) for name, digest in _digests.items() if _within(name, root))
    return hashlib.sha256("".join(f"{name}\0{digest}\0" for name, digest in parts).encode()).hexdigest()


def _within(name: str, root: str) -> bool:
    return name == root or name.startswith(root + ".")
