"""`file_of_id` (ACP `session/load`, and the rule `--session <id>` follows): files sharing one session id open
the one named after it, not the newest copy."""

from __future__ import annotations

import json
import os
import shutil

from agent_forge.coding.session.listing import file_of_id, list_sessions, session_cwd_dir


def test_the_file_named_after_the_id_wins_over_a_newer_copy(tmp_path):
    cwd, sessions = tmp_path / "proj", tmp_path / "sessions"
    cwd.mkdir()
    directory = session_cwd_dir(cwd, sessions)
    directory.mkdir(parents=True)
    header = {"type": "session", "version": 3, "id": "abc-1", "timestamp": "2026-12-02T05:00:00.000Z",
              "cwd": str(cwd)}
    original = directory / "2026-12-02T05-00-00-000Z_abc-1.jsonl"
    original.write_text(json.dumps(header) + "\n")
    copy = directory / f"{original.name}.recovered-20261202T055203Z.jsonl"
    shutil.copy(original, copy)
    os.utime(original, (1_000_000, 1_000_000))  # the copy is the newest file
    infos = list_sessions(cwd, sessions)
    assert infos[0].path == copy
    assert file_of_id(infos, "abc-1") == original
    assert file_of_id(infos, "abc") is None
    copy.unlink()
    assert file_of_id(list_sessions(cwd, sessions), "abc-1") == original
