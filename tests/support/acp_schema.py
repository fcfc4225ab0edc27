"""Validation of ACP messages against the official JSON schema (`acp/schema.json`, protocol version 1).

`check(direction, message, method)` returns the problems of one JSON-RPC message: its envelope, and its
`params` / `result` / `error` against the schema's definition for the method (the `x-method` / `x-side`
marks of `*Request`, `*Response` and `*Notification` definitions). `direction` is "to_agent" or "to_client".
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).parent / "acp" / "schema.json"


@functools.cache
def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@functools.cache
def _definitions() -> dict[tuple[str, str], str]:
    """(method, "Request" | "Response" | "Notification") -> definition name."""
    found = {}
    for name, definition in _schema()["$defs"].items():
        method = definition.get("x-method")
        for suffix in ("Request", "Response", "Notification"):
            if method and name.endswith(suffix):
                found[(method, suffix)] = name
    return found


@functools.cache
def _validator(name: str) -> Any:
    import jsonschema

    root = {"$ref": f"#/$defs/{name}", "$defs": _schema()["$defs"]}
    return jsonschema.Draft202012Validator(root)


def problems_of(name: str, value: Any) -> list[str]:
    """Schema problems of `value` as the definition `name` (e.g. "SessionNotification")."""
    return [f"{name}: {'/'.join(map(str, e.absolute_path))}: {e.message}"[:600]
            for e in _validator(name).iter_errors(value)]


def check(message: Any, method: str | None) -> list[str]:
    """Problems of one message; `method` is the request's method for a response (None when unknown)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return [f"not a JSON-RPC 2.0 message: {message!r:.200}"]
    if "method" in message:
        suffix = "Request" if "id" in message else "Notification"
        name = _definitions().get((message["method"], suffix))
        if name is None:
            return [f"no schema definition for {suffix.lower()} {message['method']!r}"]
        return problems_of(name, message.get("params", {}))
    if "error" in message:
        return problems_of("Error", message["error"])
    name = _definitions().get((method, "Response")) if method else None
    if name is None:
        return [f"a response to an unknown request (method {method!r})"]
    return problems_of(name, message.get("result"))


class SchemaObserver:
    """A stream observer for the official Python SDK's connection (`observers=[...]` of
    `acp.spawn_agent_process`): checks every message both ways against the schema, a response against its
    request's method; `problems` lists what failed."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.count = 0
        self._methods: dict[tuple[str, Any], str] = {}  # (direction of the request, id) -> method

    def __call__(self, event: Any) -> None:
        direction, message = str(getattr(event.direction, "value", event.direction)), event.message
        self.count += 1
        method = None
        if "method" in message and "id" in message:
            self._methods[(direction, message["id"])] = message["method"]
        elif "id" in message:
            other = "outgoing" if direction == "incoming" else "incoming"
            method = self._methods.pop((other, message["id"]), None)
        self.problems.extend(f"{direction} {message!r:.300}: {p}" for p in check(message, method))
