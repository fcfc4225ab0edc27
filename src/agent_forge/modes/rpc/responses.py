"""The response record of RPC mode, apart from the protocol tables (`types.py` re-exports it): RPC mode's early
`get_state` (`early.py`) writes one before the event tables are built."""

from __future__ import annotations

from typing import Any


class _NoId:
    """The request carried no `id` (distinct from `"id": null`, which is echoed)."""

    def __repr__(self) -> str:
        return "NO_ID"


NO_ID: Any = _NoId()
"""`request_id` of a request without an `id` field (or of a line that was not a JSON object)."""


def response(command: str, request_id: Any = NO_ID, *, data: Any = None, error: str | None = None,
             has_data: bool = False) -> dict[str, Any]:
    """A response record `{id?, type, command, success, data?|error?}` (seed 000, "Error Handling"). Any
    `request_id` but NO_ID is echoed, `None` (a request's `"id": null`) included."""
    out: dict[str, Any] = {"type": "response", "command": command, "success": error is None}
    if request_id is not NO_ID:
        out["id"] = request_id
    if error is not None:
        out["error"] = error
    elif data is not None or has_data:
        out["data"] = data
    return out
