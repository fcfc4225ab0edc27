"""run_shell with real bash: streaming, merged stderr, exit codes, spilling, timeout, abort, cancellation, and
what a stopped command left outside its process group (`setsid`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import time

import pytest
from support.doubles import PidFifo, ProcessWatch

from agent_forge.coding.tools import procgroup
from agent_forge.coding.tools.shell import run_shell
from agent_forge.coding.tools.shell_output import OutputCollector, TailBuffer

PGID_LINE = re.compile(r"pgid=(\d+)")


class Chunks:
    """Records chunks and lets a test wait until the output contains some text."""

    def __init__(self):
        self.items: list[str] = []
        self._changed = asyncio.Event()

    def __call__(self, text: str) -> None:
        self.items.append(text)
        self._changed.set()

    @property
    def text(self) -> str:
        return "".join(self.items)

    async def wait_for(self, needle: str, timeout: float = 10) -> None:
        async def until():
            while needle not in self.text:
                self._changed.clear()
                await self._changed.wait()
        await asyncio.wait_for(until(), timeout)

    def pgid(self) -> int:
        return int(PGID_LINE.search(self.text).group(1))


async def test_chunks_stream_in_order_while_the_command_runs(tmp_path, make_gate):
    gate, chunks, events = make_gate(), Chunks(), []
    task = asyncio.create_task(run_shell(f"echo one; {gate.wait}; echo two", str(tmp_path),
                                         on_chunk=lambda t: (events.append(t), chunks(t))))
    await chunks.wait_for("one\n")
    events.append("<released>")
    gate.open()
    result = await asyncio.wait_for(task, 10)
    assert events == ["one\n", "<released>", "two\n"]
    assert (result.output, result.exit_code, result.truncated) == ("one\ntwo\n", 0, False)
    assert not result.cancelled and not result.timed_out and result.full_output_path is None


async def test_stderr_is_merged_in_order(tmp_path):
    result = await run_shell("echo out; echo err >&2; echo out2", str(tmp_path))
    assert result.output == "out\nerr\nout2\n"


async def test_runs_in_cwd_with_stdin_closed(tmp_path):
    result = await run_shell("pwd; cat; echo after-cat", str(tmp_path))
    assert result.output == f"{tmp_path}\nafter-cat\n"


async def test_exit_codes(tmp_path):
    assert (await run_shell("exit 3", str(tmp_path))).exit_code == 3
    assert (await run_shell("kill -TERM $$", str(tmp_path))).exit_code == 143


async def test_missing_cwd_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        await run_shell("true", str(tmp_path / "nope"))


async def test_unicode_split_across_chunks_is_decoded_whole(tmp_path, make_gate):
    gate, chunks = make_gate(), Chunks()
    task = asyncio.create_task(run_shell(f"printf 'a\\303'; {gate.wait}; printf '\\251b'", str(tmp_path),
                                         on_chunk=chunks))
    await chunks.wait_for("a")
    gate.open()
    result = await asyncio.wait_for(task, 10)
    assert chunks.items == ["a", "éb"]
    assert result.output == "aéb"


async def test_invalid_utf8_becomes_replacement_characters(tmp_path):
    result = await run_shell("printf 'x\\377y\\303'", str(tmp_path))
    assert result.output == "x\ufffdy\ufffd"


async def test_long_output_keeps_the_tail_and_spills_everything_to_a_file(tmp_path):
    result = await run_shell("seq 1 100000", str(tmp_path))
    everything = "".join(f"{i}\n" for i in range(1, 100_001))
    assert result.truncated and result.truncation["truncatedBy"] == "lines"
    assert result.output == "".join(f"{i}\n" for i in range(98_001, 100_001))
    assert result.truncation["totalLines"] == 100_000 and result.truncation["totalBytes"] == len(everything)
    # no session: the process's own directory, pruned once this process has ended (output_files.py)
    assert os.path.basename(result.full_output_path).startswith("bash-")
    assert os.path.basename(os.path.dirname(result.full_output_path)) == f"process-{os.getpid()}"
    assert result.full_output_path.endswith(".log")
    with open(result.full_output_path) as f:
        assert f.read() == everything
    os.unlink(result.full_output_path)


async def test_one_enormous_line_keeps_its_last_50_kb(tmp_path):
    result = await run_shell("head -c 300000 /dev/zero | tr '\\0' 'z'; echo END", str(tmp_path))
    assert result.truncation["lastLinePartial"]
    assert result.output == "z" * (51200 - 4) + "END\n"
    assert os.path.getsize(result.full_output_path) == 300_004
    os.unlink(result.full_output_path)


async def test_timeout_kills_the_whole_process_group(tmp_path, group_members):
    started = time.monotonic()
    result = await asyncio.wait_for(
        run_shell("echo pgid=$$; sleep 30 & sleep 30", str(tmp_path), timeout_s=0.5), 10)
    pgid = int(PGID_LINE.search(result.output).group(1))
    assert result.timed_out and result.exit_code is None and not result.cancelled
    assert group_members(pgid) == []
    assert time.monotonic() - started < 5


async def test_cancellation_kills_the_group_and_propagates_promptly(tmp_path, group_members):
    chunks = Chunks()
    # The shell reports its children's pids once it has forked them, so the census below cannot run early.
    command = "sleep 30 & a=$!; sleep 30 & b=$!; echo pgid=$$ children=$a,$b; wait"
    task = asyncio.create_task(run_shell(command, str(tmp_path), on_chunk=chunks))
    await chunks.wait_for("\n")
    pgid = chunks.pgid()
    children = re.search(r"children=(\d+),(\d+)", chunks.text).groups()
    pids = {line.split()[2] for line in group_members(pgid)}
    assert set(children) <= pids  # both sleeps run in the command's group
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert time.monotonic() - started < 5
    assert group_members(pgid) == []


async def test_sigterm_ignoring_process_is_killed(tmp_path, group_members, monkeypatch):
    monkeypatch.setattr(procgroup, "KILL_GRACE_S", 0.2)  # the SIGKILL after the grace is what is tested, not 2 s
    chunks = Chunks()
    command = "trap '' TERM; echo pgid=$$; sleep 30 & wait"
    task = asyncio.create_task(run_shell(command, str(tmp_path), on_chunk=chunks))
    await chunks.wait_for("pgid=")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert group_members(chunks.pgid()) == []


def escapee(where, fifo, on_term: str | None) -> str:
    """`setsid sh <script>`: a child that leaves the command's process group and session, runs the shell text
    `on_term` on SIGTERM (None: ignores it), writes its pid to `fifo` (None: nowhere) once it runs there, and
    waits."""
    script = where / "escapee.sh"
    trap = "trap '' TERM" if on_term is None else f"on_term() {{\n{on_term}\n}}\ntrap on_term TERM"
    report = "" if fifo is None else f"echo $$ > '{fifo}'\n"
    script.write_text(f"{trap}\n{report}sleep 30 & wait\n")
    return f"setsid sh '{script}'"


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="lifeline tokens need /proc")


@pytest.fixture
def escapee_started(watch_process):
    """`await escapee_started(fifo)` → a `ProcessWatch` of the escapee that wrote its pid to `fifo`; at teardown
    its session's process group is SIGKILLed (it leads it: its `sleep` too), so a failed test leaves nothing."""
    groups: list[int] = []

    async def started(fifo) -> ProcessWatch:
        groups.append(await fifo.pid())
        return watch_process(groups[-1])

    yield started
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


