"""End to end: abort-type commands that arrive while an abort is settling (issue 10 point A), and command storms.

Every command is answered exactly once, whatever arrives meanwhile, and the process exits cleanly on stdin EOF.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from agent_forge.modes.rpc.client import RpcClient
from agent_forge.modes.rpc.types import COMMANDS

SLOW_TERM = "trap 'sleep 0.5; exit 1' TERM; echo trapped; sleep 30 & wait"
"""A bash tool command that takes half a second to die on SIGTERM: its abort is still settling for that long."""


def responses_by_id(client: RpcClient) -> Counter:
    return Counter(str(r.get("id")) for r in client.records if r.get("type") == "response")


async def start_slow_tool(client: RpcClient, fake_llm) -> None:
    fake_llm.set_script([{"tool_calls": [{"name": "bash", "arguments": {"command": SLOW_TERM}}]}])
    await client.send({"type": "prompt", "message": "go", "id": "prompt"})
    await wait_for_output(client, "trapped")  # the trap is set: from now on SIGTERM takes half a second


async def wait_for_output(client: RpcClient, text: str) -> None:
    async for event in client.events_until("agent_settled"):
        if event["type"] == "tool_execution_update" and any(
                text in block.get("text", "") for block in event["partialResult"]["content"]):
            return
    raise AssertionError(f"the tool never printed {text!r}")


SECOND = ["abort", "clone", "new_session", "compact", "switch_session", "fork", "abort_retry",
          "abort_bash"]


async def second_command(client: RpcClient, kind: str) -> dict:
    """`kind` with the fields it needs, taken from the running session (asked before the first abort)."""
    if kind == "switch_session":
        state = (await client.send({"type": "get_state"}))["data"]
        return {"type": kind, "sessionPath": state["sessionFile"]}
    if kind == "fork":
        forks = (await client.send({"type": "get_fork_messages"}))["data"]["messages"]
        return {"type": kind, "entryId": forks[0]["entryId"]}
    return {"type": kind}


@pytest.mark.parametrize("second", SECOND)
async def test_a_second_abort_type_command_while_an_abort_settles(agent_env, fake_llm, tmp_path, second):
    client = await RpcClient.start([], cwd=str(tmp_path), env=agent_env)
    await start_slow_tool(client, fake_llm)
    command = await second_command(client, second)
    first = client.send_nowait({"type": "abort", "id": "first"})
    other = client.send_nowait({**command, "id": "second"})
    try:
        replies = await asyncio.wait_for(asyncio.gather(first, other), 20)
    finally:
        code = await client.close(timeout=20)  # killed if it does not exit: no process outlives the test
    assert replies[0]["success"] is True, replies
    assert replies[1]["command"] == second
    assert code == 0
    counts = responses_by_id(client)
    assert {"prompt", "first", "second"} <= counts.keys() and set(counts.values()) == {1}, counts
    assert sum(1 for r in client.records if r.get("type") == "agent_settled") == 1
    kinds = [(r["type"], r.get("id")) for r in client.records]  # docs/rpc.md: `abort` answers after the settle
    assert kinds.index(("agent_settled", None)) < kinds.index(("response", "first")), kinds


# -- randomized command storms ----------------------------------------------------------------------------

STORM_SLOW = "trap 'sleep 0.2; exit 1' TERM; sleep 0.3 & wait"
"""Slow to die on abort, yet soon done when nobody aborts it (work still running at EOF is finished)."""
STORM_SEEDS = [3, 17, 101, 216, 2024]
"""Fixed so a failure reproduces: rerun with `-k "storm and <seed>"`."""
STORM_COMMANDS = 32
STORM_SETTINGS = {
    "retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 10, "maxAgentDelayMs": 50},
    "compaction": {"enabled": True, "reserveTokens": 3900, "keepRecentTokens": 40},
}
"""Retries wait milliseconds; a 4,000-token window with 3,900 reserved makes nearly every turn compact."""


STORM_PLUGIN = """
def setup(plugin):
    plugin.command("note")(lambda args, ctx: ctx.ui.notify("noted"))
    plugin.command("ask")(lambda args, ctx: ctx.session.send_user_message(args))
