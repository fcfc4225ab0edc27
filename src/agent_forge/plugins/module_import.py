"""Importing a module or entry-point plugin (`pkg.mod`, `pkg.mod:setup`) so that each load runs its current source,
as a path plugin does (`source_import.py`).

Python imports a module once per process, so a second load would run the code first imported. A plugin's *root*
(its top-level package, or the first regular package below a namespace package: `ns.myplugin`) that the loader
itself imported first is the plugin's own: at each later load its modules are dropped from `sys.modules` and
imported anew, by `SourceLoader` (its checked-hash `.pyc` only, so a same-size edit within the second counts too).
A root that was imported before the plugin loaded (the agent's own package, a library another plugin or the agent
uses) is shared code: dropping it would split it in two, so such a plugin keeps the code first imported, and so
does one whose root holds an extension module (compiled code cannot be imported twice). `Plugin.kept_code` says
why; the interactive `/reload` shows it.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
from typing import Sequence

from .source_import import ROOT_PREFIX, SourceLoader, forget, restore_digests, saved_digests, source_digest

_roots: dict[str, tuple[str, bool]] = {}
"""Module name of a plugin → (its root, whether the loader imported the root first: the plugin's own)."""

_own: set[str] = set()
"""The roots that are plugins' own: what `FreshFinder` loads with `SourceLoader`."""


class FreshFinder:
    """A `sys.meta_path` finder for the modules of plugins' own roots: the spec the other finders give, its plain
    source loader swapped for `SourceLoader`. Anything else is left to them."""

    @classmethod
    def find_spec(cls, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not any(fullname == root or fullname.startswith(root + ".") for root in _own):
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if finder is not cls and find is not None else None
            if spec is not None:
                if type(spec.loader) is importlib.machinery.SourceFileLoader and spec.origin:
                    spec.loader = SourceLoader(fullname, spec.origin)
                return spec
        return None


class SavedModules:
    """The plugins' modules in `sys.modules` (path plugins' and the plugins' own roots') and their source hashes,
    as they were when this was made. A load imports the plugins anew over the modules of the ones running, so a
    load that is dropped (a stopped `/reload`) puts them back (`restore`): a running plugin's later import (a
    command's `from . import helper`) then gets its own code, not the dropped load's."""

    def __init__(self) -> None:
        self._modules = {name: module for name, module in sys.modules.items() if _of_a_plugin(name)}
        self._digests = saved_digests()

    def restore(self) -> None:
        """Make the plugins' modules those of then: the ones imported since are dropped."""
        for name in [n for n in sys.modules if _of_a_plugin(n)]:
            del sys.modules[name]
        sys.modules.update(self._modules)
        restore_digests(self._digests)


def _of_a_plugin(name: str) -> bool:
    """Whether module `name` is a path plugin's or within a plugin's own root (imported anew at each load)."""
    return name.startswith(ROOT_PREFIX) or any(name == root or name.startswith(root + ".") for root in _own)


def import_current(module_name: str, fresh: set[str] | None = None) -> tuple[types.ModuleType, str | None,
                                                                              str | None]:
    """Import plugin module `module_name` (see the module docstring): (the module, the digest of its root's
    sources for a plugin's own root, else None; why it keeps the code first imported, None when it runs its
    current source). `fresh`: the roots already imported anew in this load pass (added to), so that two plugins
    of one root loaded together share its modules. Raises what the import raises."""
    if FreshFinder not in sys.meta_path:
        sys.meta_path.insert(0, FreshFinder)
    known = _roots.get(module_name)
    if known is None:
        return _first_import(module_name)
    root, own = known
    problem = None if not own else _compiled(root)
    if not own or problem:
        kept = problem or f"its package {root} was imported before the plugin loaded"
        return importlib.import_module(module_name), None, kept
    if fresh is None or root not in fresh:
        forget(root)
        if fresh is not None:
            fresh.add(root)
    return importlib.import_module(module_name), source_digest(root), None


def _first_import(module_name: str) -> tuple[types.ModuleType, str | None, str | None]:
    """The first import of `module_name`: which root it has, and whether it was imported before."""
    parts = module_name.split(".")
    prefixes = [".".join(parts[:n]) for n in range(1, len(parts) + 1)]
    absent = {p for p in prefixes if p not in sys.modules}
    _own.update(absent)  # imported now by the loader: through `SourceLoader` from the start
    try:
        module = importlib.import_module(module_name)
    except BaseException:
        for prefix in absent:  # what the failed import left: the next load is a first import again
            forget(prefix)
        raise
    finally:
        _own.difference_update(absent)
    root = next((p for p in prefixes if getattr(sys.modules.get(p), "__file__", None)), module_name)
    own = root in absent or root in _own  # imported now, or by the load of another plugin of the package
    _roots[module_name] = (root, own)
    if own:
        _own.add(root)
        return module, source_digest(root), _compiled(root)
    return module, None, f"its package {root} was imported before the plugin loaded"


def _compiled(root: str) -> str | None:
    """Why the modules of `root` cannot be imported anew (an extension module among them), or None."""
    for name, module in list(sys.modules.items()):
        if (name == root or name.startswith(root + ".")) and isinstance(
                getattr(module, "__loader__", None), importlib.machinery.ExtensionFileLoader):
            return f"its package {root} holds compiled code ({name})"
    return None
