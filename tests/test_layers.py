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
