"""The server's retry-after hint lengthens the automatic retry's wait (never shortens it), within the cap."""

from __future__ import annotations

import email.utils
import time

import pytest

from agent_forge.ai.providers._response_body import retry_after_ms
from agent_forge.coding.retry_policy import hinted_delay_ms


@pytest.mark.parametrize("headers, expected", [
    ({"retry-after-ms": "1500"}, 1500),
    ({"retry-after": "30"}, 30000),
    ({"retry-after": "2.5"}, 2500),
    ({"retry-after": "soon"}, None),
    ({}, None),
    ({"retry-after-ms": "-5"}, 0),
    ({"retry-after-ms": "nan"}, None),
    ({"retry-after-ms": "86400001"}, 86_400_000),  # clamped to a day (MAX_RETRY_AFTER_MS)
    ({"retry-after-ms": "1e400"}, 86_400_000),  # inf as a float
    ({"retry-after": "86401"}, 86_400_000),
])
def test_retry_after_header_forms(headers, expected):
    assert retry_after_ms(headers) == expected


def test_retry_after_http_date():
    when = email.utils.formatdate(time.time() + 20, usegmt=True)
    assert 15000 <= retry_after_ms({"retry-after": when}) <= 20000


def test_hint_lengthens_but_never_shortens_and_is_capped():
    assert hinted_delay_ms({"retryAfterMs": 30000}, 2000, 60000) == 30000
    assert hinted_delay_ms({"retryAfterMs": 500}, 2000, 60000) == 2000
    assert hinted_delay_ms({"retryAfterMs": 10**9}, 2000, 60000) == 60000
    assert hinted_delay_ms({"retryAfterMs": "x"}, 2000, 60000) == 2000
    assert hinted_delay_ms(None, 2000, 0) == 2000
