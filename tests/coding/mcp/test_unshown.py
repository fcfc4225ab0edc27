"""Which server messages are dropped unread (`coding/mcp/unshown.py`): log notifications only."""

from __future__ import annotations

import json

import pytest

from agent_forge.coding.mcp.unshown import unshown_line, unshown_message


def line(message: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


@pytest.mark.parametrize("message, dropped", [
    ({"method": "notifications/message", "params": {"level": "info", "data": "hi"}}, True),
    ({"method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}, False),
    ({"id": 3, "method": "notifications/message", "params": {}}, False),  # a request (odd, but answered)
    ({"id": 4, "result": {"content": [{"type": "text", "text": '"notifications/message"'}]}}, False),
])
def test_only_log_notifications_are_dropped(message, dropped):
    assert unshown_line(line(message)) is dropped


def test_a_line_that_is_not_json_is_kept_for_the_transport_to_report():
    assert unshown_line(b'{"method": "notifications/message", ') is False
    assert unshown_line(bytearray(b'not json "notifications/message"')) is False


def test_a_parsed_http_message_is_judged_alike():
    class Note:
        method, id = "notifications/message", None

    class Request:
        method, id = "notifications/message", 7

    assert unshown_message(Note()) is True and unshown_message(Request()) is False
    assert unshown_message(object()) is False
