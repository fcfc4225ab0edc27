"""Opening a session checks each message for the context while its line is parsed (`sharing.shared_and_checked`:
one walk of the content blocks shares the repeated strings and proves the usual shapes sound). That walk must
decide exactly as `context_message` does, for every shape a hand-edited file may hold, and share exactly what
`share_strings` shares; the checks are used only where they still hold (not after a migration, nor when lines
were left out)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_forge.coding.session.reading import read_session
from agent_forge.coding.session.shapes import context_message, repaired
from agent_forge.coding.session.sharing import NOT_A_MESSAGE, share_strings, shared_and_checked
from agent_forge.coding.session.store import SessionStore

ODD = st.one_of(st.none(), st.booleans(), st.integers(-2, 2**70), st.floats(allow_nan=True), st.text(max_size=3),
                st.just([]), st.just({}), st.just([1]))
"""Values of every JSON type (and NaN, past-64-bit integers): what a hand edit puts where a field was."""

BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(st.text(max_size=5), ODD)}),
    st.fixed_dictionaries({"type": st.just("toolCall"), "id": st.one_of(st.just("c1"), ODD),
                           "name": st.one_of(st.just("read"), ODD), "arguments": st.one_of(st.just({"p": 1}), ODD)},
                          optional={"extra": ODD}),
    st.fixed_dictionaries({"type": st.sampled_from(["thinking", "image", "other"])},
                          optional={"thinking": ODD, "data": ODD, "mimeType": ODD}),
    st.fixed_dictionaries({}, optional={"type": ODD, "text": ODD}),
    ODD,
)

MESSAGE = st.fixed_dictionaries(
    {"role": st.one_of(st.sampled_from(["user", "assistant", "toolResult", "bashExecution", "custom",
                                        "compactionSummary", "nobody"]), ODD)},
    optional={"content": st.one_of(st.lists(BLOCK, max_size=3), st.text(max_size=3), ODD),
              "toolCallId": st.one_of(st.just("c1"), ODD), "timestamp": st.one_of(st.just(5), ODD),
              "usage": st.one_of(st.just({"input": 1, "cost": {"total": 0.5}}), st.just({"cost": {"total": "x"}}),
                                 st.just({"output": 1.5}), ODD),
              "stopReason": st.one_of(st.just("stop"), ODD), "provider": st.one_of(st.just("p"), ODD),
              "model": st.one_of(st.just("m"), ODD), "api": ODD, "toolName": st.one_of(st.just("read"), ODD),
              "command": ODD, "output": ODD, "summary": ODD, "customType": ODD})


@settings(max_examples=400, deadline=None)
@given(message=st.one_of(MESSAGE, ODD), kind=st.sampled_from(["message", "custom", 7]))
def test_the_walk_while_parsing_decides_as_context_message_and_shares_as_share_strings(message, kind):
    entry = {"type": kind, "id": "e1", "parentId": None, "message": message}
    expected_entry = copy.deepcopy(entry)
    share_strings(expected_entry, {})
    expected = context_message(expected_entry["message"]) if kind == "message" else NOT_A_MESSAGE

    unrepaired: list[object] = []
    result = shared_and_checked(entry, {}, unrepaired)

    assert repr(entry) == repr(expected_entry)  # repr: NaN compares unequal to itself
    if unrepaired:  # the usual shape: the message itself, its optional fields checked by `repaired` later
        assert unrepaired == [result] and result is entry["message"]
        result = repaired([result], unrepaired)[0]
    if expected is expected_entry["message"]:
        assert result is entry["message"]  # sound: the message itself, no copy
    else:
        assert repr(result) == repr(expected)


def test_shared_strings_are_one_object(tmp_path: Path) -> None:
    shared: dict[str, str] = {}
    entries = [json.loads(json.dumps({"type": "message", "message": {
        "role": "assistant", "provider": "p", "content": [{"type": "toolCall", "id": "c", "name": "read",
                                                           "arguments": {}}]}})) for _ in range(2)]
    for entry in entries:
        shared_and_checked(entry, shared, [])
    first, second = (entry["message"] for entry in entries)
    assert entries[0]["type"] is entries[1]["type"] and first["role"] is second["role"]
    assert first["content"][0]["type"] is second["content"][0]["type"]


def write(path: Path, lines: list[dict | str]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/p"}


def message_entry(i: int, message: object) -> dict:
    return {"type": "message", "id": f"e{i}", "parentId": f"e{i - 1}" if i else None, "timestamp": "t",
            "message": message}


def test_the_checks_line_up_with_the_entries_only_when_they_still_hold(tmp_path: Path) -> None:
    sound = {"role": "user", "content": "hi", "timestamp": 1}
    plain = read_session(write(tmp_path / "a.jsonl", [HEADER, message_entry(0, sound), message_entry(1, 42)]))
    assert plain.checks == [plain.entries[0]["message"], None]
    damaged = read_session(write(tmp_path / "b.jsonl", [HEADER, message_entry(0, sound), "garbage",
                                                        message_entry(1, sound)]))
    assert damaged.checks is not None and len(damaged.checks) == len(damaged.entries)  # garbage is no object
    for name, odd in (("c", message_entry(0, 42)), ("e", {"type": "message"})):  # a repeated id, no id
        left_out = read_session(write(tmp_path / f"{name}.jsonl", [HEADER, message_entry(0, sound), odd]))
        assert left_out.checks is None  # an object was left out: the checks no longer line up
    old = read_session(write(tmp_path / "d.jsonl", [{**HEADER, "version": 2}, message_entry(0, sound)]))
    assert old.migrated_from == 2 and old.checks is None


def test_a_file_with_lines_left_out_opens_with_the_context_checked_anew(tmp_path: Path) -> None:
    sound = {"role": "user", "content": "hi", "timestamp": 1}
    path = write(tmp_path / "s.jsonl", [HEADER, message_entry(0, sound), message_entry(0, sound),
                                        message_entry(1, {"role": "user", "content": 42}),
                                        message_entry(2, {**sound, "timestamp": "late"})])
    store = SessionStore.open(path)
    assert [m["timestamp"] for m in store.build_context().messages] == [1, 0]  # 42 left out, "late" repaired
    assert sorted(line for warning in store.load_warnings for line in warning.lines) == [3, 4]


def test_optional_fields_of_a_file_just_opened_are_repaired_by_the_first_full_context(tmp_path: Path) -> None:
    """The walk leaves a usual-shaped message's optional fields unchecked: `build_context(repair=False)` (the
    early `get_state`'s count) has it as read; every other context has it repaired, as `context_message` does."""
    odd = {"role": "assistant", "content": [{"type": "text", "text": "a"}], "timestamp": "late",
           "usage": {"input": "many"}, "provider": 5}
    path = write(tmp_path / "s.jsonl", [HEADER, message_entry(0, {"role": "user", "content": "q", "timestamp": 1}),
                                        message_entry(1, odd)])
    store = SessionStore.open(path)
    assert store.build_context(repair=False).messages[1]["timestamp"] == "late"  # counted, not yet repaired
    messages = store.build_context().messages
    assert messages[1] == {"role": "assistant", "content": [{"type": "text", "text": "a"}], "timestamp": 0}
    assert messages[0]["timestamp"] == 1 and store.build_context().messages == messages
    assert store.entries[1]["message"]["timestamp"] == "late"  # the entry is as the file holds it
