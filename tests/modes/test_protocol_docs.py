"""docs/rpc.md lists exactly the commands and events of modes/rpc/types.py (each event with exactly the fields of
its TypedDict), and every command the docs mark "yes" has a handler."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, TypedDict, Union

import pytest

from agent_forge.agent.events import AgentEvent, AgentStart, MessageEnd, event_shapes
from agent_forge.coding.events import AgentSettled, SessionEvent
from agent_forge.modes.rpc.handlers import HANDLERS
from agent_forge.modes.rpc.types import COMMANDS, EVENT_SHAPES, EVENTS, BashExecutionUpdate

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


def _documented_fields(cell: str) -> tuple[dict[str, bool], bool]:
    """The top-level fields a row of the event table names (`name` required, `name?` optional; backquoted words
    inside parentheses describe a field and are not fields) and whether the row ends with `...` (more optional
    fields follow)."""
    outside = re.sub(r"\([^)]*\)", "", cell).split(";", 1)[0]
    fields = {name: not optional for name, optional in re.findall(r"`([A-Za-z]+)(\?)?`", outside)}
    return fields, outside.rstrip().endswith("...")


def _declared_fields(event: str) -> dict[str, bool]:
    shape = EVENT_SHAPES[event]
    return {name: name in shape.__required_keys__ for name in shape.__annotations__ if name != "type"}


@pytest.mark.parametrize("row", _table_rows("Events"), ids=lambda row: row[0].strip("`"))
def test_event_fields_match_their_typeddict_both_ways(row):
    """Each documented field is declared, required exactly when the docs do not mark it `?`; each declared field
    is documented, except optional ones of a row ending with `...`."""
    documented, open_ended = _documented_fields(row[1])
    declared = _declared_fields(row[0].strip("`"))
    if open_ended:
        declared = {name: required for name, required in declared.items() if required or name in documented}
    assert documented == declared


def test_the_event_table_is_derived_from_the_writers_types():
    writers = {**event_shapes(AgentEvent), **event_shapes(SessionEvent)}
    assert EVENT_SHAPES == {**writers, "bash_execution_update": BashExecutionUpdate}
    assert EVENT_SHAPES["message_end"] is MessageEnd and EVENT_SHAPES["agent_settled"] is AgentSettled
    assert set(event_shapes(AgentEvent)) <= set(event_shapes(SessionEvent))


def test_event_shapes_refuse_two_classes_for_one_type():
    class Twin(TypedDict):
        type: Literal["agent_start"]

    with pytest.raises(ValueError, match="agent_start"):
        event_shapes(Union[AgentStart, Twin])


SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"


def _seed_commands() -> set[str]:
    names: set[str] = set()
    for seed in SEEDS.glob("*.txt"):
        text = seed.read_text()
        commands = re.split(r"^\+?## Events", re.split(r"^\+?## Commands", text, flags=re.M)[1], flags=re.M)[0]
        names |= {m.replace("\\_", "_") for m in re.findall(r"^\+?#### ([a-z\\_]+)\s*$", commands, re.M)}
    return names


def test_every_seed_command_is_known():
    if not SEEDS.is_dir():
        pytest.skip("the seeds are not beside this checkout")
    seed_commands = _seed_commands()
    assert len(seed_commands) > 30
    assert seed_commands <= set(COMMANDS), seed_commands - set(COMMANDS)
