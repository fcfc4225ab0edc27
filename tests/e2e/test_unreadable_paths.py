"""End to end: a file or directory the OS refuses to read (no permission, a link loop) is reported with the OS's
reason, never as empty, absent or without a match: the `grep` and `find` tools, plugin entries, skills, sessions
looked up by id. The permission cases run as user 65534 (root reads everything)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "agent_forge"]
DENIED = "Permission denied"
LOOP = "Too many levels of symbolic links"


def run_as_nobody(env, cwd, *args) -> subprocess.CompletedProcess:
    from support.doubles import NOBODY

    return subprocess.run([*NOBODY, *CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def tool_ends(env, cwd, fake_llm, tools: str, calls: list[tuple[str, dict]]) -> dict[str, dict]:
    """Run `calls` (tool name, arguments) in one turn as nobody in `--mode json`; their `tool_execution_end`
    events by call id (`c0`, `c1`, ...)."""
    fake_llm.set_script([{"tool_calls": [{"name": name, "arguments": arguments, "id": f"c{i}"}
                                         for i, (name, arguments) in enumerate(calls)]}, {"text": "fin"}])
    done = run_as_nobody(env, cwd, "--mode", "json", "--no-session", "--tools", tools, "go")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    return {e["toolCallId"]: e for e in events if e.get("type") == "tool_execution_end"}


def text_of(end: dict) -> str:
    return "".join(part.get("text", "") for part in end["result"]["content"])


@pytest.fixture
def locked_tree(nobody_dir) -> Path:
    """`proj/` with a readable match, a mode-000 file and directory beside it and below it; a git work tree, so
    that `find` uses fd when it is installed (an fd older than 8.7 is used only in one)."""
    proj = nobody_dir / "proj"
    (proj / "sub").mkdir(parents=True)
    (proj / ".git").mkdir()
    (proj / "open.txt").write_text("needle here\n")
    for path in (proj / "locked.txt", proj / "sub" / "deep.txt"):
        path.write_text("needle\n")
        path.chmod(0o000)
    for path in (proj / "lockdir", proj / "sub" / "hidden"):
        path.mkdir()
        (path / "inner.txt").write_text("needle\n")
        path.chmod(0o000)
    for path in (proj, proj / "sub"):
        path.chmod(0o755)
    return proj


def test_grep_and_find_name_what_they_could_not_read(locked_tree, nobody_env, fake_llm):
    """G1/G2: grep on a mode-000 file, grep and find on a mode-000 directory said "No matches found" / "No files
    found matching the pattern"; inside a searched tree the refused entries were skipped without a word. With
    whichever engine is installed (rg and fd when on PATH, else the Python walk)."""
    proj = locked_tree
    ends = tool_ends(nobody_env, proj.parent, fake_llm, "grep,find", [
        ("grep", {"pattern": "needle", "path": "proj/locked.txt"}),
        ("grep", {"pattern": "needle", "path": "proj/lockdir"}),
        ("find", {"pattern": "*.txt", "path": "proj/lockdir"}),
        ("grep", {"pattern": "needle", "path": "proj"}),
        ("find", {"pattern": "*.txt", "path": "proj"})])
    for call, path in (("c0", "locked.txt"), ("c1", "lockdir"), ("c2", "lockdir")):
        assert ends[call]["isError"] is True, ends[call]
        assert text_of(ends[call]) == f"Cannot search {proj}/{path}: {DENIED}"
    grep_text, find_text = text_of(ends["c3"]), text_of(ends["c4"])
    assert ends["c3"]["isError"] is False and "open.txt:1: needle here" in grep_text
    assert (f"2 files could not be read: locked.txt ({DENIED}), sub/deep.txt ({DENIED})" in grep_text
            and f"2 directories could not be listed (skipped): lockdir ({DENIED}), sub/hidden ({DENIED})"
            in grep_text), grep_text
    assert ends["c4"]["isError"] is False and "open.txt" in find_text
    assert (f"2 directories could not be listed (skipped): lockdir ({DENIED}), sub/hidden ({DENIED})"
            in find_text), find_text


def test_a_search_with_only_refused_files_says_so_after_no_match(locked_tree, nobody_env, fake_llm):
    (locked_tree / "open.txt").unlink()
    ends = tool_ends(nobody_env, locked_tree.parent, fake_llm, "grep", [("grep", {"pattern": "needle", "path": "proj/sub"})])
    assert ends["c0"]["isError"] is False
    assert text_of(ends["c0"]) == (f"No matches found\n\n[1 file could not be read: deep.txt ({DENIED}). 1 directory "
                                   f"could not be listed (skipped): hidden ({DENIED}).]")


def test_unreadable_plugins_are_each_named_with_the_os_reason(nobody_dir, nobody_env, fake_llm):
    """G3: a mode-000 package directory was skipped without a word; a mode-000 `.py` was warned as
    `PermissionError: [Errno 13] Permission denied: '...'`."""
    plugins = Path(nobody_env["AGENT_FORGE_DIR"]) / "plugins"
    (plugins / "realpkg").mkdir(parents=True)
    (plugins / "realpkg" / "__init__.py").write_text("def setup(plugin):\n    pass\n")
    (plugins / "lockedfile.py").write_text("def setup(plugin):\n    pass\n")
    (plugins / "good.py").write_text("import sys\ndef setup(plugin):\n    print('good loaded', file=sys.stderr)\n")
    for path in (plugins / "realpkg", plugins / "lockedfile.py"):
        path.chmod(0o000)
    fake_llm.set_script([{"text": "ok"}])
    done = run_as_nobody(nobody_env, nobody_dir, "--no-session", "-p", "hi")
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("Warning: Plugin")] == [
        f"Warning: Plugin not loaded: {plugins}/lockedfile.py: {DENIED}",
        f"Warning: Plugin not loaded: {plugins}/realpkg: it cannot be listed: {DENIED}"], done.stderr
    assert "good loaded" in done.stderr.splitlines()


def test_a_skills_entry_that_is_a_link_loop_is_warned_with_the_reason(agent_env, fake_llm, tmp_path):
    """G4: `skills/l1 -> l1` was passed over in silence (a looping `SKILL.md` inside a skill was warned)."""
    skills = Path(agent_env["AGENT_FORGE_DIR"]) / "skills"
    (skills / "open").mkdir(parents=True)
    (skills / "open" / "SKILL.md").write_text("---\ndescription: opens things\n---\nbody\n")
    os.symlink("l1", skills / "l1")
    fake_llm.set_script([{"text": "ok"}])
    done = subprocess.run([*CLI, "--no-session", "-p", "hi"], cwd=tmp_path, env=agent_env, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert f"Warning: {skills}/l1: cannot be examined: {LOOP}; skipped" in done.stderr.splitlines(), done.stderr
    assert "opens things" in str(fake_llm.requests[-1]["body"]["messages"][0])


LOOP_ID = "0badc0de-1111-4222-8333-444455556666"


def looping_session(agent_env, fake_llm, cwd) -> Path:
    """A real session of `cwd`, and beside it `<timestamp>_<LOOP_ID>.jsonl` linking to itself; the loop's path."""
    fake_llm.set_script([{"text": "ok"}])
    done = subprocess.run([*CLI, "-p", "hi"], cwd=cwd, env=agent_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    [real] = (Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").glob("*/*.jsonl")
    loop = real.parent / f"2026-12-01T10-00-00-000Z_{LOOP_ID}.jsonl"
    os.symlink(loop.name, loop)
    return loop


@pytest.mark.parametrize("args", [["--session", LOOP_ID[:8], "-p", "hi"], ["--session", LOOP_ID, "-p", "hi"],
                                  ["--export", LOOP_ID]], ids=["prefix", "session", "export"])
def test_a_session_file_named_after_the_id_but_unreadable_is_named(agent_env, fake_llm, tmp_path, args):
    """G5: "No session found matching '<id>'" for a file named after the id that the OS will not open."""
    loop = looping_session(agent_env, fake_llm, tmp_path)
    requests = len(fake_llm.requests)
    done = subprocess.run([*CLI, *args], cwd=tmp_path, env=agent_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"cannot read session file {loop}: {LOOP}" in done.stderr, done.stderr
    assert "No session found" not in done.stderr
    assert len(fake_llm.requests) == requests


async def test_acp_session_load_names_an_unreadable_file_named_after_the_id(agent_env, fake_llm, tmp_path):
    from support.acp_client import AcpClient, AcpReplyError

    loop = looping_session(agent_env, fake_llm, tmp_path)
    async with await AcpClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.initialize()
        with pytest.raises(AcpReplyError) as refused:
            await client.request("session/load", {"sessionId": LOOP_ID, "cwd": str(tmp_path), "mcpServers": []})
    assert f"cannot read session file {loop}: {LOOP}" in refused.value.message, refused.value.message
