"""The working directory's files for the `@` search (`completion.FileCompleter`), kept fresh.

Walked as git sees the tree (`ignore_walk.walk`) breadth-first, so a list cut at `MAX_FILES` keeps the
shallow paths (a top-level file beside a directory of 20,000 files is still found), in a background thread:
typing never waits for a big tree except on the first `@` (at most `FIRST_WAIT_S`). The list is walked again
when it is older than `STALE_S` at a use (that use waits `FRESH_WAIT_S` for it, then takes the old list) and at
once after `refresh()` (each turn's end, a `!` command, `/reload`; a use meanwhile waits `FRESH_WAIT_S` for that
walk too): files the agent or a command created are offered."""

from __future__ import annotations

import threading
import time

from ...coding.tools.ignore_walk import walk

MAX_FILES = 20_000
STALE_S = 10.0
FIRST_WAIT_S = 2.0
FRESH_WAIT_S = 0.15


class FileIndex:
    """The file paths (relative, posix) under `cwd`; `truncated` tells whether the last walk stopped at
    `max_files`."""

    def __init__(self, cwd: str, max_files: int = MAX_FILES):
        self._cwd = cwd
        self.limit = max_files
        self._files: list[str] | None = None
        self.truncated = False
        self._walked_at = 0.0  # monotonic seconds when the last walk began
        self._thread: threading.Thread | None = None
        self._again = False  # a refresh asked for while a walk ran: walk once more after it

    def files(self) -> list[str]:
        """The list of the last finished walk; a stale list starts a walk and waits a little for it, as does a
        use while a refresh's walk runs (an `@` typed right after a turn looks for the file the turn made)."""
        if self._files is None or time.monotonic() - self._walked_at > STALE_S:
            thread = self._start()
            thread.join(FIRST_WAIT_S if self._files is None else FRESH_WAIT_S)
        elif (running := self._thread) is not None and running.is_alive():
            running.join(FRESH_WAIT_S)
        return self._files or []

    def refresh(self) -> None:
        """Walk again now, in the background, when the list was ever used (else the first use walks)."""
        if self._files is not None:
            self._again = self._thread is not None and self._thread.is_alive()
            self._start()

    def _start(self) -> threading.Thread:
        if self._thread is None or not self._thread.is_alive():
            self._walked_at = time.monotonic()
            self._thread = threading.Thread(target=self._walk, name="at-file-index", daemon=True)
            self._thread.start()
        return self._thread

    def _walk(self) -> None:
        files: list[str] = []
        truncated = False
        for path, is_dir in walk(self._cwd, breadth_first=True):
            if is_dir:
                continue
            if len(files) >= self.limit:
                truncated = True
                break
            files.append(path)
        self._files, self.truncated = files, truncated  # one assignment each: readers see old or new
        if self._again:
            self._again = False
            self._walked_at = time.monotonic()
            self._walk()
