"""Capability plugins: Python code that adds commands, tools and event handlers to a session (`docs/plugins.md`).

Names are re-exported lazily, so importing this package costs nothing until one is used::

    from agent_forge.plugins import Block, Cancel, Plugin, Transform
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers see; at run time `__getattr__` imports on first use
    from ..agent.types import ToolError, ToolResult
    from .api import (HANDLED, HOOK_EVENTS, OBSERVED_EVENTS, AddContext, BeforeRunEvent, Block, Cancel, Context,
                      Handled, InputEvent, Plugin, PluginError, SessionChangeEvent, SessionShutdownEvent,
                      SessionStartEvent, SessionView, ToolCallEvent, ToolContext, Transform)
    from .loader import PluginLoadError
    from .runner import PluginRunner
    from .startup import install_plugins
    from .ui import PluginUI, RpcUI

_EXPORTS = {
    "Plugin": "api", "PluginError": "api", "Context": "api", "ToolContext": "api", "SessionView": "api",
    "InputEvent": "api", "BeforeRunEvent": "api", "ToolCallEvent": "api", "SessionChangeEvent": "api",
    "SessionStartEvent": "api", "SessionShutdownEvent": "api", "Transform": "api", "HANDLED": "api",
    "Handled": "api", "AddContext": "api", "Block": "api", "Cancel": "api", "HOOK_EVENTS": "api",
    "OBSERVED_EVENTS": "api", "PluginUI": "ui", "RpcUI": "ui", "PluginRunner": "runner",
    "install_plugins": "startup", "PluginLoadError": "loader", "ToolResult": "_agent_types",
    "ToolError": "_agent_types",
}

__all__ = [  # the keys of _EXPORTS, written out so that linters see the names
    "AddContext", "BeforeRunEvent", "Block", "Cancel", "Context", "HANDLED", "HOOK_EVENTS", "Handled", "InputEvent",
    "OBSERVED_EVENTS", "Plugin", "PluginError", "PluginLoadError", "PluginRunner", "PluginUI", "RpcUI",
    "SessionChangeEvent", "SessionShutdownEvent", "SessionStartEvent", "SessionView", "ToolCallEvent",
    "ToolContext", "ToolError", "ToolResult", "Transform", "install_plugins",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    source = "agent_forge.agent.types" if module == "_agent_types" else f"{__name__}.{module}"
    value = getattr(importlib.import_module(source), name)
    globals()[name] = value
    return value
