"""`mcp.json` edits (`agent-forge mcp add/remove`): atomic, keeping everything else, refusing what would not load."""

from __future__ import annotations

import json
import os

import pytest

from agent_forge.coding.mcp.edit import McpFileError, add_server, remove_server


def test_an_edit_keeps_the_rest_of_the_file_its_mode_and_replaces_a_links_target(tmp_path):
    real = tmp_path / "real.json"
    real.write_text(json.dumps({"z": 1, "mcpServers": {"b": {"command": "b"}}, "a": [1]}))
    real.chmod(0o640)
    link = tmp_path / "mcp.json"
    link.symlink_to(real)
    assert add_server(link, "c", {"url": "https://x/mcp"}) is False
    assert add_server(link, "b", {"command": "b2"}, replace=True) is True
    assert link.is_symlink() and oct(real.stat().st_mode & 0o777) == "0o640"
    data = json.loads(real.read_text())
    assert list(data) == ["z", "mcpServers", "a"] and data["mcpServers"] == {"b": {"command": "b2"},
                                                                           "c": {"url": "https://x/mcp"}}
    remove_server(link, "b")
    assert json.loads(real.read_text())["mcpServers"] == {"c": {"url": "https://x/mcp"}}
    assert sorted(os.listdir(tmp_path)) == [".real.json.lock", "mcp.json", "real.json"]  # no temporary file left


def test_a_new_file_is_private_and_bad_input_changes_nothing(tmp_path):
    path = tmp_path / "dir" / "mcp.json"
    add_server(path, "s", {"command": "x", "env": {"T": "${TOKEN}"}})  # ${VAR} stays for start-up
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert json.loads(path.read_text())["mcpServers"]["s"]["env"] == {"T": "${TOKEN}"}
    before = path.read_text()
    for name, entry, message in [("s", {"command": "y"}, "exists already"), ("bad name", {"command": "y"}, "invalid"),
                                 ("t", {"url": "ftp://x"}, "url must start with")]:
        with pytest.raises(McpFileError, match=message):
            add_server(path, name, entry)
    with pytest.raises(McpFileError, match="no server named 'u'"):
        remove_server(path, "u")
    assert path.read_text() == before
    path.write_text('{"mcpServers": []}')
    with pytest.raises(McpFileError, match="is not an object; the file was not changed"):
        add_server(path, "t", {"command": "y"})
    with pytest.raises(McpFileError, match="no such file"):
        remove_server(tmp_path / "none.json", "s")
