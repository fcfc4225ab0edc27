"""support/rewrite_ahead.py writes the rewritten-assert caches pytest's workers then read instead of rewriting."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from _pytest.assertion import rewrite as pytest_rewrite

from support import rewrite_ahead

FAILING = "def test_it():\n    left = [1, 2]\n    assert left == [1, 3]\n"


def config_for(root: Path, workers: int = 2) -> SimpleNamespace:
    """What `rewrite` reads of a pytest Config: the worker count, the paths, the `python_files` ini value (and
    the rewriter, `enable_assertion_pass_hook`)."""
    ini = {"python_files": ["test_*.py", "*_test.py"], "enable_assertion_pass_hook": False}
    return SimpleNamespace(option=SimpleNamespace(numprocesses=workers), args=[str(root)], getini=ini.__getitem__)


def cached_code(source: Path):
    return pytest_rewrite._read_pyc(source, rewrite_ahead._pyc(pytest_rewrite, source))


def test_test_modules_and_conftests_get_the_cache_pytest_reads_and_other_files_none(tmp_path):
    (tmp_path / "deep").mkdir()
    for name in ("test_a.py", "deep/b_test.py", "deep/conftest.py", "helper.py"):
        (tmp_path / name).write_text(FAILING)
    assert rewrite_ahead.rewrite(config_for(tmp_path)) == 3
    assert all(cached_code(tmp_path / name) is not None for name in ("test_a.py", "deep/b_test.py", "deep/conftest.py"))
    assert cached_code(tmp_path / "helper.py") is None
    namespace: dict = {}
    exec(cached_code(tmp_path / "test_a.py"), namespace)
    try:
        namespace["test_it"]()
    except AssertionError as error:
        assert "[1, 2] == [1, 3]" in str(error)  # the rewritten assert explains itself; a plain one says nothing
    else:
        raise AssertionError("the assert did not fail")


def test_only_stale_caches_are_written_again(tmp_path):
    source = tmp_path / "test_a.py"
    source.write_text(FAILING)
    assert rewrite_ahead.rewrite(config_for(tmp_path)) == 1
    assert rewrite_ahead.rewrite(config_for(tmp_path)) == 0
    source.write_text(FAILING.replace("[1, 3]", "[1, 4]"))
    assert rewrite_ahead.rewrite(config_for(tmp_path)) == 1


def test_nothing_is_written_without_workers_and_a_broken_module_is_left_to_them(tmp_path):
    (tmp_path / "test_a.py").write_text(FAILING)
    (tmp_path / "test_broken.py").write_text("def test_it(:\n")
    assert rewrite_ahead.rewrite(config_for(tmp_path, workers=0)) == 0
    assert cached_code(tmp_path / "test_a.py") is None
    assert rewrite_ahead.rewrite(config_for(tmp_path)) == 1
    assert cached_code(tmp_path / "test_broken.py") is None
