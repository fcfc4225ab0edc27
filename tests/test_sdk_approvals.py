"""The SDK's approvals: `approvals=` and `approver=` of `create_agent_session`, with plugin tools that declare
themselves read-only, against the scripted faux model."""

from __future__ import annotations

import pytest

from agent_forge.coding.approvals import Decision, REJECT
from agent_forge.plugins.api import Plugin, PluginError
from agent_forge.plugins.startup import install_plugins
from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, set_faux_responses


def tool_results(session):
    return [(m["toolName"], m["isError"], m["content"][0]["text"]) for m in session.messages
            if m["role"] == "toolResult"]


async def test_an_approver_is_asked_about_mutating_calls_only(tmp_path, request):
    key = request.node.name
    (tmp_path / "a.txt").write_text("A")
    asked = []

    async def approver(question):
        asked.append(question["title"])
        return Decision(REJECT, "not in this demo")

    def setup(plugin: Plugin):
        plugin.register_tool("lookup", lambda args, ctx: "found", description="reads a record", read_only=True)
        plugin.register_tool("drop", lambda args, ctx: "dropped", description="drops a table")

    set_faux_responses([FauxResponse(tool_calls=[("lookup", {}), ("drop", {}), ("read", {"path": "a.txt"})]),
                        FauxResponse(text="done")], key=key)
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(key=key), no_session=True,
                                   agent_dir=tmp_path / "agent", approvals="ask", approver=approver)
    await install_plugins(session, plugins=[setup], discover=False)
    try:
        await session.prompt_and_wait("go")
        results = tool_results(session)
        state = session.get_state()
    finally:
        await session.close()
    assert asked == ["drop"] and state["approvals"] == "ask", results
    assert results[0] == ("lookup", False, "found") and results[2] == ("read", False, "A"), results
    assert results[1] == ("drop", True, "The user rejected this drop call. The user said: not in this demo. Do not "
                                        "retry it unchanged; ask or try another way.")


def test_the_sdk_default_is_full_and_bad_options_fail_before_a_session_exists(tmp_path):
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text('{"approvals": "read-only"}')
    with pytest.raises(ValueError, match="Unknown approval policy"):
        create_agent_session(cwd=str(tmp_path), model=faux_model(), no_session=True, approvals="sometimes")
    with pytest.raises(TypeError, match="approver must be"):
        create_agent_session(cwd=str(tmp_path), model=faux_model(), no_session=True, approver="yes")
    with pytest.raises(PluginError, match="read_only must be True or False"):
        Plugin(id="p", path="p.py").register_tool("t", lambda a, c: "", description="d", read_only="yes")
    session = create_agent_session(cwd=str(tmp_path), model=faux_model(), no_session=True,
                                   agent_dir=tmp_path / "agent")
    assert session.get_state()["approvals"] == "full"  # the setting is the CLI's, not a program's