@needs_proc
@pytest.mark.parametrize("how", ["abort", "timeout", "cancel"])
async def test_a_stopped_command_sigterms_what_left_its_group(tmp_path, pid_fifo, escapee_started, how):
    """What left the group but carries the command's lifeline token gets the group's SIGTERM (and its grace)."""
    marker, chunks, abort = tmp_path / "terminated", Chunks(), asyncio.Event()
    command = escapee(tmp_path, pid_fifo.path, f"echo TERM > '{marker}'; exit") + " & echo started; wait"
    task = asyncio.create_task(run_shell(command, str(tmp_path), on_chunk=chunks, abort=abort,
                                         timeout_s=1 if how == "timeout" else None))
    child = await escapee_started(pid_fifo)
    await chunks.wait_for("started")  # its output is read: cancelled earlier, the start SIGKILLs at once
    if how == "abort":
        abort.set()
    if how == "cancel":
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)
    else:
        result = await asyncio.wait_for(task, 10)
        assert (result.cancelled, result.timed_out) == (how == "abort", how == "timeout")
    assert child.exited(within=0) and marker.read_text() == "TERM\n"


@needs_proc
async def test_each_process_of_a_stopped_command_gets_one_sigterm(tmp_path, pid_fifo, escapee_started, monkeypatch):
    """The command's own shell (in its group, carrying the token too) and what left the group each count the
    SIGTERMs they get, ignoring them until the grace's SIGKILL: one each (a second SIGTERM means "force quit" to
    many programs)."""
    monkeypatch.setattr(procgroup, "KILL_GRACE_S", 0.3)
    inside, outside, chunks, abort = tmp_path / "inside", tmp_path / "outside", Chunks(), asyncio.Event()
    command = (escapee(tmp_path, pid_fifo.path, f"echo TERM >> '{outside}'") +
               f" & trap 'echo TERM >> {inside}' TERM; echo started; while :; do sleep 0.05; done")
    task = asyncio.create_task(run_shell(command, str(tmp_path), on_chunk=chunks, abort=abort))
    child = await escapee_started(pid_fifo)
    await chunks.wait_for("started")
    abort.set()
    assert (await asyncio.wait_for(task, 10)).cancelled
    assert child.exited(within=0)
    assert inside.read_text() == "TERM\n" and outside.read_text() == "TERM\n"


