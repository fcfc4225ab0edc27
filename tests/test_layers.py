"""Layering (DESIGN.md): ai → agent → coding → plugins → modes; imports only point down."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "agent_forge"
ORDER = ["ai", "agent", "coding", "plugins", "modes"]


def _imported_layers(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    module_parts = path.relative_to(PACKAGE).with_suffix("").parts
    layers = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(module_parts[: len(module_parts) - node.level])
            target = base + (node.module.split(".") if node.module else [])
            if target:
                layers.add(target[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("agent_forge."):
            layers.add(node.module.split(".")[1])
    return layers


@pytest.mark.parametrize("layer", ORDER)
def test_layer_imports_only_lower_layers(layer):
    allowed = set(ORDER[: ORDER.index(layer) + 1])
    for path in (PACKAGE / layer).rglob("*.py"):
        upward = {name for name in _imported_layers(path) if name in ORDER and name not in allowed}
        assert not upward, f"{path.relative_to(PACKAGE)} imports {upward}"


def _module_names() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _under_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _runtime_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Modules of `agent_forge` that `name` imports when it runs: module- and function-level imports, not those
    under `if TYPE_CHECKING:`. `from package import name` also counts `package.name` when that is a module."""
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            targets = [target] + [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        if not _under_type_checking(node, parents):
            found.update(t for t in targets if t in modules and t != name)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles_inside_the_package():
    """Issue 11: no module imports one that (directly or not) imports it back, function-level imports
    included: a collaborator gets what it needs (agent, store, settings, an `emit` callable), never the hub."""
    modules = _module_names()
    graph = {name: _runtime_imports(name, path, modules) for name, path in modules.items()}
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


MAX_MODULE_LINES = 450
MAX_HUB_LINES = 300  # the session hub is public API plus delegation (issue 11)


def test_no_module_is_over_the_size_limit():
    sizes = {path.relative_to(PACKAGE): len(path.read_text().splitlines()) for path in PACKAGE.rglob("*.py")}
    assert {str(path): n for path, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def test_the_session_hub_stays_delegation():
    assert len((PACKAGE / "coding" / "agent_session.py").read_text().splitlines()) <= MAX_HUB_LINES