"""
"""Plugin commands for `prompt`: one that only notifies (handled, settles at once), one that starts a run."""


def storm_script(rng) -> list[dict]:
    """Model answers in random order: text, bash tool calls (one slow to die), server errors, hangs."""
    kinds = [
        lambda: {"text": "plain answer", "delay_ms": 5},
        lambda: {"tool_calls": [{"name": "bash", "arguments": {"command": "echo tool; sleep 0.05"}}]},
        lambda: {"tool_calls": [{"name": "bash", "arguments": {"command": STORM_SLOW}}]},
        lambda: {"status": 500},
        lambda: {"text": "slow answer words", "hang_after": 2, "hang_ms": 150},
    ]
    return [rng.choice(kinds)() for _ in range(40)]


class Storm:
    """Sends random commands in bursts and tracks what the session reported (files, entry ids, busy)."""

    def __init__(self, client: RpcClient, rng, tmp_path):
        self.client, self.rng, self.tmp_path = client, rng, tmp_path
        self.sent: list[str] = []
        self.log: list[str] = []
        self.files: list[str] = []
        self.entry_ids: list[str] = []
        self.busy = False

    def command(self) -> dict:
        rng = self.rng
        kind = rng.choice(STORM_KINDS)
        fields = {
            "prompt": lambda: {"message": rng.choice([f"p{rng.randrange(99)}", "/note", "/ask via plugin"]),
                               **rng.choice([{}, {"streamingBehavior": "steer"}, {"streamingBehavior": "followUp"}])},
            "steer": lambda: {"message": "s"}, "follow_up": lambda: {"message": "f"},
            "set_model": lambda: {"provider": "fake", "modelId": "fake-model"},
            "logout_provider": lambda: {"provider": "nobody"},
            "set_context_window": lambda: {"contextWindow": 4000},
            "set_thinking_level": lambda: {"level": rng.choice(["off", "low", "high"])},
            "set_steering_mode": lambda: {"mode": rng.choice(["all", "one-at-a-time"])},
            "set_follow_up_mode": lambda: {"mode": rng.choice(["all", "one-at-a-time"])},
            "set_auto_compaction": lambda: {"enabled": rng.random() < 0.8},
            "set_auto_retry": lambda: {"enabled": rng.random() < 0.8},
            "bash": lambda: {"command": rng.choice(["echo user", STORM_SLOW])},
            "export_html": lambda: {"outputPath": str(self.tmp_path / f"e{rng.randrange(9)}.html")},
            "switch_session": lambda: {"sessionPath": rng.choice(self.files or [str(self.tmp_path / "none.jsonl")])},
            "fork": lambda: {"entryId": rng.choice(self.entry_ids or ["no-such-entry"])},
            "set_session_name": lambda: {"name": "storm"},
        }.get(kind, dict)()
        return {"type": kind, **fields}

    def note(self, reply: dict) -> None:
        data = reply.get("data")
        if reply.get("command") == "get_state" and data.get("sessionFile"):
            self.files.append(data["sessionFile"])
        elif reply.get("command") == "get_fork_messages":
            self.entry_ids += [m["entryId"] for m in data["messages"]]

    async def burst(self) -> None:
        futures, commands = [], []
        for _ in range(self.rng.randint(1, 4)):
            command = {**self.command(), "id": f"s{len(self.sent)}"}
            self.sent.append(command["id"])
            self.log.append(command["type"])
            commands.append(command)
            futures.append(self.client.send_nowait(command))
        done, pending = await asyncio.wait(futures, timeout=30)
        if pending:
            unanswered = [c for c, f in zip(commands, futures) if f in pending]
            tail = [r.get("type") + ":" + str(r.get("command") or r.get("id") or "") for r in self.client.records[-40:]]
            raise AssertionError(f"unanswered {unanswered}; sent {self.log}; last records {tail}")
        for future in futures:
            self.note(future.result())

    def drain(self) -> None:
        while not self.client._events.empty():
            self.track(self.client._events.get_nowait())

    def track(self, event: dict | None) -> None:
        kind = (event or {}).get("type")
        if kind in ("agent_start", "compaction_start"):
            self.busy = True
        elif kind in ("agent_settled", "compaction_end") or event is None:
            self.busy = False

    async def ride(self) -> None:
        """While a run goes on, read on to a moment worth hitting (a tool call, a retry, a compaction)."""
        self.drain()
        moments = ("tool_execution_start", "tool_execution_update", "auto_retry_start", "compaction_start",
                   "message_update", "agent_settled", "compaction_end")
        while self.busy:
            event = await self.client.next_event(timeout=30)
            self.track(event)
            if event["type"] in moments and self.rng.random() < 0.5:
                return


def assert_events_pair_up(records: list[dict], seed: int) -> None:
    """Every start event has its end: tool calls by id, runs, compactions; the last run settled."""
    kinds = Counter(r["type"] for r in records)
    starts = Counter(r["toolCallId"] for r in records if r["type"] == "tool_execution_start")
    ends = Counter(r["toolCallId"] for r in records if r["type"] == "tool_execution_end")
    assert starts == ends and set(ends.values()) <= {1}, f"seed {seed}"
    assert kinds["agent_start"] == kinds["agent_end"], f"seed {seed}"
    assert kinds["compaction_start"] == kinds["compaction_end"], f"seed {seed}"
    lifecycle = [r["type"] for r in records if r["type"] in ("agent_start", "agent_end", "agent_settled")]
    assert not lifecycle or lifecycle[-1] == "agent_settled", f"seed {seed}: the last run never settled"


STORM_KINDS = [*sorted(COMMANDS), *["prompt"] * 10, *["abort"] * 4, *["steer", "follow_up", "compact", "bash"] * 2,
               "new_session", "clone", "fork", "switch_session", "abort_retry", "abort_bash"]
"""Every command, weighted towards the ones that start, queue, abort or replace work."""


@pytest.mark.parametrize("seed", STORM_SEEDS)
async def test_command_storm_answers_every_command_once_and_exits_cleanly(agent_env_factory, fake_llm, tmp_path,
                                                                         seed):
    import random

    rng = random.Random(seed)
    env = agent_env_factory(settings=STORM_SETTINGS, context_window=4000)
    fake_llm.set_script(storm_script(rng))
    plugin = tmp_path / "storm_plugin.py"
    plugin.write_text(STORM_PLUGIN)
    client = await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=env)
    storm = Storm(client, rng, tmp_path)
    try:
        while len(storm.sent) < STORM_COMMANDS:
            await storm.burst()
            await storm.ride()
    finally:
        code = await client.close(timeout=30)
    counts = Counter(str(r.get("id")) for r in client.records if r.get("type") == "response")
    assert counts == Counter(storm.sent), f"seed {seed}"
    internal = [r for r in client.records if r.get("type") == "response" and "Internal error" in str(r.get("error"))]
    assert internal == [], f"seed {seed}"
    assert_events_pair_up(client.records, seed)
    assert client.invalid_lines == [] and code == 0, f"seed {seed}: {client.stderr.decode()[-2000:]}"
