"""A small JSON-schema subset for plugin tools: checking a tool's parameter schema at registration and the
model's arguments against it before the tool runs.

Checked keywords: `type` (a name or a list of names), `properties`, `required`, `enum`, `items`,
`additionalProperties: false`. Everything else is passed to the model as written and not enforced.
"""

from __future__ import annotations

import math


from ..agent.types import ToolError
from ..ai.tool_schema import schema_problem
from ..ai.types import JsonValue


def check_parameters_schema(schema: object) -> str | None:
    """Why `schema` cannot be a tool's parameters (a JSON schema whose type is "object", which providers accept:
    `ai/tool_schema.py`), or None."""
    if not isinstance(schema, dict):
        return f"parameters must be a JSON schema object (a dict), got {type(schema).__name__}"
    if schema.get("type") != "object":
        return 'parameters must be a JSON schema with "type": "object"'
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or not all(isinstance(p, dict) for p in properties.values()):
        return '"properties" must map names to schemas'
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return '"required" must be a list of property names'
    problem = schema_problem(schema)  # the rest of what providers reject (a whole request fails on one tool)
    return f"parameters: {problem}" if problem else None


def check_arguments(schema: dict[str, JsonValue], args: JsonValue) -> None:
    """Raise `ToolError` naming the first argument that does not fit `schema`."""
    _check(schema, args, "arguments")


def _check(schema: dict[str, JsonValue], value: JsonValue, where: str) -> None:
    expected = schema.get("type")
    names = [expected] if isinstance(expected, str) else expected if isinstance(expected, list) else []
    if names and not any(_is(value, name) for name in names):
        raise ToolError(f"{_label(where)} must be {' or '.join(names)}, got {_json_name(value)}")
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        raise ToolError(f"{_label(where)} must be one of {', '.join(map(repr, schema['enum']))}")
    if isinstance(value, dict):
        _check_object(schema, value, where)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _check(schema["items"], item, f"{where}[{i}]")


def _check_object(schema: dict[str, JsonValue], value: dict[str, JsonValue], where: str) -> None:
    prefix = "" if where == "arguments" else f"{where}."
    for name in schema.get("required", []):
        if name not in value:
            raise ToolError(f"Missing required parameter '{prefix}{name}'")
    properties = schema.get("properties", {})
    for name, item in value.items():
        if isinstance(properties.get(name), dict):
            _check(properties[name], item, f"{prefix}{name}")
        elif schema.get("additionalProperties") is False:
            raise ToolError(f"Unknown parameter '{prefix}{name}'")


def _is(value: object, name: str) -> bool:
    if name == "integer":
        return _is(value, "number") and float(value).is_integer()
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    return name in kinds and isinstance(value, kinds[name])


def _json_name(value: object) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is(value, name):
            return name
    return type(value).__name__


def _label(where: str) -> str:
    return "Arguments" if where == "arguments" else f"Parameter '{where}'"
