"""Tool selection: `defaultTools` layers, `--tools` allowlists and deltas, `--no-builtin-tools`, `--no-tools`."""

from __future__ import annotations

import pytest

from agent_forge.coding.errors import ToolSelectionError
from agent_forge.coding.tools.selection import resolve_tool_selection


def builtin(**kwargs) -> list[str]:
    return list(resolve_tool_selection(**kwargs).builtin)


def test_defaults_and_setting_layers():
    assert builtin() == ["read", "bash", "edit", "write"]
    assert builtin(global_setting=["read", "grep"]) == ["read", "grep"]
    assert builtin(global_setting=["read", "grep"], project_setting=["+ls", "-read"]) == ["grep", "ls"]
    assert builtin(global_setting=["+grep"], project_setting=["ls"]) == ["ls"]  # plain names replace
    assert builtin(global_setting=["read", "+find", "-read"]) == ["find"]  # plain base, then +/- in order
    assert builtin(global_setting=[]) == []


def test_bad_settings_are_warnings():
    warnings: list[str] = []
    assert builtin(global_setting="read", warnings=warnings) == ["read", "bash", "edit", "write"]
    assert builtin(project_setting=["read", "teleport"], warnings=warnings) == ["read"]
    assert "must be a list" in warnings[0] and "teleport" in warnings[1] and "project" in warnings[1]


def test_cli_allowlist_delta_and_switches():
    selection = resolve_tool_selection(cli_entries=["ls", "re*", "my_plugin_*"])
    assert selection.builtin == ("ls", "read")
    assert selection.admits("my_plugin_tool") and not selection.admits("other_tool")
    delta = resolve_tool_selection(global_setting=["read"], cli_entries=["+grep", "-plugin_x"])
    assert delta.builtin == ("read", "grep") and delta.admits("plugin_y") and not delta.admits("plugin_x")
    no_builtin = resolve_tool_selection(no_builtin_tools=True)
    assert no_builtin.builtin == () and no_builtin.admits("plugin_y")
    nothing = resolve_tool_selection(cli_entries=["read"], no_tools=True)
    assert nothing.builtin == () and not nothing.admits("plugin_y")


@pytest.mark.parametrize("entries, message", [(["read", "+grep"], "not both"), (["read", ""], "empty")])
def test_bad_cli_lists_raise(entries, message):
    with pytest.raises(ToolSelectionError, match=message):
        resolve_tool_selection(cli_entries=entries)


def test_unknown_cli_names_are_warned_about_and_kept_for_plugins():
    warnings: list[str] = []
    selection = resolve_tool_selection(cli_entries=["read", "nope", "my_*"], warnings=warnings)
    assert selection.builtin == ("read",) and selection.admits("nope") and selection.admits("my_tool")
    assert warnings == ["--tools: unknown tool(s) nope (not built in; a plugin or MCP server may provide it); built-in tools: "
                        "read, bash, edit, write, grep, find, ls",
                        "--tools: pattern(s) my_* match no built-in tool (a plugin or MCP server may provide one); "
                        "built-in tools: read, bash, edit, write, grep, find, ls"]


@pytest.mark.parametrize(("kwargs", "warning"), [
    ({"cli_entries": ["zz*"]}, "--tools: pattern(s) zz* match no built-in tool"),
    ({"cli_entries": ["a["]}, "--tools: pattern(s) a[ match no built-in tool"),
    ({"cli_entries": ["-zz*"]}, "--tools: pattern(s) -zz* match no built-in tool"),
    ({"exclude": ["bogus"]}, "--exclude-tools: unknown tool(s) bogus (not built in"),
    ({"exclude": ["zz*", "r*"]}, "--exclude-tools: pattern(s) zz* match no built-in tool"),
])
def test_patterns_matching_no_tool_and_unknown_exclusions_are_warned_about(kwargs, warning):
    warnings: list[str] = []
    resolve_tool_selection(**kwargs, warnings=warnings)
    assert len(warnings) == 1 and warnings[0].startswith(warning), warnings


def test_patterns_and_exclusions_that_match_a_tool_say_nothing():
    warnings: list[str] = []
    selection = resolve_tool_selection(cli_entries=["r*", "gr?p"], exclude=["bash", "e*"], warnings=warnings)
    assert selection.builtin == ("read", "grep") and warnings == []


def test_tool_names_are_case_sensitive_and_the_warning_suggests_the_lower_case_name():
    warnings: list[str] = []
    assert resolve_tool_selection(cli_entries=["READ"], warnings=warnings).builtin == ()
    assert warnings == ['--tools: unknown tool(s) READ (tool names are case-sensitive: did you mean "read"?) (not '
                        "built in; a plugin or MCP server may provide it); built-in tools: read, bash, edit, write, grep, find, ls"]
    warnings.clear()
    assert resolve_tool_selection(cli_entries=["+Grep", "-nope"], warnings=warnings).builtin == (
        "read", "bash", "edit", "write")
    assert '+Grep (tool names are case-sensitive: did you mean "grep"?), -nope' in warnings[0]
    warnings.clear()
    assert builtin(global_setting=["Bash", "read"], warnings=warnings) == ["read"]
    assert 'Bash (tool names are case-sensitive: did you mean "bash"?) ignored' in warnings[0]


def test_known_names_and_patterns_give_no_warning():
    warnings: list[str] = []
    resolve_tool_selection(cli_entries=["read", "gr*", "?s"], warnings=warnings)
    resolve_tool_selection(cli_entries=["+grep", "-bash"], warnings=warnings)
    assert warnings == []
