"""The shapes of the client's answers to the requests this agent sends (schema `*Response` of protocol version 1):
`checked(request)` wraps the connection's `request` so that every answer is checked before anyone reads it.

An answer of the wrong shape (`fs/write_text_file` answering `"garbage"`, `terminal/output` an `output` of 123) is
a `BadAnswer`: an `AcpError` whose message names the method and the problem, so a tool call fails with it (the
tools tell it apart from the client's own error answers, which for a read fall back to the disk). Fields this
agent does not read are not checked; `_meta` and unknown fields are allowed, as the schema allows them.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from .protocol import INTERNAL_ERROR, AcpError, client_text

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
Check = Callable[[Any], "str | None"]


class BadAnswer(AcpError):
    """The client answered `method` with a result of the wrong shape (`problem`)."""

    def __init__(self, method: str, problem: str):
        super().__init__(INTERNAL_ERROR, f"the editor's answer to {method} is malformed: {problem}")
        self.method, self.problem = method, problem


def checked(request: Request) -> Request:
    """`request` whose results are checked against `SHAPES`: raises `BadAnswer` for a wrong one, and `AcpError`
    as `request` does for an error answer."""

    async def ask(method: str, params: dict[str, Any]) -> Any:
        answer = await request(method, params)
        check = SHAPES.get(method)
        problem = check(answer) if check is not None else None
        if problem is not None:
            raise BadAnswer(method, problem)
        return answer

    return ask


def _object(answer: Any) -> str | None:
    """An empty-result method's answer: an object (null too: SDKs send it for a handler returning nothing)."""
    return None if answer is None or isinstance(answer, dict) else f"expected an object, got {_kind(answer)}"


def _fields(**expected: tuple[Callable[[Any], bool], str, bool]) -> Check:
    """An object whose fields pass their tests: name -> (test, what it must be, required)."""

    def check(answer: Any) -> str | None:
        if not isinstance(answer, dict):
            return f"expected an object, got {_kind(answer)}"
        for name, (test, must_be, required) in expected.items():
            if name not in answer:
                if required:
                    return f'"{name}" is missing'
                continue
            if not test(answer[name]):
                return f'"{name}" must be {must_be}, got {_kind(answer[name])}'
        return None

    return check


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _exit_code(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def _str_or_null(value: Any) -> bool:
    return value is None or isinstance(value, str)


_EXIT = _fields(exitCode=(_exit_code, "a non-negative integer or null", False),
                signal=(_str_or_null, "a string or null", False))


def _exit_status(value: Any) -> bool:
    return value is None or _EXIT(value) is None


def _permission(answer: Any) -> str | None:
    problem = _fields(outcome=(lambda v: isinstance(v, dict), "an object", True))(answer)
    if problem is not None:
        return problem
    outcome = answer["outcome"]
    if outcome.get("outcome") == "cancelled":
        return None
    if outcome.get("outcome") != "selected":
        return '"outcome.outcome" must be "selected" or "cancelled"'
    return None if isinstance(outcome.get("optionId"), str) else '"outcome.optionId" must be a string'


def _elicitation(answer: Any) -> str | None:
    problem = _fields(action=(_is_str, "a string", True))(answer)  # unknown actions are future ones: no answer
    if problem is None and answer["action"] == "accept" and not isinstance(answer.get("content"), (dict, type(None))):
        return f'"content" must be an object, got {_kind(answer["content"])}'
    return problem


SHAPES: dict[str, Check] = {
    "fs/read_text_file": _fields(content=(_is_str, "a string", True)),
    "fs/write_text_file": _object,
    "terminal/create": _fields(terminalId=(_is_str, "a string", True)),
    "terminal/output": _fields(output=(_is_str, "a string", True), truncated=(_is_bool, "a boolean", True),
                               exitStatus=(_exit_status, "an exit status object or null", False)),
    "terminal/wait_for_exit": _EXIT,
    "terminal/kill": _object,
    "terminal/release": _object,
    "session/request_permission": _permission,
    "elicitation/create": _elicitation,
}
"""Every client method this agent calls, with the check of its answer."""


def _kind(value: Any) -> str:
    """What `value` is, for a message: its JSON type and a short escaped preview."""
    names = {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "an array",
             dict: "an object", type(None): "null"}
    kind = names.get(type(value), type(value).__name__)
    return kind if isinstance(value, (dict, list, type(None))) else f"{kind} {client_text(repr(value), 40)}"
