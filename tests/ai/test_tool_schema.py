"""The tool-schema checker (`ai/tool_schema.py`): what providers reject is found and located; what JSON Schema
allows passes."""

from __future__ import annotations

import pytest

from agent_forge.ai.tool_schema import MAX_DEPTH, schema_problem


def nested(depth: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@pytest.mark.parametrize("schema", [
    {"type": "object"},
    {"properties": {}},  # the type defaults to object
    {"type": "object", "properties": {"a": {"type": ["string", "null"], "enum": ["x", None]}, "b": True},
     "required": ["a"], "additionalProperties": False},
    {"type": "object", "properties": {"a": {"type": "array", "items": [{"type": "string"}], "minItems": 1}}},
    {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/x"}]}},
     "$defs": {"x": {"type": "integer", "exclusiveMinimum": True, "multipleOf": 2}}},
    {"type": "object", "properties": {"a": {"x-unknown": {"type": "wat"}, "maxLength": 3.0}}},  # unknown: ignored
    nested(MAX_DEPTH - 1),
])
def test_schemas_json_schema_allows_pass(schema):
    assert schema_problem(schema) is None


@pytest.mark.parametrize("schema, problem", [
    ([], "the schema must be a JSON object, got a list"),
    ({"type": "array"}, 'the schema must have "type": "object", got "array"'),
    ({"type": "object", "properties": {"a": {"type": "wat"}}}, 'properties.a: type: "wat" is not a JSON Schema type'),
    ({"type": "object", "properties": {"a": {"type": []}}}, "properties.a: type: an empty list"),
    ({"type": "object", "properties": {"a": {"type": ["string", "string"]}}}, "names a type twice"),
    ({"type": "object", "properties": ["a"]}, "properties: must be an object mapping names to schemas, got a list"),
    ({"type": "object", "properties": {"a": 1}}, "properties.a: a schema must be an object or a boolean"),
    ({"type": "object", "required": ["a", 3]}, "required: must be a list of property names (strings)"),
    ({"type": "object", "properties": {"a": {"required": True}}}, "properties.a: required: must be a list"),
    ({"type": "object", "properties": {"a": {"anyOf": []}}}, "properties.a: anyOf: must be a non-empty list"),
    ({"type": "object", "properties": {"a": {"oneOf": [{"type": "x"}]}}}, "properties.a.oneOf[0]: type: \"x\""),
    ({"type": "object", "properties": {"a": {"items": {"type": "q"}}}}, "properties.a.items: type: \"q\""),
    ({"type": "object", "properties": {"a": {"items": [{}, {"type": "q"}]}}}, "properties.a.items[1]: type"),
    ({"type": "object", "$defs": {"x": {"enum": "a"}}}, "$defs.x: enum: must be a list"),
    ({"type": "object", "properties": {"a": {"description": 5}}}, "properties.a: description: must be a string"),
    ({"type": "object", "properties": {"a": {"minimum": "1"}}}, "properties.a: minimum: must be a number"),
    ({"type": "object", "properties": {"a": {"multipleOf": 0}}}, "multipleOf: must be greater than 0"),
    ({"type": "object", "properties": {"a": {"maxLength": -1}}}, "maxLength: must be a non-negative integer"),
    ({"type": "object", "properties": {"a": {"uniqueItems": "yes"}}}, "uniqueItems: must be true or false"),
    ({"type": "object", "properties": {"a": {"minimum": float("nan")}}}, "the schema is not JSON"),
    ({"type": "object", "properties": {"a": {"enum": [{1, 2}]}}}, "the schema is not JSON"),
    (nested(MAX_DEPTH + 1), f"nested more than {MAX_DEPTH} schemas deep"),
    (nested(5000), f"nested more than {MAX_DEPTH} schemas deep"),  # no recursion: no RecursionError
    ({"type": "object", "description": "d" * 70_000}, "the schema has 70,0"),
])
def test_what_providers_reject_is_found_and_located(schema, problem):
    found = schema_problem(schema)
    assert found is not None and problem in found, found


def test_a_deep_path_is_shown_by_its_end():
    found = schema_problem(nested(200))
    assert found.startswith("…") and len(found) < 200
