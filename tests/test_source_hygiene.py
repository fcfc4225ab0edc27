"""Source hygiene of `src/agent_forge`: no module imports a name it never uses (issue 10, small findings).

A deliberate re-export says so: `# noqa: F401` on the import, or the name in the module's `__all__` (what
pyflakes and ruff accept too). A name counts as used when the module's code names it (an expression or an
annotation) or a string that is not a docstring does (a quoted annotation, `__all__`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "agent_forge"
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring constants of the module, its classes and functions (and attribute docstrings)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for statement in body:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and \
                    isinstance(statement.value.value, str):
                found.add(id(statement.value))
    return found


def _used_names(tree: ast.Module) -> set[str]:
    docstrings = _docstrings(tree)
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            used.update(WORD.findall(node.value))
    return used


def _imported(tree: ast.Module, lines: list[str]) -> list[tuple[str, int]]:
    """(bound name, line) of every import not marked as a re-export."""
    bound = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        text = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        if "noqa: F401" in text or "noqa:F401" in text:
            continue
        for alias in node.names:
            if alias.name == "*" or (alias.asname is not None and alias.asname == alias.name):
                continue  # `import x as x`: the explicit re-export form
            name = alias.asname or alias.name.split(".")[0]
            bound.append((name, node.lineno))
    return bound


def unused_imports(path: Path) -> list[str]:
    """`<line>: <name>` for each name `path` imports and never uses."""
    source = path.read_text()
    tree = ast.parse(source)
    used = _used_names(tree)
    return [f"{line}: {name}" for name, line in _imported(tree, source.splitlines()) if name not in used]


def test_the_checker_finds_an_unused_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""asyncio is named in the docstring only."""\nimport asyncio\nimport os\n'
                      'from typing import Any\nfrom x import y  # noqa: F401\nX: "Any" = os.sep\n')
    assert unused_imports(module) == ["2: asyncio"]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_unused_imports(path):
    assert unused_imports(path) == []


def test_every_module_imports():
    """An import removed as unused that another module took from there fails here, not in some mode's run."""
    import importlib
    import pkgutil

    import agent_forge

    names = [m.name for m in pkgutil.walk_packages(agent_forge.__path__, "agent_forge.")
             if not m.name.endswith("__main__")]  # `python -m agent_forge` runs the CLI
    failed = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - the test reports every module that fails
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    assert len(names) > 100 and failed == []
