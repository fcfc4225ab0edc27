"""Assertion rewriting done once, before the xdist workers start, instead of once in every worker (issue 11).

pytest rewrites the asserts of every test module it imports and caches the result beside it
(`__pycache__/<name>.cpython-311-pytest-<version>.pyc`, a hash-checked pyc: PEP 552). In a fresh clone there is no
cache, and each of the `-n 4` workers collects the whole suite at once, so each rewrote all ~290 test modules
itself: ~7 s of CPU apiece, 28 s in all, ~24 s of wall on the 2-core machine before the first test (the cold
`pytest -k nothing` took 32.5 s, warm 8.1 s). `rewrite(config)` writes the missing caches first, in one process
per core; the workers then only read them.

It uses pytest's own rewriting (`_pytest.assertion.rewrite`, private): where that changes, it does nothing and
every worker rewrites for itself as before.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import os
import sys
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest

_USED = ("PYC_TAIL", "_rewrite_test", "_write_pyc", "get_cache_dir", "try_makedirs")
"""What is used of `_pytest.assertion.rewrite`."""
_config: pytest.Config | None = None  # the forked rewriting processes read it (a Config cannot be pickled)


def rewrite(config: pytest.Config) -> int:
    """Write the rewritten-assert cache of every test module under `config.args` that has no up-to-date one,
    when xdist will start workers and bytecode is written; the number of modules rewritten. Never raises:
    a module that cannot be rewritten is left to the workers (which report its error as they always did)."""
    global _config
    if not getattr(config.option, "numprocesses", None) or sys.dont_write_bytecode:
        return 0
    try:
        from _pytest.assertion import rewrite as pytest_rewrite
    except ImportError:
        return 0
    if not all(hasattr(pytest_rewrite, name) for name in _USED):
        return 0
    stale = [str(path) for path in test_modules(config) if not _cached(path, _pyc(pytest_rewrite, path))]
    if not stale:
        return 0
    _config = config
    processes = max(1, min(os.cpu_count() or 1, len(stale) // 8))
    with ProcessPoolExecutor(processes, mp_context=get_context("fork")) as pool:
        return sum(pool.map(_rewrite_one, stale, chunksize=max(1, len(stale) // (4 * processes))))


def test_modules(config: pytest.Config) -> Iterable[Path]:
    """The files under `config.args` (directories searched, `::` parts dropped) that pytest would rewrite as test
    modules: those matching `python_files`, and `conftest.py`."""
    patterns = [*config.getini("python_files"), "conftest.py"]
    for arg in config.args:
        root = Path(arg.split("::")[0])
        paths = root.rglob("*.py") if root.is_dir() else [root] if root.suffix == ".py" else []
        for path in paths:
            if "__pycache__" not in path.parts and any(fnmatch.fnmatch(path.name, p) for p in patterns):
                yield path.resolve()


def _cached(source: Path, pyc: Path) -> bool:
    """Whether `pyc` is a rewritten module pytest accepts for `source`: its magic number, the checked-hash flags
    and `source`'s hash, as `_pytest.assertion.rewrite._read_pyc` checks them."""
    try:
        with open(pyc, "rb") as file:
            head = file.read(16)
        source_hash = importlib.util.source_hash(source.read_bytes())
    except OSError:
        return False
    return head == importlib.util.MAGIC_NUMBER + b"\x03\x00\x00\x00" + source_hash[:8]


def _pyc(pytest_rewrite, source: Path) -> Path:
    """Where pytest caches the rewritten `source` (as its `AssertionRewritingHook.exec_module` names it)."""
    return pytest_rewrite.get_cache_dir(source) / (source.name[:-3] + pytest_rewrite.PYC_TAIL)


def _rewrite_one(name: str) -> int:
    """Rewrite and cache one module (in a forked process); 1 when its cache was written."""
    from _pytest.assertion import rewrite as pytest_rewrite

    path = Path(name)
    try:
        source_hash, code = pytest_rewrite._rewrite_test(path, _config)
        if not pytest_rewrite.try_makedirs(pytest_rewrite.get_cache_dir(path)):
            return 0
        return int(pytest_rewrite._write_pyc(_Quiet(), code, source_hash, _pyc(pytest_rewrite, path)))
    except Exception:  # a syntax error, a file gone meanwhile: the worker importing it reports it
        return 0


class _Quiet:
    """What `_write_pyc` traces its write errors into (pytest's `AssertionState`), silent here."""

    @staticmethod
    def trace(message: str) -> None:
        pass
