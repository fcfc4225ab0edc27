"""Usage records and their cost: dollars from the model's per-million-token prices."""

from __future__ import annotations

from .types import Model, Usage


def empty_usage() -> Usage:
    """A zeroed usage record (fresh dicts every call: callers mutate it while streaming)."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0},
    }


def update_cost(model: Model, usage: Usage) -> Usage:
    """Recompute `usage.totalTokens` and `usage.cost` in place from `model.cost` ($ per million tokens)."""
    prices = model.get("cost") or {}
    cost = usage["cost"]
    for key in ("input", "output", "cacheRead", "cacheWrite"):
        cost[key] = usage[key] * float(prices.get(key, 0) or 0) / 1_000_000
    cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    usage["totalTokens"] = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    return usage


def add_usage(total: Usage, part: Usage) -> None:
    """Add `part`'s tokens and cost into `total` in place."""
    for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
        total[key] += int(part.get(key, 0) or 0)
    for key in ("input", "output", "cacheRead", "cacheWrite", "total"):
        total["cost"][key] += float((part.get("cost") or {}).get(key, 0) or 0)
