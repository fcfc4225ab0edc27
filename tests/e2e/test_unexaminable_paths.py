"""End to end: paths that exist but cannot be examined or used as what they are found as (a symbolic link loop,
a FIFO, a link to `/dev/zero`, a regular file where a directory should be) are named with what they are or the
OS's reason, never taken as absent: plugin directory entries, the `find` and `grep` tools, the sessions root."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.tui import needs_tmux

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


def test_a_package_plugin_whose_init_is_no_regular_file_says_what_it_is(agent_env, fake_llm, tmp_path):
    """Each said only "a plugin directory needs an __init__.py", though one is there."""
    plugins = Path(agent_env["AGENT_FORGE_DIR"]) / "plugins"
    for name in ("dir_pkg", "fifo_pkg", "loop_pkg"):
        (plugins / name).mkdir(parents=True)
    (plugins / "dir_pkg" / "__init__.py").mkdir()
    os.mkfifo(plugins / "fifo_pkg" / "__init__.py")
    os.symlink("__init__.py", plugins / "loop_pkg" / "__init__.py")
    fake_llm.set_script([{"text": "ok"}])
    done = run(["-p", "hi"], agent_env, tmp_path)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("Warning: Plugin")] == [
        f"Warning: Plugin not loaded: {plugins}/dir_pkg: its __init__.py is a directory, not a regular file",
        f"Warning: Plugin not loaded: {plugins}/fifo_pkg: its __init__.py is a FIFO (named pipe), not a regular file",
        f"Warning: Plugin not loaded: {plugins}/loop_pkg: its __init__.py cannot be examined: {LOOP}"]


def test_a_plugins_directory_without_read_permission_says_so(nobody_dir, nobody_env, fake_llm):
    """It was taken for a package plugin: "a plugin directory needs an __init__.py"."""
    from support.doubles import run_as_nobody

    env = nobody_env
    plugins = Path(env["AGENT_FORGE_DIR"]) / "plugins"
    plugins.mkdir(mode=0o311)  # enterable, not listable
    fake_llm.set_script([{"text": "ok"}])
    done = run_as_nobody(["--no-session", "-p", "hi"], env, nobody_dir)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("Warning: Plugin")] == [
        f"Warning: Plugin not loaded: {plugins}: it cannot be listed: Permission denied"]


def test_a_skills_directory_that_cannot_be_listed_says_why(nobody_dir, nobody_env, fake_llm):
    """The skill search said "cannot be listed; skipped" without the OS's reason."""
    from support.doubles import run_as_nobody

    env = nobody_env
    skills = Path(env["AGENT_FORGE_DIR"]) / "skills"
    (skills / "locked").mkdir(parents=True, mode=0o000)
    (skills / "open" / "SKILL.md").parent.mkdir()
    (skills / "open" / "SKILL.md").write_text("---\ndescription: opens things\n---\nbody\n")
    fake_llm.set_script([{"text": "ok"}])
    done = run_as_nobody(["--no-session", "-p", "hi"], env, nobody_dir)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert f"Warning: {skills}/locked: cannot be listed: Permission denied; skipped\n" in done.stderr
    assert "opens things" in str(fake_llm.requests[-1]["body"]["messages"][0])


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
    assert f"agent-forge: skipped the session directory {looping}: {LOOP}" in done.stderr.splitlines(), done.stderr


@needs_tmux
def test_the_resume_picker_names_a_session_directory_it_cannot_list(terminal, agent_env):
    """`/resume` said "no other session of this directory" for a directory it could not read."""
    from agent_forge.coding.session.listing import session_cwd_dir

    directory = session_cwd_dir(terminal.work, Path(agent_env["AGENT_FORGE_DIR"]) / "sessions")
    directory.parent.mkdir(parents=True)
    os.symlink(directory.name, directory)
    term = terminal(columns=200)
    term.type("/resume")
    term.press("Enter")
    term.wait_for("no other session of this directory to resume")
    assert f"skipped the session directory {directory}: {LOOP}" in " ".join(term.screen().split())


