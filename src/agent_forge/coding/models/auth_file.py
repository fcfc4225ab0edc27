"""Stored provider credentials: `<agent dir>/auth.json`.

`auth.json` keeps the reference agent's schema so users can bring theirs:
`{"<provider>": {"type": "api_key", "key": "<key value>"}, ...}` (a key value as in `key_values`). Other
credential types (`oauth`, ...) are kept and returned by `get` untouched, but yield no API key here. A
`!command` key runs at most once per process: its outcome, failure included, is cached (the reference
agent's documented behaviour).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypedDict

from ..paths import path_text, sync_dir
from ..errors import AuthFileError, ConfigFileError
from ..safe_read import read_json_document
from .key_values import (
    KeyLookup,
    KeyOutcome,
    is_key_command,
    key_value_configured,
    key_value_lookup,
    resolve_literal,
    run_lookup,
    run_lookup_async,
)

Credential = dict[str, object]
"""One provider's `auth.json` entry: `{"type": "api_key", "key": "<key value>"}`, or another type."""


# The functional form: the class form would hold the field types as text here and compile each at import.
ApiKeyCredential = TypedDict("ApiKeyCredential", {"type": str, "key": str})
ApiKeyCredential.__doc__ = """An `auth.json` entry of type `api_key`: `key` is a key value (`key_values`)."""


API_KEY_FIELDS = (*ApiKeyCredential.__required_keys__,)
"""The fields an `api_key` entry may hold; any other is warned of and ignored."""


