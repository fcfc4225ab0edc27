"""The built-in coding tools and the factories that create them for a working directory.

`TOOL_FACTORIES` maps each tool name to a callable `factory(cwd) -> AgentTool`. `grep`, `find` and `ls` are
registered but not in the default set (enable them with `--tools` or the `defaultTools` setting).
"""

from __future__ import annotations

import importlib
from typing import Callable, Mapping, Sequence

from ...agent.types import AgentTool


def _lazy(module: str, cls: str) -> Callable[..., AgentTool]:
    """A factory that imports its tool's module on first use: start-up pays only for the tools it creates.
    Keyword arguments go to the tool's constructor."""

    def factory(cwd: str, **options: object) -> AgentTool:
        return getattr(importlib.import_module(f"{__name__}.{module}"), cls)(cwd, **options)

    factory.__name__ = cls
    return factory


TOOL_FACTORIES: dict[str, Callable[..., AgentTool]] = {
    "read": _lazy("read", "ReadTool"),
    "bash": _lazy("bash", "BashTool"),
    "edit": _lazy("edit", "EditTool"),
    "write": _lazy("write", "WriteTool"),
    "grep": _lazy("grep", "GrepTool"),
    "find": _lazy("find", "FindTool"),
    "ls": _lazy("ls", "LsTool"),
}

CODING_TOOL_NAMES = ("read", "bash", "edit", "write")
"""The default tool set, in the order tools are offered to the model."""


def create_coding_tools(cwd: str) -> list[AgentTool]:
    """The default tools for `cwd`: read, bash, edit, write."""
    return create_tools(cwd, CODING_TOOL_NAMES)


def create_all_tools(cwd: str) -> dict[str, AgentTool]:
    """Every registered tool for `cwd`, by name."""
    return {name: factory(cwd) for name, factory in TOOL_FACTORIES.items()}


def create_tools(cwd: str, names: Sequence[str],
                 options: Mapping[str, Mapping[str, object]] | None = None) -> list[AgentTool]:
    """The named tools for `cwd`, in the given order; an unknown name raises `KeyError` listing the known ones.
    `options[name]` are keyword arguments for that tool (e.g. `{"bash": {"shell": ShellConfig(...)}}`)."""
    unknown = [name for name in names if name not in TOOL_FACTORIES]
    if unknown:
        raise KeyError(f"Unknown tool(s) {', '.join(unknown)}; known: {', '.join(TOOL_FACTORIES)}")
    options = options or {}
    return [TOOL_FACTORIES[name](cwd, **options.get(name, {})) for name in names]
