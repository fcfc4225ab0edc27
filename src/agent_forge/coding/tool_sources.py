"""What the session hub needs of an outside source of tools (the MCP servers, `mcp/manager.py`), and the source
a session without one has, so the hub never asks which it holds."""

from __future__ import annotations

from typing import Any, Awaitable, Protocol

from .events import McpServerInfo


class ToolSource(Protocol):
    def wait_ready(self) -> Awaitable[None] | None:
        """Before a run's first request: wait (abortably) for servers still starting; None when none is."""

    def prompt_sections(self) -> list[str]:
        """System prompt sections naming what is connected."""

    def servers(self) -> list[McpServerInfo]:
        """The `get_mcp_servers` items."""

    def commands(self) -> list[dict[str, Any]]:
        """`get_commands` items of the servers' prompts (`/mcp:<server>:<prompt>`)."""

    def names_prompt(self, text: object) -> bool:
        """Whether `text` starts with `/mcp:<server>:` of a configured server."""

    def expand_prompt(self, text: object) -> Awaitable[tuple[str, list[dict[str, Any]]]] | None:
        """For a `/mcp:<server>:<prompt> args` of a configured server: the awaitable `(text, images)` of the
        user message (it raises `CommandError`); None for any other text."""

    def input_closed(self) -> None:
        """The client is gone (stdin EOF, `close`): running calls get their deadline, no run waits any more."""

    async def close(self) -> None:
        """Stop every server (their process groups end)."""


class NoToolSource:
    """The `ToolSource` of a session with no MCP servers configured: nothing to wait for, list or stop."""

    def wait_ready(self) -> None:
        return None

    def prompt_sections(self) -> list[str]:
        return []

    def servers(self) -> list[McpServerInfo]:
        return []

    def commands(self) -> list[dict[str, Any]]:
        return []

    def names_prompt(self, text: object) -> bool:
        return False

    def expand_prompt(self, text: object) -> None:
        return None

    def input_closed(self) -> None:
        pass

    async def close(self) -> None:
        pass
