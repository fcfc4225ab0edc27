"""Regular expressions compiled at their first use: a module-level pattern costs nothing at import (issue 15: a
resumed session's first `get_state` compiled 18 patterns it never used, ~1 ms).

    _CONTROL = LazyPattern(r"[\x00-\x1f]")
    _CONTROL.search(text)  # compiled here, once; later calls go straight to the compiled pattern's method

Kept by the pattern object itself, not left to `re`'s module cache: a process that uses many patterns (tests,
the grep tool) evicts from that cache, and a pattern evicted is compiled again at its next use.
"""

from __future__ import annotations

import re
from typing import Any

_METHODS = ("search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer")


class LazyPattern:
    """A `re.Pattern` of `pattern` and `flags`, compiled at the first read of one of its methods or attributes
    (`search`, `sub`, `groups`, ...); `pattern` and `flags` are readable before. Raises `re.error` there, not at
    import, for an invalid pattern."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags

    def __getattr__(self, name: str) -> Any:  # only for what the instance does not hold yet
        if name in ("pattern", "flags", "_compiled"):  # not set yet (a copy being made): nothing to compile
            raise AttributeError(name)
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self.flags)
            for method in _METHODS:  # bound once: later calls are plain attribute reads
                setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"
