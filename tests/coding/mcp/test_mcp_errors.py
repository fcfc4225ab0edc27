"""How a dropped HTTP connection is recognised, whichever of the HTTP client's errors reports it (the CI run where
the server's death surfaced as `RemoteProtocolError` rather than the SDK's broken-stream error)."""

from __future__ import annotations

import httpx2

from agent_forge.coding.mcp.errors import connection_dropped


def test_the_http_clients_dropped_connection_errors_count_as_a_closed_connection():
    assert connection_dropped(httpx2.RemoteProtocolError("Server disconnected without sending a response."))
    assert connection_dropped(httpx2.ReadError(""))


def test_other_errors_keep_their_own_words():
    assert not connection_dropped(httpx2.ConnectError("All connection attempts failed"))
    assert not connection_dropped(ValueError("the server's answer is malformed"))
