"""SDK tool objects get the result checks plugin tools get (`coding/tool_results.py`): the forms a plugin may
return are accepted, anything else is an error result naming the bad part, and the session file holds every
result so a resume reads it back."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from agent_forge.agent.types import ToolError, ToolResult
from agent_forge.sdk import FauxProvider, FauxResponse, create_agent_session


class ReturningTool:
    """A tool object (the `AgentTool` contract) whose `execute` returns `value`, after sending `partial` if any."""

    name, label, description = "probe", "probe", "returns a fixed value"
    parameters = {"type": "object", "properties": {}}

    def __init__(self, value: object = None, *, partial: object = None, error: ToolError | None = None):
        self.value, self.partial, self.error = value, partial, error

    async def execute(self, tool_call_id, args, on_update):
        if self.partial is not None:
            on_update(self.partial)
        if self.error is not None:
            raise self.error
        return self.value


async def run_tool(tmp_path: Path, tool: ReturningTool, capfd) -> tuple[dict, list[dict], Path]:
    """One prompt whose model calls `probe`: (the toolResult message, the tool_execution_end events, the file)."""
    faux = FauxProvider()
    faux.respond([FauxResponse(tool_calls=[("probe", {})]), FauxResponse(text="done")])
    session = create_agent_session(cwd=str(tmp_path), model=faux.model(), stream_fn=faux.stream, tools=[tool],
                                   agent_dir=tmp_path / "agent", session_dir=str(tmp_path / "sessions"))
    ends: list[dict] = []
    session.subscribe(lambda e: e["type"] == "tool_execution_end" and ends.append(e))
    await session.prompt_and_wait("call it")
    path = Path(session.get_state()["sessionFile"])
    [result] = [m for m in session.messages if m["role"] == "toolResult"]
    assert session.last_assistant_text() == "done"
    await session.close()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Unexpected agent failure" not in err
    assert faux.requests[1].context["messages"][-1]["content"] == result["content"]  # what the model was sent
    resumed = create_agent_session(cwd=str(tmp_path), model=faux.model(), stream_fn=faux.stream,
                                   agent_dir=tmp_path / "agent", session_file=str(path))
    assert resumed.warnings == [] and result in resumed.messages  # read back whole, not skipped
    await resumed.close()
    return result, ends, path


@pytest.mark.parametrize("value, text", [
    ("plain", "plain"),
    (ToolResult(content="hello"), "hello"),
    ({"content": [{"type": "text", "text": "from a dict"}], "details": {"n": 1}}, "from a dict"),
])
async def test_the_forms_plugins_may_return_are_accepted(tmp_path, capfd, value, text):
    result, ends, _ = await run_tool(tmp_path, ReturningTool(value), capfd)
    assert result["isError"] is False and result["content"] == [{"type": "text", "text": text}]
    assert ends[0]["result"]["content"] == result["content"]


@pytest.mark.parametrize("value, problem", [
    (42, "int 42; expected a string, a ToolResult or a dict {content, details?}"),
    (None, "NoneType None; expected"),
    (ToolResult(content=[{"type": "text", "text": 42}]), "content[0].text must be a string, got int"),
    (ToolResult(content=[{"type": "image", "data": "aGk=", "mimeType": "image/png"}]),
     "content[0]: the data is not of type image/png"),
    (ToolResult(content=[{"type": "text", "text": "ok"}], details={"when": datetime.date(2026, 1, 2)}),
     "details.when is a date"),
])
async def test_other_results_are_error_results_naming_the_bad_part(tmp_path, capfd, value, problem):
    result, ends, path = await run_tool(tmp_path, ReturningTool(value), capfd)
    [block] = result["content"]
    assert result["isError"] is True and block["text"].startswith("The tool returned an invalid result: ")
    assert problem in block["text"] and ends[0]["isError"] is True
    saved = [json.loads(line) for line in path.read_text().splitlines()]
    assert result in [entry.get("message") for entry in saved]


async def test_a_bad_progress_update_raises_in_the_tool_and_a_bad_error_loses_its_details(tmp_path, capfd):
    result, _, _ = await run_tool(tmp_path, ReturningTool("never", partial=ToolResult(content=7)), capfd)
    assert result["isError"] is True and "content must be a list of blocks, got int" in result["content"][0]["text"]
    error = ToolError("it broke", details={"at": {1, 2}})
    (tmp_path / "second").mkdir()
    result, _, _ = await run_tool(tmp_path / "second", ReturningTool(error=error), capfd)
    assert result["isError"] is True and "details" not in result
    assert result["content"][0]["text"].startswith("it broke (the tool's error details were dropped: details.at is")
