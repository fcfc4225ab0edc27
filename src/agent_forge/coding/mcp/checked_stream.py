"""The MCP transport's read stream as the SDK's `ClientSession` reads it, each message checked on the way by the
connection that owns it (`ServerConnection._checked_item`), in the session's own read loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import ConnectionLost

if TYPE_CHECKING:  # the SDK's types; the SDK itself is imported on the first connection (`sdk.load_sdk`)
    from anyio import Event as AnyioEvent
    from mcp.client._transport import ReadStream
    from mcp.shared.message import SessionMessage

    from .connection import ServerConnection


class CheckedStream:
    """The transport's read stream as the session reads it (the SDK's `ReadStream` protocol), each message
    passed through `ServerConnection._checked_item` in the session's own read loop: no task and no stream in
    between (a hand-off per message fewer: 20,000 log notifications cost a task switch each). When it ends
    (the transport's end, or `_checked_item` ending the connection), the server is gone (`_gone`) and `lost`
    is set, before the session fails its waiting requests."""

    def __init__(self, owner: ServerConnection, read: ReadStream[SessionMessage | Exception], lost: AnyioEvent):
        self._owner, self._read, self._lost = owner, read, lost

    async def receive(self) -> SessionMessage:
        """The next message. Raises `EndOfStream` (anyio's) at the end of the transport's messages."""
        import anyio

        try:
            while True:
                try:
                    item = await self._read.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    raise anyio.EndOfStream from None
                if (message := self._owner._checked_item(item)) is not None:
                    return message
        except (anyio.EndOfStream, ConnectionLost):
            self._end()
            raise anyio.EndOfStream from None

    def _end(self) -> None:
        self._owner._gone()
        self._lost.set()

    async def aclose(self) -> None:
        await self._read.aclose()

    def __aiter__(self) -> CheckedStream:
        return self

    async def __anext__(self) -> SessionMessage:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> CheckedStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

