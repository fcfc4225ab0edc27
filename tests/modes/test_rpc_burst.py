"""RPC output: the records of one event-loop turn leave in one write and one flush, in order; nothing waits
past the turn, `flush_out` or the end of the mode."""

from __future__ import annotations

import asyncio

from agent_forge.modes.rpc.burst import BurstWriter


class Out:
    """A ByteWriter double that logs its calls."""

    def __init__(self, fail: type[OSError] | None = None) -> None:
        self.calls: list[tuple[str, bytes]] = []
        self.fail = fail

    def write(self, data: bytes) -> int:
        self.calls.append(("write", data))
        if self.fail is not None:
            raise self.fail("gone")
        return len(data)

    def flush(self) -> None:
        self.calls.append(("flush", b""))


async def test_one_write_and_flush_per_loop_turn_in_order():
    out = Out()
    burst = BurstWriter(out)
    for i in range(100):
        burst.write(b"r%d\n" % i)
    assert out.calls == []  # nothing yet inside the turn
    await asyncio.sleep(0)
    assert out.calls == [("write", b"".join(b"r%d\n" % i for i in range(100))), ("flush", b"")]
    burst.write(b"next\n")
    await asyncio.sleep(0)
    assert out.calls[2:] == [("write", b"next\n"), ("flush", b"")]


async def test_flush_writes_what_waits_and_the_scheduled_flush_then_has_nothing():
    out = Out()
    burst = BurstWriter(out)
    burst.write(b"a\n")
    burst.flush()
    assert out.calls == [("write", b"a\n"), ("flush", b"")]
    await asyncio.sleep(0)
    assert len(out.calls) == 2


def test_without_a_loop_each_record_is_written_at_once():
    out = Out()
    BurstWriter(out).write(b"a\n")
    assert out.calls == [("write", b"a\n"), ("flush", b"")]


async def test_a_reader_gone_away_is_no_error(monkeypatch):
    from agent_forge.modes import stdout_guard

    gone: list[object] = []
    monkeypatch.setattr(stdout_guard, "discard", gone.append)
    burst = BurstWriter(Out(fail=BrokenPipeError))
    burst.write(b"a\n")
    await asyncio.sleep(0)
    assert len(gone) == 1


def test_widen_pipe_leaves_what_is_no_pipe(tmp_path):
    """A file (or a terminal) as stdout keeps working: the failed request is ignored, the bytes still go out."""
    import os

    from agent_forge.modes.stdout_guard import widen_pipe

    path = tmp_path / "out"
    with open(path, "wb") as out:
        widen_pipe(out.fileno())
        out.write(b"kept\n")
    assert path.read_bytes() == b"kept\n"
    fd = os.open(os.devnull, os.O_WRONLY)
    try:
        widen_pipe(fd)  # a device: ignored too
    finally:
        os.close(fd)
