"""The approval policy (`coding/approvals.py`): what runs, what is asked, what is refused."""

from __future__ import annotations

import pytest

from agent_forge.coding.approvals import ALLOW_ALWAYS, ALLOW_ONCE, REJECT, Approvals, policy_setting
from agent_forge.coding.settings import Settings


def call(name: str) -> dict:
    return {"id": "c", "name": name, "arguments": {}}


async def test_full_runs_everything_without_asking():
    asked = []
    approvals = Approvals("full", lambda c: asked.append(c))  # never called
    for name in ("bash", "write", "srv_tool", "read"):
        assert await approvals.check(call(name)) is None
    assert asked == []


async def test_ask_asks_for_all_but_reading_and_remembers_always():
    answers = {"bash": ALLOW_ALWAYS, "write": REJECT, "edit": ALLOW_ONCE}
    asked: list[str] = []

    async def ask(c):
        asked.append(c["name"])
        return answers[c["name"]]

    approvals = Approvals("ask", ask)
    assert await approvals.check(call("read")) is None
    assert await approvals.check(call("bash")) is None
    assert await approvals.check(call("bash")) is None
    assert "rejected" in await approvals.check(call("write"))
    assert await approvals.check(call("edit")) is None
    assert await approvals.check(call("edit")) is None
    assert asked == ["bash", "write", "edit", "edit"]


async def test_read_only_refuses_without_asking_and_ask_without_asker_refuses():
    approvals = Approvals("read-only")
    assert "read-only" in await approvals.check(call("bash"))
    assert await approvals.check(call("grep")) is None
    assert "needs approval" in await Approvals("ask").check(call("bash"))
    with pytest.raises(ValueError):
        approvals.set_policy("everything")


async def test_install_runs_the_previous_check_first():
    class Agent:
        async def before_tool_call(self, c):
            return "plugin says no" if c["name"] == "edit" else None

    agent = Agent()
    agent.before_tool_call = Agent.before_tool_call.__get__(agent)
    Approvals("read-only").install(agent)
    assert await agent.before_tool_call(call("edit")) == "plugin says no"
    assert "read-only" in await agent.before_tool_call(call("write"))
    assert await agent.before_tool_call(call("read")) is None


def test_the_setting_is_read_from_the_users_settings_only():
    assert policy_setting(Settings(raw={"approvals": "full"}, global_raw={}), "ask") == ("ask", None)
    assert policy_setting(Settings(raw={}, global_raw={"approvals": "read-only"}), "ask") == ("read-only", None)
    policy, warning = policy_setting(Settings(global_raw={"approvals": "sure"}), "ask")
    assert policy == "ask" and "'sure' is not one of" in warning
    reported = Settings(global_raw={"approvals": "sure"}, invalid_keys={"approvals"})
    assert policy_setting(reported, "ask") == ("ask", None)  # said once, where the file was read
