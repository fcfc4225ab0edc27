"""The MCP SDK's client side as connections use it: its import (in a worker thread, on the first connection)
and paged `*/list` requests."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Awaitable, Callable, Union

if TYPE_CHECKING:
    from types import ModuleType

    from mcp import ClientSession
    from mcp_types import PaginatedResult, Prompt, Resource, ResourceTemplate, Tool

    Listed = Union[Tool, Prompt, Resource, ResourceTemplate]
    """An item of a `*/list` answer."""


async def load_sdk() -> tuple[type[ClientSession], ModuleType]:
    """`(ClientSession, anyio)`, imported in a worker thread: the import takes a second or two of CPU."""
    def load() -> tuple[type[ClientSession], ModuleType]:
        import logging

        logger = logging.getLogger("mcp")
        logger.addHandler(logging.NullHandler())
        logger.propagate = False  # the SDK logs parse errors with tracebacks; they are reported as states
        import anyio
        from mcp import ClientSession
        from mcp.shared.message import SessionMessage  # noqa: F401 (what `stdio_transport` makes)

        return ClientSession, anyio

    return await asyncio.to_thread(load)


CHANGED = {"ToolListChangedNotification": ("tools",), "PromptListChangedNotification": ("prompts",),
            "ResourceListChangedNotification": ("resources", "resource_templates")}
LISTED_KINDS = ("tools", "prompts", "resources", "resource_templates")
MAX_LISTED = 1000
"""At most this many prompts, resources or templates are kept per server (a listing may page for ever)."""


async def list_all(method: Callable[..., Awaitable[PaginatedResult]], kind: str) -> list[Listed]:
    """Every page of a `*/list` request (`kind` is the result's field: `tools`, `prompts`, ...)."""
    from mcp_types import PaginatedRequestParams

    items: list[Listed] = []
    cursor = None
    while True:
        result = await method(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        items.extend(getattr(result, kind))
        cursor = result.next_cursor
        if not cursor or (kind != "tools" and len(items) >= MAX_LISTED):
            return items[:MAX_LISTED] if kind != "tools" else items
