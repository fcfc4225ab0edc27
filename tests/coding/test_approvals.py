"""The approval policy (`coding/approvals.py`): what runs, what is asked, what "always" remembers."""

from __future__ import annotations

import asyncio
import time

import pytest

from agent_forge.coding.approvals import (ALLOW_ALWAYS, ALLOW_ONCE, MAX_SIMPLE_COMMAND, REJECT, Approvals, Decision,
                                          ToolGate,
                                          bash_prefix, check_policy, tool_kind, tool_title)
from agent_forge.coding.settings import Settings, approval_policy


class Tool:
    def __init__(self, name, read_only=False):
        self.name, self.read_only = name, read_only


TOOLS = [Tool("read", True), Tool("ls", True), Tool("write"), Tool("bash"), Tool("srv_query", True), Tool("srv_drop")]


class Scripted:
    """An approver answering from a list, recording the requests."""

    def __init__(self, *answers):
        self.answers, self.requests = list(answers), []

    async def __call__(self, request):
        self.requests.append(request)
        return self.answers.pop(0)


def call(name, **arguments):
    return {"id": f"c-{name}", "name": name, "arguments": arguments}


def approvals(policy, approver=None):
    return Approvals(policy, approver, tools=lambda: TOOLS)


async def test_full_runs_everything_without_asking():
    approver = Scripted()
    gate = approvals("full", approver)
    assert [await gate.check(call(n)) for n in ("write", "bash", "srv_drop", "unknown")] == [None] * 4
    assert approver.requests == []


async def test_read_only_refuses_mutating_tools_and_runs_declared_read_only_ones():
    gate = approvals("read-only", Scripted())
    assert await gate.check(call("read", path="a")) is None
    assert await gate.check(call("srv_query")) is None  # an MCP/plugin tool that declared itself read-only
    for name in ("write", "bash", "srv_drop"):
        refusal = await gate.check(call(name))
        assert refusal.startswith("Not run: the session is read-only") and f"the {name} tool" in refusal


async def test_a_plugin_tool_named_read_but_not_declared_read_only_is_asked_about():
    gate = Approvals("ask", Scripted(REJECT), tools=lambda: [Tool("read", read_only=False)])
    assert "rejected" in await gate.check(call("read", path="x"))


async def test_ask_passes_the_request_and_obeys_once_always_reject():
    approver = Scripted(ALLOW_ONCE, REJECT, ALLOW_ALWAYS)
    gate = approvals("ask", approver)
    assert await gate.check(call("read")) is None and approver.requests == []
    assert await gate.check(call("write", path="src/a.py", content="x")) is None
    assert approver.requests[0] == {"id": "c-write", "name": "write", "arguments": {"path": "src/a.py", "content": "x"},
                                    "title": "write src/a.py", "kind": "edit", "always": "the write tool"}
    rejected = await gate.check(call("write", path="b"))
    assert rejected == "The user rejected this write call. Do not retry it unchanged; ask or try another way."
    assert await gate.check(call("write", path="c")) is None  # allowed always from now on
    assert await gate.check(call("write", path="d")) is None and len(approver.requests) == 3
    assert gate.remembered() == ["write"]


async def test_a_rejection_reason_reaches_the_model_and_no_answer_is_told_apart():
    gate = approvals("ask", Scripted(Decision(REJECT, "  use the staging db  "),
                                     Decision(REJECT, "it timed out", answered=False)))
    assert "The user said: use the staging db. Do not retry" in await gate.check(call("srv_drop"))
    refusal = await gate.check(call("srv_drop"))
    assert "rejected" not in refusal and "the question got no answer (it timed out)" in refusal


@pytest.mark.parametrize("answer", ["maybe", None, Decision("yes")])
async def test_an_invalid_answer_rejects(answer):
    assert "rejected" in await approvals("ask", Scripted(answer)).check(call("bash", command="ls"))


