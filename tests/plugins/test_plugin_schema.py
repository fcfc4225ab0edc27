"""The JSON-schema subset plugin tools are checked with."""

from __future__ import annotations

import pytest

from agent_forge.agent.types import ToolError
from agent_forge.plugins.schema import check_arguments, check_parameters_schema

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": ["number", "null"]},
        "mode": {"enum": ["fast", "slow"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "nested": {"type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"],
                   "additionalProperties": False},
    },
    "required": ["name"],
}


@pytest.mark.parametrize("schema, problem", [
    ({"type": "object"}, None),
    (SCHEMA, None),
    ([], "a dict"),
    ({"type": "array"}, '"type": "object"'),
    ({"type": "object", "properties": []}, '"properties"'),
    ({"type": "object", "properties": {"a": 1}}, '"properties"'),
    ({"type": "object", "required": "a"}, '"required"'),
])
def test_parameter_schemas(schema, problem):
    result = check_parameters_schema(schema)
    assert (result is None) if problem is None else (problem in result)


@pytest.mark.parametrize("args", [
    {"name": "x"},
    {"name": "x", "count": 3, "ratio": None, "mode": "slow", "tags": ["a"], "nested": {"on": True}},
    {"name": "x", "count": 2.0, "unknown": "kept"},
])
def test_valid_arguments(args):
    check_arguments(SCHEMA, args)


@pytest.mark.parametrize("args, message", [
    ({}, "Missing required parameter 'name'"),
    ([], "Arguments must be object, got array"),
    ({"name": 1}, "Parameter 'name' must be string, got integer"),
    ({"name": "x", "count": 1.5}, "Parameter 'count' must be integer, got number"),
    ({"name": "x", "count": True}, "Parameter 'count' must be integer, got boolean"),
    ({"name": "x", "ratio": "1"}, "Parameter 'ratio' must be number or null, got string"),
    ({"name": "x", "mode": "medium"}, "Parameter 'mode' must be one of 'fast', 'slow'"),
    ({"name": "x", "tags": ["a", 2]}, "Parameter 'tags[1]' must be string, got integer"),
    ({"name": "x", "nested": {}}, "Missing required parameter 'nested.on'"),
    ({"name": "x", "nested": {"on": False, "off": 1}}, "Unknown parameter 'nested.off'"),
])
def test_invalid_arguments_name_the_field(args, message):
    with pytest.raises(ToolError) as info:
        check_arguments(SCHEMA, args)
    assert str(info.value) == message
