"""The tool factories: default set and order, schemas that match the protocol's parameter names."""

from __future__ import annotations

import pytest

from agent_forge.coding.tools import TOOL_FACTORIES, create_all_tools, create_coding_tools, create_tools


def test_default_tools_in_order(tmp_path):
    tools = create_coding_tools(str(tmp_path))
    assert [tool.name for tool in tools] == ["read", "bash", "edit", "write"]
    assert all(tool.cwd == str(tmp_path) for tool in tools)


def test_every_tool_has_the_contract_fields(tmp_path):
    for name, tool in create_all_tools(str(tmp_path)).items():
        assert tool.name == name and tool.label and len(tool.description) > 40
        assert tool.parameters["type"] == "object" and callable(tool.execute)


@pytest.mark.parametrize(
    "name, properties, required",
    [
        ("read", {"path", "offset", "limit"}, ["path"]),
        ("bash", {"command", "timeout"}, ["command"]),
        ("edit", {"path", "edits"}, ["path", "edits"]),
        ("write", {"path", "content"}, ["path", "content"]),
    ],
)
def test_parameter_schemas(tmp_path, name, properties, required):
    schema = TOOL_FACTORIES[name](str(tmp_path)).parameters
    assert set(schema["properties"]) == properties and schema["required"] == required


def test_edit_items_schema():
    items = TOOL_FACTORIES["edit"]("/").parameters["properties"]["edits"]["items"]
    assert set(items["properties"]) == {"oldText", "newText"} and items["required"] == ["oldText", "newText"]


def test_unknown_tool_name(tmp_path):
    with pytest.raises(KeyError, match="nope"):
        create_tools(str(tmp_path), ["read", "nope"])