async def test_an_approver_that_fails_rejects_and_cancellation_propagates():
    async def broken(request):
        raise RuntimeError("dialog broke")

    assert "RuntimeError: dialog broke" in await approvals("ask", broken).check(call("write"))

    async def hangs(request):
        await asyncio.Event().wait()

    task = asyncio.ensure_future(approvals("ask", hangs).check(call("write")))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_without_an_approver_ask_refuses_saying_who_cannot_answer():
    gate = approvals("ask")
    gate.no_approver = "print mode has no one to ask"
    refusal = await gate.check(call("bash", command="rm -rf build"))
    assert refusal.startswith("Not run: the bash call needs approval (approvals: ask), and print mode")


def test_bash_prefix_is_two_words_of_a_simple_command_only():
    assert bash_prefix("git status --short") == ("git", "status")
    assert bash_prefix("  ls  ") == ("ls",)
    assert bash_prefix("pytest 'a b.py'") == ("pytest", "a b.py")
    for command in ("cd x && rm -rf /", "ls; curl x", "echo $(id)", "echo `id`", "cat a > b", "a | b",
                    "echo 'unclosed", "", "   ", "ls\nrm x", "echo a\\\nb", None, 3):
        assert bash_prefix(command) is None, command


def test_bash_prefix_is_never_offered_for_wrappers_and_interpreters_taking_code():
    for command in ("bash -c 'echo hi'", "sh -c 'x'", "zsh -c x", "env FOO=1 make", "sudo ls", "xargs rm",
                    "nice make", "timeout 5 make", "nohup make", "command ls", "exec ls", "time make",
                    "python -c 1", "python3 -c 1", "python3.11 -c 1", "node -e 1", "perl -e 1", "ruby -e 1",
                    "/usr/bin/env ls", "/bin/bash -c x", "FOO=1 make", "python", "sed -i s/a/b/ f", "npx x"):
        assert bash_prefix(command) is None, command
    assert bash_prefix("python script.py") == ("python", "script.py")
    assert bash_prefix("make") == ("make",)


async def test_a_long_command_is_not_simple_and_costs_no_quadratic_split():
    started = time.monotonic()
    for command in ("x" * 5_000_000, "git status " + "a" * 5_000_000, "git status '" + "b" * 2000 + "'"):
        assert bash_prefix(command) is None
    assert time.monotonic() - started < 2  # shlex.split took minutes on the 5 MB word
    assert bash_prefix("git status " + "c" * (MAX_SIMPLE_COMMAND - 11)) == ("git", "status")
    approver = Scripted(ALLOW_ALWAYS, REJECT)
    gate = approvals("ask", approver)
    assert await gate.check(call("bash", command="git status")) is None
    assert "rejected" in await gate.check(call("bash", command="git status " + "d" * MAX_SIMPLE_COMMAND))
    assert approver.requests[1]["always"] is None


async def test_always_for_bash_remembers_the_prefix_and_never_covers_compound_commands():
    approver = Scripted(ALLOW_ALWAYS, REJECT, ALLOW_ALWAYS, REJECT)
    gate = approvals("ask", approver)
    assert await gate.check(call("bash", command="git status")) is None
    assert approver.requests[0]["always"] == 'bash commands starting with "git status"'
    assert await gate.check(call("bash", command="git  status --short")) is None  # remembered
    assert "rejected" in await gate.check(call("bash", command="git push --force"))  # another prefix: asked
    assert "rejected" not in str(await gate.check(call("bash", command="git status && rm -rf /")))  # allowed once
    assert approver.requests[2]["always"] is None  # "always" was not offered for it...
    assert "rejected" in await gate.check(call("bash", command="git status; id"))  # ...nor remembered
    assert gate.remembered() == ["bash: git status"] and len(approver.requests) == 4


async def test_always_is_forgotten_in_a_new_conversation_but_kept_across_policy_changes():
    approver = Scripted(ALLOW_ALWAYS, REJECT)
    gate = approvals("ask", approver)
    assert await gate.check(call("write")) is None
    gate.set_policy("full")
    gate.set_policy("ask")
    assert await gate.check(call("write")) is None and len(approver.requests) == 1
    gate.forget()
    assert gate.remembered() == []
    assert "rejected" in await gate.check(call("write"))


