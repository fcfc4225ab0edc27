"""Helpers for provider tests: a scripted HTTP server on `httpx2.MockTransport`, SSE framing, collectors."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import httpx2


class ScriptedBody(httpx2.AsyncByteStream):
    """A response body sent as the given chunks; with `hang_after=n` it stops after n chunks until cancelled.

    `closed` records that the client closed the body (what an abort must do).
    """

    def __init__(self, chunks: list[bytes], hang_after: int | None = None):
        self.chunks = chunks
        self.hang_after = hang_after
        self.hanging = asyncio.Event()
        self.closed = False

    async def __aiter__(self):
        for position, chunk in enumerate(self.chunks):
            if position == self.hang_after:
                self.hanging.set()
                await asyncio.Event().wait()
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class FakeServer:
    """Answers every request with the next scripted (status, body); records requests."""

    replies: list[tuple[int, ScriptedBody]] = field(default_factory=list)
    requests: list[httpx2.Request] = field(default_factory=list)

    def reply(self, body: bytes | list[bytes], *, status: int = 200, chunk: int | None = None,
              hang_after: int | None = None) -> ScriptedBody:
        chunks = body if isinstance(body, list) else split(body, chunk)
        scripted = ScriptedBody(chunks, hang_after)
        self.replies.append((status, scripted))
        return scripted

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        status, body = self.replies.pop(0)
        return httpx2.Response(status, headers={"content-type": "text/event-stream"}, stream=body)

    @property
    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)

    def body(self, index: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[index].content)


def split(data: bytes, size: int | None) -> list[bytes]:
    if not size:
        return [data]
    return [data[i : i + size] for i in range(0, len(data), size)]


async def collect(events) -> list[dict[str, Any]]:
    return [event async for event in events]


def types_of(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def sse(event: str | None, data: Any) -> bytes:
    """One SSE event; `data` dicts are JSON-encoded."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()
