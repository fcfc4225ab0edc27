"""End to end: paths that exist but cannot be examined or used as what they are found as (a symbolic link loop,
a FIFO, a link to `/dev/zero`, a regular file where a directory should be) are named with what they are or the
OS's reason, never taken as absent: plugin directory entries, the `find` and `grep` tools, the sessions root."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-m", "agent_forge"]
LOOP = "Too many levels of symbolic links"


def run(args, env, cwd):
    return subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def test_broken_plugin_entries_are_each_named_once_and_the_rest_load(agent_env, fake_llm, tmp_path):
    plugins = Path(agent_env["AGENT_FORGE_DIR"]) / "plugins"
    plugins.mkdir()
    os.mkfifo(plugins / "fifo.py")
    os.symlink("/dev/zero", plugins / "zero.py")
    os.symlink("loop", plugins / "loop")
    (plugins / "good.py").write_text("import sys\ndef setup(plugin):\n    print('good loaded', file=sys.stderr)\n")
    (plugins / "README.md").write_text("not a plugin")
    fake_llm.set_script([{"text": "ok"}])
    done = run(["-p", "hi"], agent_env, tmp_path)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    lines = done.stderr.splitlines()
    expected = [f"Warning: Plugin not loaded: {plugins}/fifo.py: it is a FIFO (named pipe) (expected a .py file "
                "or a package directory)",
                f"Warning: Plugin not loaded: {plugins}/loop: it cannot be examined: {LOOP} (expected a .py file "
                "or a package directory)",
                f"Warning: Plugin not loaded: {plugins}/zero.py: it is a character device (expected a .py file or "
                "a package directory)"]
    assert [line for line in lines if line.startswith("Warning: Plugin")] == expected, done.stderr
    assert "good loaded" in lines
    assert "README" not in done.stderr


def test_a_plugins_directory_that_cannot_be_listed_is_named(agent_env, fake_llm, tmp_path):
    plugins = Path(agent_env["AGENT_FORGE_DIR"]) / "plugins"
    os.symlink("plugins", plugins)
    fake_llm.set_script([{"text": "ok"}])
    done = run(["-p", "hi"], agent_env, tmp_path)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("Warning: Plugin")] == [
        f"Warning: Plugin not loaded: {plugins}: it cannot be examined: {LOOP} (expected a .py file or a package "
        "directory)"]


def first_session(agent_env, fake_llm, tmp_path) -> Path:
    """A session made by a real run in `tmp_path`; its file."""
    fake_llm.set_script([{"text": "ok"}])
    done = run(["-p", "hi"], agent_env, tmp_path)
    assert done.returncode == 0, done.stderr
    [path] = (Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").glob("*/*.jsonl")
    return path


def test_every_directory_listing_names_a_sessions_directory_it_cannot_list(agent_env, fake_llm, tmp_path,
                                                                           monkeypatch):
    """`all_session_files` (--export by id, session/list of every directory, the elsewhere hint) listed nothing
    for a looping sessions root, and silently left out a looping directory of it."""
    from agent_forge.coding.session.listing import list_all_sessions

    good = first_session(agent_env, fake_llm, tmp_path)
    root = good.parent.parent
    os.symlink("loop", root / "loop")
    monkeypatch.setenv("AGENT_FORGE_DIR", agent_env["AGENT_FORGE_DIR"])
    skipped: list[str] = []
    infos, more = list_all_sessions(on_skip=skipped.append)
    assert ([info.path for info in infos], more) == ([good], False)
    assert skipped == [f"the session directory {root}/loop: {LOOP}"]
    looping = tmp_path / "looping"
    os.symlink("looping", looping)
    skipped.clear()
    assert list_all_sessions(looping, on_skip=skipped.append) == ([], False)
    assert skipped == [f"the session directory {looping}: {LOOP}"]


def test_export_by_id_names_a_sessions_root_it_cannot_list(agent_env, fake_llm, tmp_path):
    looping = tmp_path / "looping"
    os.symlink("looping", looping)
    done = run(["--export", "abc123", "--session-dir", str(looping)], agent_env, tmp_path)
    assert done.returncode == 1
    assert f"agent-forge: the session directory {looping}: {LOOP}" in done.stderr.splitlines(), done.stderr


def test_the_resume_picker_names_a_session_directory_it_cannot_list(agent_env, tmp_path):
    """`/resume` said "no other session of this directory" for a directory it could not read."""
    import pytest

    from support.tmux_terminal import TmuxTerminal, tmux_available

    if not tmux_available():
        pytest.skip("tmux is not installed")
    from agent_forge.coding.session.listing import session_cwd_dir

    work = tmp_path / "work"
    work.mkdir()
    directory = session_cwd_dir(work, Path(agent_env["AGENT_FORGE_DIR"]) / "sessions")
    directory.parent.mkdir(parents=True)
    os.symlink(directory.name, directory)
    term = TmuxTerminal(agent_env, work, columns=200, rows=30)
    try:
        term.wait_until(lambda: "loading…" not in term.screen() and "fake-model" in term.screen(), "start-up")
        term.type("/resume")
        term.press("Enter")
        term.wait_for("no other session of this directory to resume")
        assert f"skipped the session directory {directory}: {LOOP}" in " ".join(term.screen().split())
    finally:
        term.close()
