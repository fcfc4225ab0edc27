"""Checking a tool's parameter schema before it is offered to a model.

Providers validate the tools of a request against JSON Schema's own rules and reject the whole request when one
tool's schema breaks them (`{"type": "wat"}`), so one bad tool would make every prompt fail. `schema_problem`
finds what they reject, without a JSON Schema library: the root is an object schema; every subschema is an object
or a boolean; `type` names JSON Schema types; the keywords that hold schemas (`properties`, `items`, `anyOf`, ...)
hold schemas; `required` lists strings; the string, number and count keywords have values of their kind. Other
keywords are left alone (JSON Schema ignores unknown keywords, and so do the providers). The schema must be JSON
(finite numbers), at most `MAX_SCHEMA_BYTES` of it and at most `MAX_DEPTH` schemas deep.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterator

MAX_SCHEMA_BYTES = 65_536
"""A tool's schema as JSON, in bytes: it is sent with every request."""
MAX_DEPTH = 64
"""Schemas nested in schemas (a property of a property ... of the root)."""

TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")
_SCHEMA = ("additionalProperties", "additionalItems", "not", "if", "then", "else", "contains", "propertyNames",
           "unevaluatedProperties", "unevaluatedItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_STRINGS = ("title", "description", "pattern", "format", "$ref", "$id", "$schema", "$comment", "$anchor")
_NUMBERS = ("minimum", "maximum", "multipleOf")
_BOUNDS = ("exclusiveMinimum", "exclusiveMaximum")  # numbers, or (draft 4) booleans
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains",
           "maxContains")


def schema_problem(schema: object, *, max_bytes: int = MAX_SCHEMA_BYTES, max_depth: int = MAX_DEPTH) -> str | None:
    """Why `schema` cannot be a tool's parameters, or None. The problem names where it is, as a path of keys
    (`properties.a.type: "wat" is not a JSON Schema type (string, ...)`), or the size."""
    if not isinstance(schema, dict):
        return f"the schema must be a JSON object, got {_kind(schema)}"
    if schema.get("type", "object") != "object":
        return f'the schema must have "type": "object", got {_shown(schema.get("type"))}'
    try:
        size = len(json.dumps(schema, allow_nan=False, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    except RecursionError:
        size = None  # nested too deep for the encoder: the walk below says where
    except (TypeError, ValueError) as exc:
        return f"the schema is not JSON: {exc}"
    if size is not None and size > max_bytes:
        return f"the schema has {size:,} bytes of JSON, more than the {max_bytes:,} allowed"
    for node, path, depth in _schemas(schema):
        if depth > max_depth:
            return f"{_where(path)}: nested more than {max_depth} schemas deep"
        problem = _node_problem(node)
        if problem:
            return f"{_where(path)}: {problem}" if path else problem
    return None


def _schemas(root: dict[str, Any]) -> Iterator[tuple[object, str, int]]:
    """Every schema in `root` with its path and depth (root: `""`, 0), depth first; no recursion, so a schema
    nested thousands deep is reported rather than overflowing the stack."""
    stack: list[tuple[object, str, int]] = [(root, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        yield node, path, depth
        if isinstance(node, dict):
            stack.extend((child, child_path, depth + 1) for child_path, child in reversed(list(_children(node, path))))


def _children(node: dict[str, Any], path: str) -> Iterator[tuple[str, object]]:
    prefix = f"{path}." if path else ""
    for key in _SCHEMA:
        if key in node:
            yield f"{prefix}{key}", node[key]
    for key in _SCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            for name, child in node[key].items():
                yield f"{prefix}{key}.{name}", child
    lists = [*_SCHEMA_LISTS, "items"] if isinstance(node.get("items"), list) else _SCHEMA_LISTS
    for key in lists:
        if isinstance(node.get(key), list):
            for i, child in enumerate(node[key]):
                yield f"{prefix}{key}[{i}]", child
    if "items" in node and not isinstance(node["items"], list):
        yield f"{prefix}items", node["items"]


def _node_problem(node: object) -> str | None:
    if isinstance(node, bool):
        return None
    if not isinstance(node, dict):
        return f"a schema must be an object or a boolean, got {_kind(node)}"
    return (_type_problem(node["type"]) if "type" in node else None) or _keyword_problem(node)


def _type_problem(value: object) -> str | None:
    names = value if isinstance(value, list) else [value]
    if isinstance(value, list) and not value:
        return "type: an empty list"
    for name in names:
        if not isinstance(name, str) or name not in TYPES:
            return f"type: {_shown(name)} is not a JSON Schema type ({', '.join(TYPES)})"
    if len(set(names)) != len(names):
        return f"type: {_shown(value)} names a type twice"
    return None


def _keyword_problem(node: dict[str, Any]) -> str | None:
    for key in _SCHEMA_MAPS:
        if key in node and not isinstance(node[key], dict):
            return f"{key}: must be an object mapping names to schemas, got {_kind(node[key])}"
    for key in _SCHEMA_LISTS:
        if key in node and (not isinstance(node[key], list) or (not node[key] and key != "prefixItems")):
            return f"{key}: must be a non-empty list of schemas, got {_shown(node[key])}"
    if "required" in node and not (isinstance(node["required"], list)
                                   and all(isinstance(r, str) for r in node["required"])):
        return f"required: must be a list of property names (strings), got {_shown(node['required'])}"
    if "enum" in node and not isinstance(node["enum"], list):
        return f"enum: must be a list, got {_kind(node['enum'])}"
    for key in _STRINGS:
        if key in node and not isinstance(node[key], str):
            return f"{key}: must be a string, got {_kind(node[key])}"
    for key in (*_NUMBERS, *_BOUNDS):
        if key in node and not (_is_number(node[key]) or (key in _BOUNDS and isinstance(node[key], bool))):
            return f"{key}: must be a number, got {_shown(node[key])}"
    if "multipleOf" in node and node["multipleOf"] <= 0:
        return f"multipleOf: must be greater than 0, got {_shown(node['multipleOf'])}"
    for key in _COUNTS:
        if key in node and not (_is_number(node[key]) and node[key] >= 0 and float(node[key]).is_integer()):
            return f"{key}: must be a non-negative integer, got {_shown(node[key])}"
    if "uniqueItems" in node and not isinstance(node["uniqueItems"], bool):
        return f"uniqueItems: must be true or false, got {_shown(node['uniqueItems'])}"
    return None


def _where(path: str) -> str:
    """`path` as shown: a long one (a deep nesting) keeps its end."""
    return path if len(path) <= 120 else "…" + path[-100:]


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _kind(value: object) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number" if _is_number(value) else type(value).__name__)


def _shown(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"
