"""Full-output directories (`coding/tools/output_files.py`): names, privacy, pruning rules."""

from __future__ import annotations

import json
import os
import time

import pytest

from agent_forge.coding.tools import output_files
from agent_forge.coding.tools.output_files import OutputDir, outputs_root, prune


@pytest.fixture(autouse=True)
def temp_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("session_id", ["../escape", "a/b", "..", ".", "", "x" * 300, "name with spaces"])
def test_unsafe_session_ids_stay_inside_the_root(session_id):
    directory = OutputDir(session_id, None)
    fd, path = directory.create_file()
    os.close(fd)
    assert os.path.dirname(path) == str(directory.path) and directory.path.parent == outputs_root()
    assert directory.path.name.startswith("id-")


def test_files_are_private_and_the_owner_is_recorded(tmp_path):
    directory = OutputDir("s1", str(tmp_path / "s1.jsonl"))
    fd, path = directory.create_file()
    os.close(fd)
    assert os.stat(path).st_mode & 0o077 == 0 and os.stat(directory.path).st_mode & 0o077 == 0
    owner = json.loads((directory.path / "owner.json").read_text())
    assert owner == {"sessionFile": str(tmp_path / "s1.jsonl"), "pid": os.getpid()}


def test_a_planted_link_at_the_root_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / f"agent-forge-{os.getuid()}").symlink_to(elsewhere)
    with pytest.raises(OSError, match="not a private directory"):
        OutputDir("s1", None).create_file()
    assert list(elsewhere.iterdir()) == []


def test_live_owner_keeps_a_directory_without_a_session_file_until_the_age_limit(tmp_path):
    directory = OutputDir("live", str(tmp_path / "not-written-yet.jsonl"))
    os.close(directory.create_file()[0])
    assert prune() == [] and directory.path.exists()
    old = time.time() + output_files.MAX_AGE_S + 60
    assert prune(now=old) == [directory.path] and not directory.path.exists()


def test_a_link_inside_a_session_directory_is_removed_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    directory = OutputDir("gone", None)
    os.close(directory.create_file()[0])
    (directory.path / "link").symlink_to(victim)
    (directory.path / "owner.json").write_text(json.dumps({"sessionFile": None, "pid": 0}))
    assert prune() == [directory.path]
    assert victim.read_text() == "precious"
