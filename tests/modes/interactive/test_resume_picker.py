"""`/resume` lists every session file of the directory: a recovery copy is marked, and files that share one
session id (a `cp` copy) keep separate entries (their labels were equal, so one replaced the other)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

from agent_forge.coding.session.listing import session_cwd_dir
from agent_forge.modes.interactive.session_commands import SessionCommands


def write_session(directory: Path, name: str, header: dict, text: str) -> Path:
    path = directory / name
    message = {"type": "message", "id": "a1b2c3d4", "parentId": None, "timestamp": header["timestamp"],
               "message": {"role": "user", "content": text, "timestamp": 1}}
    path.write_text(json.dumps(header) + "\n" + json.dumps(message) + "\n")
    return path


def test_the_picker_marks_recovery_copies_and_keeps_files_sharing_an_id(tmp_path):
    cwd, sessions = tmp_path / "proj", tmp_path / "sessions"
    cwd.mkdir()
    directory = session_cwd_dir(cwd, sessions)
    directory.mkdir(parents=True)
    base = {"type": "session", "version": 3, "timestamp": "2026-12-02T05:00:00.000Z", "cwd": str(cwd)}
    current = write_session(directory, "c_cur.jsonl", {**base, "id": "cur"}, "current")
    original = write_session(directory, "t_orig-1.jsonl", {**base, "id": "orig-1"}, "hello")
    shutil.copy(original, directory / "t_orig-1.jsonl.recovered-20261202T055203Z.jsonl")
    write_session(directory, "t_new-2.jsonl.recovered-x.jsonl",
                  {**base, "id": "new-2", "recoveredFrom": "orig-1", "parentSession": str(original)}, "hello")
    opened: list[dict] = []
    ui = SimpleNamespace(session=SimpleNamespace(store=SimpleNamespace(path=current), cwd=str(cwd),
                                                 switching=SimpleNamespace(session_dir=sessions)),
                         dialogs=SimpleNamespace(open=lambda request, reply: opened.append(request)),
                         terminal=SimpleNamespace(columns=lambda: 100))
    asyncio.run(SessionCommands(ui).resume(""))
    [request] = opened
    options = request["options"]
    assert len(options) == 3
    assert sum("(recovered copy of orig-1) hello" in option for option in options) == 1
    assert sum(option.endswith("· t_orig-1.jsonl.recovered-20261202T055203Z.jsonl")
               or option.endswith("· t_orig-1.jsonl") for option in options) == 1


def test_a_first_message_with_escapes_is_cut_as_the_picker_shows_it():
    from datetime import datetime, timezone

    from agent_forge.modes.interactive.graphemes import cells
    from agent_forge.modes.interactive.render import clean
    from agent_forge.modes.interactive.session_commands import _label

    info = SimpleNamespace(modified=datetime(2026, 12, 2, tzinfo=timezone.utc), message_count=1, id="abcdef123456",
                           recovered_from=None, name=None, first_message="\x1b[2J\tcleared " * 40)
    label = _label(info, 80)
    assert label.startswith("\\x1b[2J cleared \\x1b[2J")  # the escapes as text, the tab a space
    assert cells(clean(label)) <= 80 - 4  # the dialog's margin: measured as drawn, escapes shown as text
