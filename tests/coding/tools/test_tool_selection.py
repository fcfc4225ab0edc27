"""Tool selection: `defaultTools` layers, `--tools` allowlists and deltas, `--no-builtin-tools`, `--no-tools`."""

from __future__ import annotations

import pytest

from agent_forge.coding.tools.selection import ToolSelectionError, resolve_tool_selection


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
