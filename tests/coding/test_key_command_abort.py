"""Cancelling a key `!command` (an abort) kills its whole process group wherever the cancellation lands. The
windows are inside asyncio's start of the command, where its shell already runs and forks: asyncio's own
clean-up of a cancelled `subprocess_shell` kills the shell alone (`Popen.kill`), so a child the shell forked
survived (or, pipes not yet connected, the cancelled call hung until that child exited). Each test holds the
command in one window with a gate or a hook, so the window is chosen, never left to timing."""

from __future__ import annotations

import asyncio

import pytest

from agent_forge.coding.models import key_values

PROMPT_S = 20
"""Bound on a cancelled call's return: the command's child sleeps 60 s, so returning sooner means it was
stopped rather than waited for."""


def hanging_command(pid_fifo) -> str:
    """A shell that forks a long child, says the child's pid, and waits for it (like the e2e test's command)."""
    return f"sleep 60 & echo $! > '{pid_fifo.path}'; wait; echo late"


def gate_pipe_connection(loop, monkeypatch) -> tuple[asyncio.Event, asyncio.Future[None]]:
    """Hold asyncio's connection of a command's pipes (it comes after the shell was spawned) until the gate
    future is set; the event is set once a connection is held."""
    held, gate = asyncio.Event(), loop.create_future()
    connect = loop.connect_read_pipe

    async def gated(*args, **kwargs):
        held.set()
        await gate
        return await connect(*args, **kwargs)

    monkeypatch.setattr(loop, "connect_read_pipe", gated)
    return held, gate


async def test_a_cancel_as_the_start_completes_kills_what_the_shell_forked(pid_fifo, watch_process, monkeypatch):
    """The flake's window: pipes connected, `subprocess_shell` about to return (its waiter is set)."""
    loop = asyncio.get_running_loop()
    _, gate = gate_pipe_connection(loop, monkeypatch)
    tasks: list[asyncio.Task] = []
    # asyncio calls `connection_made` once the pipes are connected, just before subprocess_shell returns.
    monkeypatch.setattr(key_values._KeyCommandOutput, "connection_made", lambda self, transport: tasks[0].cancel())
    tasks.append(asyncio.create_task(key_values.run_key_command_async(hanging_command(pid_fifo))))
    child = watch_process(await pid_fifo.pid())  # the shell runs and has forked its child
    gate.set_result(None)
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(tasks[0], PROMPT_S)
    assert child.exited(), "the child of a command cancelled as it started survived"


async def test_a_cancel_while_the_pipes_connect_is_prompt_and_kills_the_group(pid_fifo, watch_process,
                                                                              monkeypatch):
    loop = asyncio.get_running_loop()
    held, gate = gate_pipe_connection(loop, monkeypatch)
    task = asyncio.create_task(key_values.run_key_command_async(hanging_command(pid_fifo)))
    child = watch_process(await pid_fifo.pid())
    await held.wait()
    task.cancel()
    gate.set_result(None)
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, PROMPT_S)  # not held until the child closes the pipes it inherited
    assert child.exited(), "the child of a command cancelled while starting survived"


async def test_a_second_cancel_while_the_start_is_held_still_kills_the_group(pid_fifo, watch_process,
                                                                             monkeypatch):
    loop = asyncio.get_running_loop()
    held, gate = gate_pipe_connection(loop, monkeypatch)
    second_cancel_sent = loop.create_future()
    task = asyncio.create_task(key_values.run_key_command_async(hanging_command(pid_fifo)))
    child = watch_process(await pid_fifo.pid())
    await held.wait()
    task.cancel()
    # The task takes the first cancellation on its next step (callbacks run in order); then it is cancelled
    # again while it waits for the start to finish.
    loop.call_soon(lambda: (task.cancel(), second_cancel_sent.set_result(None)))
    await second_cancel_sent
    gate.set_result(None)
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, PROMPT_S)
    assert child.exited(), "a second cancellation let the command's child survive"


async def test_a_cancel_while_the_output_is_read_kills_the_group(pid_fifo, watch_process, monkeypatch):
    collecting = asyncio.Event()
    collect = key_values._collect

    async def signalled_collect(*args, **kwargs):
        collecting.set()
        return await collect(*args, **kwargs)

    monkeypatch.setattr(key_values, "_collect", signalled_collect)
    task = asyncio.create_task(key_values.run_key_command_async(hanging_command(pid_fifo)))
    child = watch_process(await pid_fifo.pid())
    await collecting.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, PROMPT_S)
    assert child.exited(), "the child of a cancelled command survived"


async def test_a_command_cancelled_before_its_first_step_never_runs(tmp_path):
    marker = tmp_path / "ran"
    task = asyncio.create_task(key_values.run_key_command_async(f"touch '{marker}'"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not marker.exists()
