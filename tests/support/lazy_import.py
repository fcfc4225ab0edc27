"""Modules a test file needs only while its tests run, not while every xdist worker collects it.

`import acp` costs ~1.4 s of CPU (its pydantic models are built at import); at module level it was paid by each of
the four workers at collection, though one worker runs the file's tests (issue 11, item 6). `lazy_module` defers
the import to the first attribute read; `skip_unless_installed` keeps `pytest.importorskip`'s module-wide skip
without importing anything.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Any

import pytest


class LazyModule:
    """Stands for module `name`; imports it at the first read of a public attribute (ImportError then if it is
    missing). Names starting with `_` raise AttributeError without importing: pytest's collection probes every
    module-level object for them (`_mock_name`, `__wrapped__`, `_pytestfixturefunction`), which imported the
    module in every worker after all (~0.7 s of CPU each)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            raise AttributeError(f"{attribute!r}: a lazy module offers only public names")
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attribute)


def lazy_module(name: str) -> Any:
    """A `LazyModule` for `name` (typed Any: it is used as the module itself)."""
    return LazyModule(name)


def skip_unless_installed(name: str) -> pytest.MarkDecorator:
    """A mark skipping the test(s) when top-level package `name` cannot be found (nothing is imported)."""
    return pytest.mark.skipif(importlib.util.find_spec(name) is None, reason=f"could not import {name!r}")
