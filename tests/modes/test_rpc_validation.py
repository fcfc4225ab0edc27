"""modes/rpc/validation.py: every RPC field check, with the exact error strings clients see, in one module."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_forge.modes.rpc import framing
from agent_forge.modes.rpc.types import COMMANDS
from agent_forge.modes.rpc.validation import command_problem, type_problem, usable_fields

pytestmark = pytest.mark.usefixtures("json_backend")  # the JSON codec rules hold on both backends


PNG = "iVBORw0KGgo="


def _decoded(line: str) -> dict:
    return framing.decode(line.encode())


@pytest.mark.parametrize("command, error", [
    ({"type": "prompt"}, "Missing required field: message"),
    ({"type": "prompt", "message": None}, "Missing required field: message"),
    ({"type": "prompt", "message": 5}, "Field 'message' must be a string"),
    ({"type": "prompt", "message": "hi", "images": {}}, "Field 'images' must be an array"),
    ({"type": "set_auto_retry", "enabled": 1}, "Field 'enabled' must be a boolean"),
    ({"type": "set_context_window", "contextWindow": True}, "Field 'contextWindow' must be a string or a number"),
    ({"type": "set_context_window", "contextWindow": []}, "Field 'contextWindow' must be a string or a number"),
    ({"type": "get_tree", "flat": "yes"}, "Field 'flat' must be a boolean"),
    ({"type": "prompt", "message": "hi", "streamingBehavior": "later"},
     "Field 'streamingBehavior' must be 'steer' or 'followUp'"),
    ({"type": "steer", "message": "hi", "images": ["x"]},
     "Field 'images[0]' must be an image: {type: \"image\", data, mimeType}"),
    ({"type": "follow_up", "message": "hi", "images": [{"type": "image", "data": PNG, "mimeType": "image/png"},
                                                       {"type": "image", "data": PNG, "mimeType": "image/bmp"}]},
     "Field 'images[1].mimeType' must be one of image/png, image/jpeg, image/gif, image/webp"),
    ({"type": "prompt", "message": "hi", "images": [{"type": "image", "data": "not base64!", "mimeType": "image/png"}]},
     "Field 'images[0].data' must be base64-encoded image data: the image data is not valid base64"),
    ({"type": "prompt", "message": "hi", "images": [{"type": "image", "data": "", "mimeType": "image/png"}]},
     "Field 'images[0].data' must be base64-encoded image data: the image data is empty"),
    ({"type": "prompt", "message": "hi", "images": [{"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}]},
     "Field 'images[0].data' must be base64-encoded image data: the data is not of type image/png"),
    ({"type": "steer", "message": "hi", "images": [{"type": "image", "data": PNG, "mimeType": "image/gif"}]},
     "Field 'images[0].data' must be base64-encoded image data: the data is not of type image/gif (it is image/png)"),
    ({"type": "bash"}, "Missing required field: command"),
    ({"type": "bash", "command": " \n"}, "Field 'command' must not be empty"),
    ({"type": "bash", "command": "echo a\0b"}, "Field 'command' must not contain NUL characters"),
    ({"type": "bash", "command": "echo \ud800"}, "Field 'command' is not valid Unicode text"),
    ({"type": "bash", "command": "echo", "excludeFromContext": "yes"}, "Field 'excludeFromContext' must be a boolean"),
])
def test_each_problem_is_answered_in_the_protocols_words(command, error):
    assert command_problem(command) == error


@pytest.mark.parametrize("command", [
    {"type": "prompt", "message": "", "streamingBehavior": "followUp",
     "images": [{"type": "image", "data": PNG, "mimeType": "image/png"}]},
    {"type": "prompt", "message": "hi", "streamingBehavior": None, "images": None},
    {"type": "steer", "message": "hi", "images": []},
    {"type": "bash", "command": "echo é", "excludeFromContext": False},
    {"type": "set_context_window", "contextWindow": "200k"},
    {"type": "get_state", "unknownField": [1, {"x": None}]},
])
def test_well_formed_commands_pass_even_when_their_meaning_is_for_the_session_to_judge(command):
    assert command_problem(command) is None  # e.g. the empty prompt with an image, "200k"


def test_checks_run_in_order_spec_before_values():
    assert command_problem({"type": "prompt", "message": 1, "streamingBehavior": "x"}) == \
        "Field 'message' must be a string"
    assert command_problem({"type": "prompt", "message": "hi", "streamingBehavior": "x", "images": ["x"]}) == \
        "Field 'streamingBehavior' must be 'steer' or 'followUp'"


def test_an_unusable_value_in_a_spec_field_is_named_and_one_elsewhere_is_dropped():
    command = _decoded('{"id": 1e999, "type": "set_context_window", "contextWindow": 1e999}')
    assert command_problem(command) == "Field 'contextWindow': number 1e999 is out of range"
    command = _decoded('{"id": 7, "type": "get_state", "junk": 1e999}')
    assert command_problem(command) is None and command == {"id": 7, "type": "get_state"}
    command = _decoded('{"id": 1e999, "type": "get_state"}')
    assert command_problem(command) is None and "id" in command  # echoed as sent, never checked


def test_the_type_field():
    assert type_problem("prompt") is None
    assert type_problem(None) == "Missing required field: type"
    assert type_problem(3) == "Field 'type' must be a string"
    assert type_problem(_decoded('{"type": 1e999}')["type"]) == "Field 'type': number 1e999 is out of range"


def test_dialog_answers_lose_their_unusable_fields():
    answer = _decoded('{"type": "extension_ui_response", "id": "a", "value": 1e999, "confirmed": true}')
    assert usable_fields(answer) == {"type": "extension_ui_response", "id": "a", "confirmed": True}


def test_every_command_with_fields_is_covered_by_the_spec_check():
    for kind, spec in COMMANDS.items():
        for name, (_, required) in spec.items():
            if required:
                fields = {n: "x" for n, (t, _) in spec.items() if n != name and t in ("string", "string|number")}
                assert command_problem({"type": kind, **fields, name: None}) == f"Missing required field: {name}"


SRC = Path(__file__).resolve().parents[2] / "src" / "agent_forge"


def test_field_errors_are_worded_only_in_the_validation_module():
    """The session (coding layer) checks meaning in its own words; only validation.py speaks of RPC fields."""
    speakers = sorted(str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
                      if "Field '" in path.read_text() or "Missing required field" in path.read_text())
    assert speakers == ["modes/rpc/validation.py"]