def test_default_skill_and_prompt_dirs_that_cannot_be_examined_are_named(tmp_path):
    """`<agent dir>/skills` or `prompts` as a link loop was taken as absent (only a named path was reported)."""
    from agent_forge.coding.resources.loader import ResourceOptions, load_resources
    from agent_forge.coding.resources.trust import project_policy
    from agent_forge.coding.settings import load_settings

    agent = tmp_path / "agent"
    agent.mkdir()
    os.symlink("skills", agent / "skills")
    os.symlink("prompts", agent / "prompts")
    resources = load_resources(ResourceOptions(cwd=str(tmp_path), agent_dir=agent),
                               load_settings(str(tmp_path), agent), project_policy(str(tmp_path), agent, approve=False))
    assert f"{agent}/skills: skill path cannot be examined: {LOOP}" in resources.warnings
    assert f"{agent}/prompts: prompt template path cannot be examined: {LOOP}" in resources.warnings


def test_a_theme_file_that_cannot_be_examined_is_not_called_missing(tmp_path):
    from agent_forge.modes.interactive.theme_files import DARK, resolve_theme, themes_dir

    themes = themes_dir(tmp_path)
    themes.mkdir(parents=True)
    os.symlink("loopy.json", themes / "loopy.json")
    theme, warning = resolve_theme("loopy", tmp_path)
    assert theme is DARK
    assert warning == f"theme 'loopy': {themes}/loopy.json cannot be examined: {LOOP}; using the dark theme"


def test_a_resumed_session_directory_that_cannot_be_examined_says_why(agent_env, fake_llm, tmp_path):
    import json

    from agent_forge.coding.session.home import resume_directory

    path = first_session(agent_env, fake_llm, tmp_path)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(tmp_path / "loop")
    os.symlink("loop", tmp_path / "loop")
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    here = tmp_path / "here"
    here.mkdir()
    resumed = resume_directory(path, str(here))
    assert resumed.cwd == str(here)
    assert resumed.notice == (f"the session's directory {tmp_path}/loop cannot be examined: {LOOP}; working in the "
                              f"current directory {here} instead")


def test_an_acp_cwd_that_cannot_be_examined_says_why(tmp_path):
    from agent_forge.modes.acp.protocol import AcpError
    from agent_forge.modes.acp.sessions import absolute_dir

    os.symlink("loop", tmp_path / "loop")
    (tmp_path / "file").write_text("x")
    for name, reason in (("loop", f"cannot be examined: {LOOP}"), ("file", "is not a directory"),
                         ("missing", "does not exist")):
        try:
            absolute_dir(str(tmp_path / name))
        except AcpError as exc:
            assert exc.message == f'Invalid params: "cwd" {tmp_path}/{name} {reason}'
        else:
            raise AssertionError(f"{name} was taken as a directory")


def test_a_looping_project_mcp_file_counts_as_one(tmp_path):
    """An untrusted project's looping `mcp.json` was no file at all: its "skipped" notice was not given."""
    from agent_forge.coding.mcp.config import has_project_file, project_file

    project_file(str(tmp_path)).parent.mkdir(parents=True)
    os.symlink("mcp.json", project_file(str(tmp_path)))
    assert has_project_file(str(tmp_path), tmp_path / "agent")


def test_a_relative_path_argument_that_is_a_link_loop_is_anchored_before_changing_directory(tmp_path):
    from agent_forge.cli import _anchored

    os.symlink("loop", tmp_path / "loop")
    assert _anchored("loop", str(tmp_path)) == str(tmp_path / "loop")
    assert _anchored("plain words", str(tmp_path)) == "plain words"


def test_a_bare_session_name_that_is_a_link_loop_is_named_like_its_path(agent_env, fake_llm, tmp_path):
    """`--session loop` was looked up as a session id ("No session found matching 'loop'")."""
    os.symlink("loop", tmp_path / "loop")
    for reference in ("loop", "./loop"):
        done = run(["--session", reference, "-p", "hi"], agent_env, tmp_path)
        shown = reference.removeprefix("./")
        assert (done.returncode, done.stderr) == (1, f"agent-forge: cannot read session file {shown}: {LOOP}\n")
    assert fake_llm.requests == []
