"""`wait_from_env`: whole milliseconds from the environment, anything else the default."""

from __future__ import annotations

import pytest

from agent_forge.coding.env_waits import wait_from_env


@pytest.mark.parametrize(("raw", "expected"), [("200", 0.2), ("0", 0.0), ("", 1.5), ("-5", 1.5), ("1.5", 1.5),
                                                ("2s", 1.5), (" 7", 1.5)])
def test_milliseconds_or_the_default(monkeypatch, raw, expected):
    monkeypatch.setenv("AGENT_FORGE_TEST_WAIT_MS", raw)
    assert wait_from_env("AGENT_FORGE_TEST_WAIT_MS", 1.5) == expected


def test_unset_is_the_default(monkeypatch):
    monkeypatch.delenv("AGENT_FORGE_TEST_WAIT_MS", raising=False)
    assert wait_from_env("AGENT_FORGE_TEST_WAIT_MS", 3.0) == 3.0
