"""docs/rpc.md lists exactly the commands and events of modes/rpc/types.py, and every command the docs mark
"yes" has a handler."""

from __future__ import annotations

import re
from pathlib import Path

from agent_forge.modes.rpc.handlers import HANDLERS
from agent_forge.modes.rpc.types import COMMANDS, EVENTS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "rpc.md").read_text()


def _table_rows(heading: str) -> list[list[str]]:
    section = DOC.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def test_command_table_matches_protocol_types():
    documented = [re.sub(r"`", "", row[0]) for row in _table_rows("Commands")]
    assert sorted(documented) == sorted(COMMANDS)


def test_commands_marked_yes_have_handlers():
    for row in _table_rows("Commands"):
        name = row[0].strip("`")
        assert (row[-1] == "yes") == (name in HANDLERS), name


def test_event_table_matches_protocol_types():
    documented = [row[0].strip("`") for row in _table_rows("Events")]
    assert sorted(documented) == sorted(EVENTS)


SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"


def _seed_commands() -> set[str]:
    names: set[str] = set()
    for seed in SEEDS.glob("*.txt"):
        text = seed.read_text()
        commands = re.split(r"^\+?## Events", re.split(r"^\+?## Commands", text, flags=re.M)[1], flags=re.M)[0]
        names |= {m.replace("\\_", "_") for m in re.findall(r"^\+?#### ([a-z\\_]+)\s*$", commands, re.M)}
    return names


def test_every_seed_command_is_known():
    import pytest

    if not SEEDS.is_dir():
        pytest.skip("the seeds are not beside this checkout")
    seed_commands = _seed_commands()
    assert len(seed_commands) > 30
    assert seed_commands <= set(COMMANDS), seed_commands - set(COMMANDS)
