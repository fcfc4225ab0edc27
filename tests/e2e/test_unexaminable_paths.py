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
