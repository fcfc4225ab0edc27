"""MCP tool names (sanitised, at most 64 characters, clashes hashed whatever the order) and result mapping."""

from __future__ import annotations

import re
from types import SimpleNamespace as NS

from agent_forge.coding.mcp.tools import assign_names, base_name, to_content

RULE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def test_names_follow_the_providers_rule():
    assert base_name("git", "log") == "git_log"
    assert base_name("my.server", "tool/with spaces") == "my_server_tool_with_spaces"
    long = base_name("s", "t" * 100)
    assert RULE.fullmatch(long) and len(long) == 64


def test_clashes_get_hashed_names_independent_of_order():
    pairs = [("a", "x_y"), ("a_x", "y"), ("b", "read")]
    names, clashes = assign_names(pairs, taken={"b_read"})
    reverse, _ = assign_names(list(reversed(pairs)), taken={"b_read"})
    assert names == reverse and len(set(names.values())) == 3 and len(clashes) == 3
    assert all(RULE.fullmatch(n) and n != base_name(*p) for p, n in names.items())
    plain, none = assign_names([("a", "x")], taken={"read"})
    assert plain == {("a", "x"): "a_x"} and none == []


def test_results_map_to_text_images_and_resources():
    result = NS(content=[
        NS(type="text", text="hello"), NS(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
        NS(type="resource", resource=NS(uri="file:///a.txt", text="body", mime_type="text/plain")),
        NS(type="resource", resource=NS(uri="file:///b.bin", text=None, blob="AAAA", mime_type=None)),
        NS(type="resource_link", uri="file:///c", name="c"), NS(type="audio", mime_type="audio/wav")],
        structured_content={"ignored": True})
    blocks = to_content(result)
    assert blocks[0] == {"type": "text", "text": "hello"}
    assert blocks[1] == {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    assert blocks[2]["text"] == "[Resource file:///a.txt]\nbody" and "file:///b.bin: binary" in blocks[3]["text"]
    assert blocks[4]["text"] == "[Resource link file:///c: c]" and "Audio: audio/wav" in blocks[5]["text"]
    assert len(blocks) == 6  # structured content is not repeated next to text


def test_structured_content_alone_becomes_json_text():
    assert to_content(NS(content=[], structured_content={"sum": 5})) == [{"type": "text", "text": '{\n  "sum": 5\n}'}]
