"""The ACP server's answer to a request that raised: a refused user path is invalid params naming the path on one
line, anything else an internal error."""

from __future__ import annotations

import errno

from agent_forge.modes.acp.protocol import INTERNAL_ERROR, INVALID_PARAMS
from agent_forge.modes.acp.server import _failure


def test_an_os_error_naming_a_file_is_invalid_params_with_the_path_on_one_line():
    name = "/tmp/" + "x" * 300 + "\nnext"
    error = _failure(OSError(errno.ENAMETOOLONG, "File name too long", name))
    assert error.code == INVALID_PARAMS
    assert "File name too long" in error.message and "\n" not in error.message and "\\n" in error.message


def test_any_other_exception_is_an_internal_error_naming_its_type():
    error = _failure(ValueError("boom"))
    assert error.code == INTERNAL_ERROR and error.message == "Internal error: ValueError: boom"
    assert _failure(OSError("no file named")).code == INTERNAL_ERROR
