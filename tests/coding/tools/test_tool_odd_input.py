"""Odd arguments never crash a tool: every failure is a ToolError (property tests)."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_forge.agent.types import ToolError
from agent_forge.coding.tools.edit import parse_edits
from agent_forge.coding.tools.read import ReadTool

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
# Relative names without "/" or "~": a fuzzer must not wander into /proc or the home directory.
file_names = st.text(alphabet=st.characters(blacklist_characters="/~"), max_size=12)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.just("file.txt") | file_names | json_values, offset=json_values, limit=json_values)
def test_read_with_arbitrary_arguments(tmp_path, path, offset, limit):
    (tmp_path / "file.txt").write_text("a\nb\nc\n")
    try:
        result = asyncio.run(ReadTool(str(tmp_path)).execute("c", {"path": path, "offset": offset,
                                                                  "limit": limit}, None))
    except ToolError as exc:
        assert str(exc)
    else:
        assert result.content[0]["type"] == "text"


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["edits", "oldText", "newText", "other"]), json_values, max_size=4))
def test_parse_edits_with_arbitrary_arguments(args):
    try:
        edits = parse_edits(args)
    except ToolError as exc:
        assert str(exc)
    else:
        assert edits and all(isinstance(e.old_text, str) and isinstance(e.new_text, str) for e in edits)
