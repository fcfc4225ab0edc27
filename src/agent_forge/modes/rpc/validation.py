"""Every check of an RPC command's JSON fields, made before its handler runs (docs/rpc.md, "Responses").

The server asks `command_problem` once per command of a known `type`; a problem is answered as the command's
error response and the handler never runs, so handlers read fields without checking them. In order:
1. a field of the command's spec holding an unusable value (`framing.BadValue`: a number out of range, ...)
   is `Field '<name>': <reason>`; such values in other fields are dropped, as unknown fields are ignored;
2. the spec (`types.COMMANDS`): `Missing required field: <name>`, `Field '<name>' must be a string` (`a number`,
   `a boolean`, `an array`, `an object`, `a string or a number`); `null` counts as absent;
3. the values a few commands need well formed: `streamingBehavior`, `images`, a `bash` `command`, and the path
   fields (`outputPath`, `sessionPath`: no NUL character).
The strings are the protocol's: clients and tests match them, so they change only with docs/rpc.md. What the
values mean (an unknown model, an empty prompt, a blank session name) is the session's to check, in its words.
"""

from __future__ import annotations

from typing import Callable

from ...coding.tools.file_kinds import IMAGE_TYPES, image_data_problem
from . import framing
from .types import COMMANDS

"""The image media types every supported provider API accepts."""

STREAMING_BEHAVIORS = ("steer", "followUp")

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "boolean": (bool,), "array": (list,), "object": (dict,),
    "string|number": (str, int, float),
}


def type_problem(kind: object) -> str | None:
    """The error for a record whose `type` is not a string (None when it is one): the response then names the
    command `unknown`."""
    if isinstance(kind, str):
        return None
    if kind is None:
        return "Missing required field: type"
    bad = framing.bad_value(kind)
    return f"Field 'type': {bad.reason}" if bad else "Field 'type' must be a string"


def command_problem(command: dict[str, object]) -> str | None:
    """The first problem with the fields of `command` (whose `type` is in `COMMANDS`) as its error message, or
    None when it is well formed. Drops unusable values outside the spec from `command` (in place)."""
    return _unusable_field(command) or spec_problem(command) or _VALUE_CHECKS.get(command["type"], _fine)(command)


def spec_problem(command: dict[str, object]) -> str | None:
    """Presence and JSON type of each field in the command's spec (step 2 above)."""
    for name, (json_type, required) in COMMANDS[command["type"]].items():
        if name not in command or command[name] is None:
            if required:
                return f"Missing required field: {name}"
            continue
        if not _type_ok(command[name], json_type):
            return f"Field '{name}' must be {_article(json_type)}"
    return None


def usable_fields(message: dict[str, object]) -> dict[str, object]:
    """`message` without the fields holding an unusable value (framing.BadValue): plugins never see one."""
    return {name: value for name, value in message.items() if framing.bad_value(value) is None}


def _unusable_field(command: dict[str, object]) -> str | None:
    """Step 1 above. The `id` is only echoed, and written back as sent, so it is never checked."""
    spec = COMMANDS[command["type"]]
    for name in list(command):
        bad = framing.bad_value(command[name]) if name != "id" else None
        if bad is None:
            continue
        if name in spec:
            return f"Field '{name}': {bad.reason}"
        del command[name]
    return None


def _type_ok(value: object, json_type: str) -> bool:
    if isinstance(value, bool) and json_type != "boolean":
        return False  # JSON true/false are not numbers even though Python's bool is an int
    return isinstance(value, _JSON_TYPES[json_type])


def _article(json_type: str) -> str:
    if json_type == "string|number":
        return "a string or a number"
    return ("an " if json_type[0] in "aeiou" else "a ") + json_type


# -- values (step 3) ------------------------------------------------------------------------------------


def _fine(command: dict[str, object]) -> None:
    return None


def _prompt_problem(command: dict[str, object]) -> str | None:
    behavior = command.get("streamingBehavior")
    if behavior is not None and behavior not in STREAMING_BEHAVIORS:
        return "Field 'streamingBehavior' must be 'steer' or 'followUp'"
    return images_problem(command)


def images_problem(command: dict[str, object]) -> str | None:
    """Each of `images` (an array by then) must be an ImageContent `{type: "image", data: base64, mimeType}` that
    passes `image_data_problem` (a supported type, strict base64, magic bytes of that type, size cap). A bad
    image is refused here: once in the conversation it would make every later request fail."""
    for i, image in enumerate(command.get("images") or []):
        if not (isinstance(image, dict) and image.get("type") == "image" and isinstance(image.get("data"), str)
                and isinstance(image.get("mimeType"), str)):
            return f"Field 'images[{i}]' must be an image: {{type: \"image\", data, mimeType}}"
        if image["mimeType"] not in IMAGE_TYPES:
            return f"Field 'images[{i}].mimeType' must be one of {', '.join(IMAGE_TYPES)}"
        problem = image_data_problem(image["data"], image["mimeType"])
        if problem:
            return f"Field 'images[{i}].data' must be base64-encoded image data: {problem}"
    return None


def _bash_problem(command: dict[str, object]) -> str | None:
    """A `command` that no shell could be given as an argument."""
    text: str = command["command"]
    if not text.strip():
        return "Field 'command' must not be empty"
    if "\0" in text:
        return "Field 'command' must not contain NUL characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from JSON escapes cannot become an argv entry
        return "Field 'command' is not valid Unicode text"
    return None


def _path_problem(name: str) -> Callable[[dict[str, object]], str | None]:
    """A check of the path field `name`: no file name holds a NUL, and the OS's error (`embedded null byte`)
    would not say which field was wrong. (Lone surrogates never get here: `framing.decode` replaces them.)"""
    def check(command: dict[str, object]) -> str | None:
        text = command.get(name)
        if not isinstance(text, str):
            return None
        return f"Field '{name}' must not contain NUL characters" if "\0" in text else None

    return check


_VALUE_CHECKS: dict[str, Callable[[dict[str, object]], str | None]] = {
    "prompt": _prompt_problem, "steer": images_problem, "follow_up": images_problem, "bash": _bash_problem,
    "export_html": _path_problem("outputPath"), "switch_session": _path_problem("sessionPath"),
}