def test_policies_are_checked():
    assert check_policy("read-only") == "read-only"
    with pytest.raises(ValueError, match="Unknown approval policy 'yolo'; use one of full, ask, read-only"):
        approvals("ask").set_policy("yolo")
    assert approval_policy(Settings(raw={"approvals": "ask"})) == "ask"
    assert approval_policy(Settings(raw={"approvals": "nope"}), "full") == "full"
    assert approval_policy(Settings(), "ask") == "ask"


def test_titles_and_kinds():
    assert tool_title("bash", {"command": "make\nmake install"}) == "bash: make …"
    assert tool_title("edit", {"path": "a.py"}) == "edit a.py" and tool_title("srv_x", {}) == "srv_x"
    assert len(tool_title("bash", {"command": "x" * 500})) == 120
    assert [tool_kind(n) for n in ("read", "write", "bash", "grep", "web_fetch", "srv_x")] == [
        "read", "edit", "execute", "search", "fetch", "other"]


async def test_the_gate_runs_the_plugin_hook_first_and_asks_with_its_arguments():
    class Hooks:
        async def tool_call(self, call):
            if call["name"] == "bash":
                return "Blocked by plugin"
            call["arguments"]["path"] = "changed.txt"
            return None

    approver = Scripted(ALLOW_ONCE)
    gate = ToolGate(lambda: Hooks(), approvals("ask", approver))
    assert await gate(call("bash", command="ls")) == "Blocked by plugin" and approver.requests == []
    assert await gate(call("write", path="orig.txt")) is None
    assert approver.requests[0]["title"] == "write changed.txt"


def test_settings_report_a_wrong_approvals_value(tmp_path):
    from agent_forge.coding.settings import load_settings

    (tmp_path / "settings.json").write_text('{\n "approvals": "sometimes",\n "approvalTimeoutMs": -1\n}')
    settings = load_settings(tmp_path / "project", tmp_path)
    problems = [str(e) for e in settings.errors]
    assert any(":2: approvals" in p and '"full", "ask" or "read-only"' in p for p in problems), problems
    assert any(":3: approvalTimeoutMs" in p for p in problems), problems
    assert settings.get("approvals", "full") == "full"


async def test_a_bare_approvals_knows_the_built_in_read_tools_and_install_chains_after_the_agents_check():
    class Agent:
        tools = [Tool("edit"), Tool("read", read_only=False)]  # a plugin's "read" replaced the built-in one

        async def before_tool_call(self, call):
            return "plugin says no" if call["name"] == "edit" else None

    bare = Approvals("read-only")
    assert await bare.check(call("grep")) is None and await bare.check(call("read_mcp_resource")) is None
    assert "read-only" in await bare.check(call("write"))
    agent = Agent()
    Approvals("read-only").install(agent)
    assert await agent.before_tool_call(call("edit")) == "plugin says no"
    assert "read-only" in await agent.before_tool_call(call("read"))  # the agent's own tool decides


async def test_a_policy_change_withdraws_waiting_questions_and_decides_by_the_new_policy():
    for policy, expected in (("read-only", "Not run: the session is read-only"), ("full", None)):
        answer, asked = asyncio.get_running_loop().create_future(), asyncio.Event()

        async def waiting(request):
            asked.set()
            return await answer

        gate = approvals("ask", waiting)
        check = asyncio.ensure_future(gate.check(call("bash", command="touch x")))
        await asked.wait()
        gate.set_policy(policy)
        result = await check
        assert result == expected if expected is None else result.startswith(expected)


async def test_an_answer_is_checked_against_the_policy_in_force_when_it_arrives():
    gate = approvals("ask")

    async def answers_after_the_change(request):
        gate.policy = "read-only"  # changed behind set_policy's back (nothing to withdraw)
        return ALLOW_ALWAYS

    gate.approver = answers_after_the_change
    assert (await gate.check(call("bash", command="git status"))).startswith("Not run: the session is read-only")
    assert gate.remembered() == []