class AuthStorage:
    """Read and write `auth.json`; the file is re-read whenever it changes on disk.

    `get`/`providers` raise nothing: an unreadable or invalid file reads as empty and its problem is in
    `error`; an entry of the wrong shape (`credential_problem`) is ignored and reported in `problems`; a
    provider written twice (the last entry is used, as JSON has it) and an `api_key` entry's unknown field (a
    typo such as `"kye"`: ignored) are reported in `notes`.
    `set`/`remove` raise `AuthFileError` rather than overwrite a file they could not parse, and `OSError` when
    the directory is not writable. Writes go to a 0600 temporary file renamed over the original, so a crash
    leaves either the old or the new file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.error: str | None = None
        self.problems: dict[str, str] = {}  # provider -> `<path>:<line>: <provider>: <problem>; ignored`
        self.notes: list[str] = []  # `<path>:<line>: duplicate key "<provider>" ...`, `...: unknown key ...`
        self._data: dict[str, object] = {}
        self._stamp: tuple[int, int] | None = None
        self._key_cache: dict[str, KeyOutcome] = {}

    def get(self, provider: str) -> Credential | None:
        """The stored credential dict for `provider` (`{"type": "api_key", "key": ...}` or another type)."""
        cred = self._load().get(provider)
        return dict(cred) if isinstance(cred, dict) else None

    def providers(self) -> list[str]:
        """Providers with a stored credential, in file order."""
        return [name for name, cred in self._load().items() if isinstance(cred, dict)]

    def warnings(self) -> list[str]:
        """What is wrong with the file now, for the start-up warnings: `[error]` for a file that cannot be
        used at all, else one `<path>:<line>: <provider>: <problem>; ignored` per unusable entry, then the
        `notes` (`<path>:<line>: duplicate key ...`, `<path>:<line>: <provider>: unknown key ...; ignored`)."""
        self._load()
        return [self.error] if self.error else [*self.problems.values(), *self.notes]

    def unusable_reason(self, provider: str) -> str | None:
        """Why `auth.json` gives `provider` nothing although it may hold its key (the file's error, or the
        entry's problem, without the path: `line 2: anthropic: ...`), for the no-key error; None when the
        file and the entry are fine or absent."""
        self._load()
        reason = self.error or self.problems.get(provider)
        return None if reason is None else self._without_path(reason)

    def file_problem(self) -> str | None:
        """The file's first problem without the path (as `unusable_reason`), with how many more there are;
        None for a sound (or absent) file. For messages saying no provider has a key."""
        warnings = self.warnings()
        if not warnings:
            return None
        more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
        return self._without_path(warnings[0]) + more

    def _without_path(self, reason: str) -> str:
        rest = reason.removeprefix(str(self.path))
        line, sep, tail = rest.removeprefix(":").partition(": ")
        return f"line {line}: {tail}" if sep and line.isdigit() else rest.removeprefix(": ")

    def set(self, provider: str, credential: Credential) -> None:
        """Store `credential` (e.g. `{"type": "api_key", "key": "sk-..."}`) for `provider`."""
        if not isinstance(credential, dict) or not isinstance(credential.get("type"), str):
            raise ValueError('a credential is an object with a string "type", e.g. {"type": "api_key", "key": ...}')
        with self._locked():
            data = self._load_for_write()
            data[provider] = credential
            self._write(data)

    def remove(self, provider: str) -> bool:
        """Delete `provider`'s credential; False when there was none."""
        with self._locked():
            data = self._load_for_write()
            if provider not in data:
                return False
            del data[provider]
            self._write(data)
            return True

    def has_api_key(self, provider: str) -> bool:
        """An `api_key` credential whose key looks usable: a `!command` is not run to find out, but one that
        already failed in this process no longer counts."""
        value = self._stored_value(provider)
        cached = self._key_cache.get(value) if isinstance(value, str) else None
        return cached[0] is not None if cached else key_value_configured(value)

    def api_key(self, provider: str) -> KeyOutcome:
        """`(key, None)` or `(None, reason)` for `provider`'s `api_key` credential; `(None, None)` without one.

        A `!command` runs at the first request and its outcome, failure included, is kept for the life of
        the process (the reference agent's documented behaviour), so a slow secret manager runs once.
        """
        return run_lookup(self.key_lookup(provider))

    async def api_key_async(self, provider: str) -> KeyOutcome:
        """`api_key`, running a `!command` as an asyncio subprocess (cancellable; a cancelled run is not
        cached)."""
        return await run_lookup_async(self.key_lookup(provider))

    def key_lookup(self, provider: str) -> KeyLookup[KeyOutcome]:
        """The lookup behind `api_key` (`key_values.KeyLookup`): it yields a `!command` only when the command's
        outcome is not cached yet, and caches the outcome it is sent."""
        value = self._stored_value(provider)
        if value is None:
            return None, None
        if not is_key_command(value):
            return resolve_literal(value)  # `$VAR` values follow the environment: never cached
        if value not in self._key_cache:
            self._key_cache[value] = yield from key_value_lookup(value)
        return self._key_cache[value]

    def _stored_value(self, provider: str) -> object:
        """The key value of `provider`'s `api_key` credential; None without one."""
        cred = self.get(provider)
        return cred.get("key") if cred and cred.get("type") == "api_key" else None

    def _load(self) -> dict[str, object]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._data, self._stamp, self.error, self.problems, self.notes = {}, None, None, {}, []
            return self._data
        except OSError as exc:
            self._data, self._stamp, self.error = {}, None, f"{path_text(self.path)}: {exc.strerror or exc}"
            self.problems, self.notes = {}, []
            return self._data
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                (self._data, self.problems, self.notes), self.error = _read_auth_file(self.path), None
            except AuthFileError as exc:
                self._data, self.problems, self.notes, self.error = {}, {}, [], str(exc)
        return self._data

    def _load_for_write(self) -> dict[str, object]:
        self._stamp = None  # always re-read under the lock
        data = dict(self._load())
        if self.error:
            raise AuthFileError(f"{self.error} (not overwriting it; fix or delete the file)")
        return data

    def _write(self, data: dict[str, object]) -> None:
        _atomic_write_json(self.path, data)
        self._stamp = None

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Serialise read-modify-write cycles of several agent processes (advisory lock beside the file)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            import fcntl
        except ImportError:  # not POSIX: the atomic rename still protects the file itself
            yield
            return
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _read_auth_file(path: Path) -> tuple[dict[str, object], dict[str, str], list[str]]:
    """The file's data (entries of the wrong shape kept, so a write keeps them too), its entry problems and
    its notes (`AuthStorage.notes`: repeated keys, unknown fields)."""
    try:
        document = read_json_document(path, if_blank={})
    except FileNotFoundError:
        return {}, {}, []  # removed between the caller's stat and this read
    except ConfigFileError as exc:
        raise AuthFileError(f"{path_text(path)}: {exc}") from None
    data, text = document.data, document.text
    if not isinstance(data, dict):
        raise AuthFileError(f"{path_text(path)}: expected a JSON object of provider credentials, got {json_kind(data)}")
    problems, notes = {}, document.duplicate_warnings(path)
    for provider, credential in data.items():
        problem = credential_problem(credential)
        if problem:
            problems[provider] = f"{_where(path, text, (provider,))}: {path_text(provider)}: {problem}; ignored"
        for field in _unknown_fields(credential):
            from ..config_keys import unknown_key  # only when there is something to report

            notes.append(f"{_where(path, text, (provider, field))}: {path_text(provider)}: "
                         f"{unknown_key(field, API_KEY_FIELDS)}; ignored")
    return data, problems, notes


def _where(path: Path, text: str, where: tuple[str, ...]) -> str:
    """`<path>:<line>` of the key at `where` (`<path>` when it cannot be found)."""
    from ..json_locate import locate  # only when there is something to report

    position = locate(text, where)
    return f"{path_text(path)}:{position[0]}" if position else path_text(path)


def _unknown_fields(credential: object) -> list[str]:
    """The fields of an `api_key` entry that `ApiKeyCredential` does not name (other types are left alone: the
    reference agent's `oauth` entries, or a newer version's, have fields of their own)."""
    if not isinstance(credential, dict) or credential.get("type") != "api_key":
        return []
    return [field for field in credential if field not in API_KEY_FIELDS]


def credential_problem(credential: object) -> str | None:
    """What makes one `auth.json` entry unusable, or None: it must be an object with a string `type`, and an
    `api_key` one needs a non-empty string `key`."""
    if not isinstance(credential, dict):
        return f'expected an object such as {{"type": "api_key", "key": "..."}}, got {json_kind(credential)}'
    if not isinstance(credential.get("type"), str):
        return '"type" must be a string such as "api_key"'
    key = credential.get("key")
    if credential["type"] == "api_key" and not (isinstance(key, str) and key.strip()):
        return f'"key" must be a non-empty string, got {json_kind(key) if "key" in credential else "nothing"}'
    return None


def json_kind(value: object) -> str:
    """`a string`, `a number`, `an array`, ... for a parsed JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    names = {str: "a string", int: "a number", float: "a number", list: "an array", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def _atomic_write_json(path: Path, data: dict[str, object]) -> None:
    """Write via a 0600 temp file in the same directory, fsync, then rename over `path`."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    sync_dir(path.parent)
