"""The `models[]` item of models.json that the tests write (one home for every test file)."""
from __future__ import annotations

from typing import Any


def model_entry(model_id: str = "fake-model", *, reasoning: bool = True, context_window: int = 128000,
                max_tokens: int | None = None) -> dict[str, Any]:
    """One `models[]` item of models.json (schema of the reference agent's models.json); costs in $/M tokens.
    `max_tokens` defaults to 16384, or the context window when that is smaller (a larger one is reported)."""
    return {
        "id": model_id, "name": f"Fake {model_id}", "reasoning": reasoning, "input": ["text", "image"],
        "contextWindow": context_window, "maxTokens": min(16384, context_window) if max_tokens is None else max_tokens,
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    }
