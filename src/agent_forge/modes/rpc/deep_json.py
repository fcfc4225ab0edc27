"""JSON encoding of values nested deeper than the stdlib encoder's recursion limit (e.g. a long session's tree).

`json.dumps` recurses once per nesting level and gives up after a few hundred levels; a `get_tree` answer for a
linear session of N entries nests about 3N levels. `dumps` walks the deep part with an explicit stack and hands
every shallow subtree to the caller's encoder, so the output is byte-for-byte what that encoder would write if
it had no depth limit (compact separators assumed: no spaces around `,` and `:`).
"""

from __future__ import annotations

from typing import Any, Callable

SHALLOW = 200
"""Subtrees at most this many containers deep go to `json.dumps` in one call (well inside its limit)."""

_CONTAINERS = (dict, list, tuple)


class _Literal(str):
    """Output text pushed on the work stack (as opposed to a value still to encode)."""


def dumps(value: Any, *, encode: Callable[[Any], str]) -> str:
    """JSON text of `value` at any depth. `encode` writes values of bounded depth (e.g. `json.dumps` with the
    caller's options: compact separators, a `default`, NaN handling); the result is what it would write for
    `value` if it had no depth limit. Raises ValueError for a circular reference, and whatever `encode` raises."""
    deep = _deep_containers(value)
    parts: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is _Literal:
            parts.append(item)
        elif id(item) in deep:
            stack.extend(reversed(_tokens(item, encode)))
        else:
            parts.append(encode(item))
    return "".join(parts)


def _tokens(container: Any, encode: Callable[[Any], str]) -> list[Any]:
    """The container as literals and member values, in output order."""
    if isinstance(container, dict):
        out: list[Any] = [_Literal("{")]
        for i, (key, member) in enumerate(container.items()):
            out += [_Literal(("," if i else "") + _key(key, encode) + ":"), member]
        return out + [_Literal("}")]
    out = [_Literal("[")]
    for i, member in enumerate(container):
        out += ([_Literal(",")] if i else []) + [member]
    return out + [_Literal("]")]


def _key(key: Any, encode: Callable[[Any], str]) -> str:
    """A dict key as `json.dumps` writes it (numbers, booleans and null become strings)."""
    if isinstance(key, str):
        return encode(key)
    return encode({key: None})[1 : -len(":null}")]


def _deep_containers(root: Any) -> set[int]:
    """Ids of the containers reachable from `root` that nest more than SHALLOW levels, found in one
    post-order walk without recursion. Raises ValueError on a cycle."""
    heights: dict[int, int] = {}
    open_ids: set[int] = set()
    stack: list[Any] = [root] if isinstance(root, _CONTAINERS) else []
    while stack:
        node = stack[-1]
        key = id(node)
        if key in heights:
            stack.pop()
        elif key in open_ids:  # its members are done
            stack.pop()
            open_ids.discard(key)
            heights[key] = 1 + max([heights[id(m)] for m in _members(node) if isinstance(m, _CONTAINERS)],
                                   default=0)
        else:
            open_ids.add(key)
            members = [m for m in _members(node) if isinstance(m, _CONTAINERS) and id(m) not in heights]
            if any(id(m) in open_ids for m in members):
                raise ValueError("Circular reference detected")
            stack.extend(members)
    return {key for key, height in heights.items() if height > SHALLOW}


def _members(container: Any) -> Any:
    return container.values() if isinstance(container, dict) else container