@needs_proc
async def test_what_left_the_group_and_ignores_sigterm_is_killed_after_the_grace(tmp_path, pid_fifo, escapee_started,
                                                                                  monkeypatch):
    monkeypatch.setattr(procgroup, "KILL_GRACE_S", 0.2)
    abort = asyncio.Event()
    task = asyncio.create_task(run_shell(escapee(tmp_path, pid_fifo.path, None) + " & wait", str(tmp_path),
                                         abort=abort))
    child = await escapee_started(pid_fifo)
    started = time.monotonic()
    abort.set()
    assert (await asyncio.wait_for(task, 10)).cancelled
    assert child.exited(within=0) and 0.2 <= time.monotonic() - started < 5


@needs_proc
async def test_a_carrier_forked_during_the_grace_is_killed(tmp_path, pid_fifo, escapee_started, monkeypatch):
    """The escapee answers SIGTERM by starting another (that ignores SIGTERM), reporting its pid, and exiting:
    the newcomer never got the SIGTERM, and is SIGKILLed once the grace is over."""
    monkeypatch.setattr(procgroup, "KILL_GRACE_S", 0.2)
    (tmp_path / "late").mkdir()
    late_fifo = PidFifo(tmp_path / "late" / "pid.fifo")
    try:
        newcomer = escapee(tmp_path / "late", None, None)
        abort = asyncio.Event()
        command = escapee(tmp_path, pid_fifo.path, f"{newcomer} & echo $! > '{late_fifo.path}'\nexit") + " & wait"
        task = asyncio.create_task(run_shell(command, str(tmp_path), abort=abort))
        first = await escapee_started(pid_fifo)
        abort.set()
        second = await escapee_started(late_fifo)
        assert (await asyncio.wait_for(task, 10)).cancelled
        assert first.exited(within=0) and second.exited(within=0)
    finally:
        late_fifo.close()


async def test_abort_event_returns_the_output_so_far(tmp_path, group_members):
    chunks, abort = Chunks(), asyncio.Event()
    task = asyncio.create_task(run_shell("echo pgid=$$; echo start; sleep 30; echo never", str(tmp_path),
                                         on_chunk=chunks, abort=abort))
    await chunks.wait_for("start\n")
    abort.set()
    result = await asyncio.wait_for(task, 10)
    assert result.cancelled and result.exit_code is None and not result.timed_out
    assert result.output.endswith("start\n")
    assert group_members(chunks.pgid()) == []


async def test_background_job_holding_the_pipe_does_not_block_completion(tmp_path, group_members):
    result = await asyncio.wait_for(run_shell("echo pgid=$$; sleep 30 & echo done", str(tmp_path)), 10)
    assert result.exit_code == 0 and result.output.endswith("done\n")
    pgid = int(PGID_LINE.search(result.output).group(1))
    assert group_members(pgid)  # an intentional background job outlives the command...
    os.killpg(pgid, 9)  # ...so this test cleans it up


async def test_failing_chunk_callback_stops_the_command_and_raises(tmp_path, group_members):
    seen = []

    def explode(text):
        seen.append(text)
        raise RuntimeError("callback broke")

    with pytest.raises(RuntimeError, match="callback broke"):
        await asyncio.wait_for(run_shell("echo pgid=$$; sleep 30", str(tmp_path), on_chunk=explode), 10)
    assert group_members(int(PGID_LINE.search(seen[0]).group(1))) == []


def test_tail_buffer_memory_stays_bounded():
    tail = TailBuffer()
    line = "0123456789" * 9 + "\n"
    for _ in range(100_000):  # 9.1 MB
        tail.append(line)
    assert tail.retained_chars <= 2 * 51200 + 2
    result = tail.result()
    assert result["totalLines"] == 100_000 and result["totalBytes"] == 9_100_000
    assert result["content"] == line * 562 and result["truncatedBy"] == "bytes"


def test_collector_holds_back_a_split_character():
    pieces = []
    collector = OutputCollector(pieces.append)
    for byte in "😀!".encode():
        collector.feed(bytes([byte]))
    collector.feed(b"\xe2\x82")  # an unfinished euro sign at the very end
    collector.finish()
    assert pieces == ["😀", "!", "\ufffd"]
