"""agent-forge: a headless coding agent (RPC mode, print/json modes, Python SDK)."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "create_agent_session"]


def __getattr__(name: str):
    # Lazy re-export: importing the package must stay cheap for the CLI's start-up budget.
    if name == "create_agent_session":
        from .sdk import create_agent_session

        return create_agent_session
    raise AttributeError(f"module 'agent_forge' has no attribute {name!r}")
