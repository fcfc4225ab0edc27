"""Fixtures shared by the provider-layer tests."""

from __future__ import annotations

import pytest

from ai_stream_helpers import FakeServer


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()
