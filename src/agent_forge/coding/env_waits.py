"""Waits that an environment variable can shorten (tests, slow or fast machines): one parser for all of them."""

from __future__ import annotations

import os


def wait_from_env(name: str, default_s: float) -> float:
    """Seconds from env var `name`, given in whole milliseconds (digits only, e.g. "200"), else `default_s`;
    anything else (empty, negative, "1.5", "2s") falls back to the default rather than failing start-up."""
    raw = os.environ.get(name, "")
    return int(raw) / 1000 if raw.isdigit() else default_s
