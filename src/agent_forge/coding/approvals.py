"""The approval policy: which tool calls run without asking, for any front end.

Policies (`POLICIES`): `full` runs every call (the default of RPC, print and SDK use: today's behaviour); `ask`
runs the read-only tools (`READ_ONLY_TOOLS`) and asks the front end before any other call (edits, commands,
MCP and plugin tools); `read-only` refuses every call but the read-only tools. A front end gives the question
as an `Ask` function: it answers `ALLOW_ONCE`, `ALLOW_ALWAYS` (this tool runs without asking for the rest of
the session) or `REJECT`. A refused or rejected call fails with a reason the model sees, and the turn goes on.

`Approvals.install(agent)` puts the check after whatever `agent.before_tool_call` already does (plugins may
change or block the call first). The setting `approvals` (settings.json) names the start policy where a front
end takes one (ACP mode); `policy_setting` reads it.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

POLICIES = ("full", "ask", "read-only")
READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})
ALLOW_ONCE, ALLOW_ALWAYS, REJECT = "allow_once", "allow_always", "reject"

Ask = Callable[[dict[str, Any]], Awaitable[str]]
"""Asks about one tool call (`{id, name, arguments}`); one of ALLOW_ONCE, ALLOW_ALWAYS, REJECT."""


class Approvals:
    """One session's policy (`policy`, changeable at any time) and the tools allowed for good."""

    def __init__(self, policy: str = "full", ask: Ask | None = None):
        self.policy = check_policy(policy)
        self.ask = ask
        self.always: set[str] = set()

    def set_policy(self, policy: str) -> None:
        """Raises ValueError for a policy not in POLICIES."""
        self.policy = check_policy(policy)

    async def check(self, call: dict[str, Any]) -> str | None:
        """None when `call` may run, else why not (its error result)."""
        name = str(call.get("name"))
        if self.policy == "full" or name in READ_ONLY_TOOLS:
            return None
        if self.policy == "read-only":
            return f"The {name} tool is not allowed: the session is read-only (only {', '.join(sorted(READ_ONLY_TOOLS))} run)."
        if name in self.always or self.ask is None:
            return None if name in self.always else f"The {name} tool needs approval and nobody can give it."
        answer = await self.ask(call)
        if answer == ALLOW_ALWAYS:
            self.always.add(name)
        if answer in (ALLOW_ONCE, ALLOW_ALWAYS):
            return None
        return f"The user rejected this {name} call. Do not retry it unchanged; ask or try another way."

    def install(self, agent: Any) -> None:
        """Check every call of `agent` after its current `before_tool_call` (if any)."""
        before = agent.before_tool_call

        async def checked(call: dict[str, Any]) -> str | None:
            if before is not None and (blocked := await before(call)) is not None:
                return blocked
            return await self.check(call)

        agent.before_tool_call = checked


def check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise ValueError(f"Unknown approval policy {policy!r}; use one of {', '.join(POLICIES)}")
    return policy


def policy_setting(settings: Any, default: str) -> tuple[str, str | None]:
    """(policy, warning): the user's `approvals` setting (the agent dir's settings.json: a repository's own
    settings must not grant itself full access) when it names a policy, else `default` (with a warning when it
    is set to something else that the settings' own check did not report)."""
    raw = getattr(settings, "global_raw", None)
    value = raw.get("approvals") if isinstance(raw, dict) else None
    if value is None or "approvals" in getattr(settings, "invalid_keys", ()):
        return default, None  # a wrong value was reported where the settings were read, with its line
    if value in POLICIES:
        return value, None
    return default, f"settings approvals: {value!r} is not one of {', '.join(POLICIES)}; {default} is used"
