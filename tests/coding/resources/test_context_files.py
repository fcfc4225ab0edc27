"""Context files: the agent dir's, then one per directory from the root down to the cwd."""

from __future__ import annotations

import os

from agent_forge.coding.resources.context_files import (
    MAX_CONTEXT_FILE_BYTES,
    format_context_section,
    load_context_files,
)


def test_agent_dir_first_then_outermost_to_cwd(tmp_path):
    agent, project = tmp_path / "agent", tmp_path / "repo" / "pkg"
    agent.mkdir()
    project.mkdir(parents=True)
    (agent / "AGENTS.md").write_text("global rules")
    (tmp_path / "repo" / "CLAUDE.md").write_text("repo rules")
    (project / "AGENTS.md").write_text("package rules")
    warnings: list[str] = []
    files = load_context_files(project, agent, warnings)
    assert [f.content for f in files] == ["global rules", "repo rules", "package rules"]
    assert files[1].path == tmp_path / "repo" / "CLAUDE.md" and warnings == []
    section = format_context_section(files)
    assert section.index("global rules") < section.index("repo rules") < section.index("package rules")
    assert str(project / "AGENTS.md") in section


def test_override_wins_in_its_own_directory_only(tmp_path):
    (tmp_path / "AGENTS.md").write_text("outer")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "AGENTS.md").write_text("inner plain")
    (sub / "AGENTS.override.md").write_text("inner override")
    files = load_context_files(sub, tmp_path / "no-agent-dir", [])
    assert [f.content for f in files] == ["outer", "inner override"]


def test_agent_dir_that_is_also_an_ancestor_counts_once(tmp_path):
    (tmp_path / "AGENTS.md").write_text("once")
    sub = tmp_path / "sub"
    sub.mkdir()
    assert [f.content for f in load_context_files(sub, tmp_path, [])] == ["once"]


def test_oversized_and_unreadable_files_are_reported(tmp_path):
    (tmp_path / "AGENTS.md").write_bytes(b"x" * (MAX_CONTEXT_FILE_BYTES + 10))
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "AGENTS.md").mkdir()  # a directory of that name is not a context file
    warnings: list[str] = []
    files = load_context_files(sub, tmp_path / "none", warnings)
    assert len(files) == 1 and files[0].content.endswith("too long ...]")
    assert len(files[0].content) < MAX_CONTEXT_FILE_BYTES + 100
    assert any("larger than" in w for w in warnings)


def test_no_files_no_section():
    assert format_context_section([]) is None


def test_context_file_linked_to_a_device_or_fifo_is_reported_and_the_next_name_used(tmp_path):
    repo = tmp_path / "repo"
    sub = repo / "sub"
    sub.mkdir(parents=True)
    (repo / "AGENTS.md").symlink_to("/dev/zero")
    (repo / "CLAUDE.md").write_text("claude rules")
    os.mkfifo(sub / "AGENTS.md")
    warnings: list[str] = []
    files = load_context_files(sub, tmp_path / "none", warnings)
    assert [f.content for f in files] == ["claude rules"]
    assert warnings == [
        f"{repo / 'AGENTS.md'}: context file not loaded: not a regular file but a character device; only regular "
        "files are read",
        f"{sub / 'AGENTS.md'}: context file not loaded: not a regular file but a FIFO (named pipe); only regular "
        "files are read"]


def test_context_file_link_loop_is_reported(tmp_path):
    (tmp_path / "AGENTS.md").symlink_to("AGENTS.md")
    warnings: list[str] = []
    assert load_context_files(tmp_path, tmp_path / "none", warnings) == []
    assert warnings == [f"{tmp_path / 'AGENTS.md'}: context file not loaded: Too many levels of symbolic links"]
