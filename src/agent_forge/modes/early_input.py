"""A protocol mode's first input line read before the event loop exists, and the bytes read given back to the
mode's reader afterwards: ACP answers a first `initialize` so (`acp/handshake.py`), RPC a first `get_state`
(`rpc/early.py`). Nothing here imports asyncio."""

from __future__ import annotations

from typing import Any, BinaryIO


def read_first_line(stdin: BinaryIO, limit: int) -> bytes:
    """What `stdin` (unbuffered) gives until a line ends, the input ends or `limit` bytes came (blocking): the
    first line and whatever came with it in the same reads."""
    data = b""
    while b"\n" not in data and len(data) < limit:
        try:
            chunk = stdin.read(1 << 16)
        except OSError:  # the mode's reader meets the same error and reports it
            break
        if not chunk:  # end of input (None: a non-blocking descriptor with nothing yet: the mode waits)
            break
        data += chunk
    return data


class PrefixedReader:
    """A `ByteReader` (`modes/rpc/streams.py`) giving `prefix` first, then what `reader` gives."""

    def __init__(self, prefix: bytes, reader: Any):
        self._prefix, self._reader = prefix, reader

    async def read(self, n: int = -1) -> bytes:
        if self._prefix:
            cut = len(self._prefix) if n < 0 else n
            chunk, self._prefix = self._prefix[:cut], self._prefix[cut:]
            return chunk
        return bytes(await self._reader.read(n))
