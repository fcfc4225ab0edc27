"""Stored provider credentials (`<agent dir>/auth.json`) and the resolution of key values.

`auth.json` keeps the reference agent's schema so users can bring theirs:
`{"<provider>": {"type": "api_key", "key": "<key value>"}, ...}`. Other credential types (`oauth`, ...) are
kept and returned by `get` untouched, but yield no API key here.

A *key value* (auth.json `key`, models.json `apiKey` and header values) is resolved by `resolve_key_value`:

- `!command`: the command's standard output, stripped (run with the shell, stdin closed, in its own process
  group; empty output, output of more than one line or with control characters, more than
  `KEY_COMMAND_MAX_OUTPUT` bytes, a non-zero exit, a death by signal or a timeout of `KEY_COMMAND_TIMEOUT_S`
  leaves it unresolved, with a reason that shows the command and its stderr but never its output). The output
  is what was printed when the shell exited (plus `KEY_COMMAND_DRAIN_S` for the pipes to close), so a
  background child holding stdout open does not delay it. `resolve_key_value_async` runs it without blocking
  the event loop; cancelling it (an abort) kills the command's process group;
- `$NAME` / `${NAME}` anywhere in the value: the environment variable (unset or empty: unresolved);
  `$$` is a literal `$` and `$!` a literal `!` (so `$!x` is the literal `!x`, not a command);
- a bare upper-case name that is set in the environment: its value (the reference agent's older form);
  unset, it is a literal like any other (dummy keys such as `EMPTY` or `NOT_NEEDED` are common);
- anything else: the literal value.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from .safe_read import ConfigFileError, read_json_file
from .errors import AuthFileError  # noqa: F401 (re-exported: defined in errors.py)

KEY_COMMAND_TIMEOUT_S = 30.0
"""How long a `!command` key may run before it is killed (a secret manager may wait for an unlock prompt);
an abort stops it sooner."""

KEY_COMMAND_MAX_OUTPUT = 64 * 1024
"""The most a `!command` key may print (bytes on stdout); more fails the key at once and kills the command
(a key, even a long JWT, is far smaller: more is a wrong command, not a key)."""

KEY_COMMAND_DRAIN_S = 0.5
"""After the command's shell exits, how long its output pipes may stay open (a background child that
inherited them); then the output read so far is the command's output."""

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # no HTTP header value may hold these (RFC 9110 §5.5)
_BARE_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_INTERPOLATION = re.compile(r"\$(?:\$|!|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def resolve_key_value(value: Any, env: Mapping[str, str] | None = None) -> str | None:
    """The key `value` stands for (rules in the module docstring), or None when it cannot be resolved.

    Never raises: a failing command or a missing variable gives None (`explain_key_value` says why).
    """
    return _resolve(value, os.environ if env is None else env)[0]


def explain_key_value(value: Any, env: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """`(key, None)` when `value` resolves, else `(None, reason)` with a one-line human-readable reason."""
    return _resolve(value, os.environ if env is None else env)


def key_value_configured(value: Any, env: Mapping[str, str] | None = None) -> bool:
    """Whether `value` looks usable without running anything: commands count as configured (they run only
    when the key is needed), `$NAME` references need their variables set."""
    if not isinstance(value, str) or not value.strip():
        return False
    if value.startswith("!"):
        return len(value) > 1
    return _resolve(value, os.environ if env is None else env)[0] is not None


def _resolve(value: Any, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    if not isinstance(value, str) or not value.strip():
        return None, "the key value is empty"
    if value.startswith("!"):
        return _run_key_command(value[1:].strip())
    if _BARE_ENV_NAME.fullmatch(value) and env.get(value):
        return env[value], None
    return _interpolate(value, env)


def _interpolate(value: str, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    missing: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name is None:
            return match.group(0)[1]  # `$$` -> `$`, `$!` -> `!`
        if not env.get(name):
            missing.append(name)
            return ""
        return env[name]

    result = _INTERPOLATION.sub(substitute, value)
    if missing:
        return None, f"environment variable {missing[0]} is not set"
    return (result, None) if result else (None, "the key value is empty")


async def resolve_key_value_async(value: Any, env: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """`explain_key_value`, with a `!command` run as an asyncio subprocess: the event loop keeps serving
    while it runs, and cancelling the call kills the command's process group at once."""
    if isinstance(value, str) and value.startswith("!"):
        return await _run_key_command_async(value[1:].strip())
    return _resolve(value, os.environ if env is None else env)


def _run_key_command(command: str) -> tuple[str | None, str | None]:
    """`_run_key_command_async` for synchronous callers: one implementation, so both paths fail alike."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_run_key_command_async(command))
    from concurrent.futures import ThreadPoolExecutor  # called from a loop's thread: run on a private loop

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(_run_key_command_async(command))).result()


async def _run_key_command_async(command: str) -> tuple[str | None, str | None]:
    if not command:
        return None, "the key command is empty"
    import asyncio
    import subprocess

    loop = asyncio.get_running_loop()
    try:
        # A new session, so a timeout or an abort can kill the whole process group, not just the shell.
        transport, output = await loop.subprocess_shell(
            lambda: _KeyCommandOutput(loop), command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return None, f"the key command `{command}` could not start ({exc.strerror or exc})"
    try:
        return await asyncio.wait_for(_collect(command, transport, output), KEY_COMMAND_TIMEOUT_S)
    except asyncio.TimeoutError:
        _kill_group(transport.get_pid())
        await output.exited  # reaped on this loop (a sync caller's private loop closes right after)
        return None, _timed_out(command)
    except BaseException:  # cancelled (an abort): the command and its children must not outlive the request
        _kill_group(transport.get_pid())
        raise
    finally:
        transport.close()  # our ends of the pipes; a child the shell left behind keeps running, unheard


async def _collect(command: str, transport: Any, output: "_KeyCommandOutput") -> tuple[str | None, str | None]:
    """Wait until the shell exits (or prints too much), then give its pipes `KEY_COMMAND_DRAIN_S` to close:
    a background child that inherited stdout must not hold the key back until the timeout."""
    import asyncio

    await asyncio.wait({output.exited, output.overflow}, return_when=asyncio.FIRST_COMPLETED)
    if not output.overflow.done():
        await asyncio.wait({output.closed, output.overflow}, timeout=KEY_COMMAND_DRAIN_S,
                           return_when=asyncio.FIRST_COMPLETED)
    if output.overflow.done():  # also when the excess arrived after the shell had exited
        _kill_group(transport.get_pid())
        await output.exited
        return None, (f"the key command `{command}` printed more than {KEY_COMMAND_MAX_OUTPUT // 1024} KiB "
                      "(the output is not shown)")
    return _key_from_output(command, transport.get_returncode(), bytes(output.out), bytes(output.err))


class _KeyCommandOutput:
    """Subprocess protocol of a key command: collects stdout and stderr (each capped at
    `KEY_COMMAND_MAX_OUTPUT` + 1 bytes) and marks the shell's exit and the pipes' close separately."""

    def __init__(self, loop: Any) -> None:
        self.out, self.err = bytearray(), bytearray()
        self.exited, self.closed, self.overflow = loop.create_future(), loop.create_future(), loop.create_future()

    def connection_made(self, transport: Any) -> None:
        pass

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        buffer = self.out if fd == 1 else self.err
        buffer += data[:max(0, KEY_COMMAND_MAX_OUTPUT + 1 - len(buffer))]
        if fd == 1 and len(buffer) > KEY_COMMAND_MAX_OUTPUT:
            _settle(self.overflow)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        pass

    def pause_writing(self) -> None:  # stdin is the null device: nothing is written, but the protocol has these
        pass

    def resume_writing(self) -> None:
        pass

    def process_exited(self) -> None:
        _settle(self.exited)

    def connection_lost(self, exc: Exception | None) -> None:
        _settle(self.exited)  # all pipes closed and the process reaped
        _settle(self.closed)


def _settle(future: Any) -> None:
    if not future.done():
        future.set_result(None)


def _timed_out(command: str) -> str:
    return f"the key command `{command}` did not finish within {KEY_COMMAND_TIMEOUT_S:g} s and was stopped"


def _key_from_output(command: str, status: int | None, out: bytes, err: bytes) -> tuple[str | None, str | None]:
    """The key a finished command printed, or why there is none. The output is never part of a reason: it
    may be the secret, or a fragment of it."""
    if status is not None and status < 0:  # asyncio's returncode for a death by signal
        return None, f"the key command `{command}` was killed by signal {-status}" + _signal_name(-status)
    if status != 0:
        detail = _first_line(err)
        return None, f"the key command `{command}` failed with exit status {status}" + (
            f": {detail}" if detail else "")
    key = out.decode("utf-8", errors="replace").strip()
    if not key:
        return None, f"the key command `{command}` printed nothing"
    if "\n" in key or "\r" in key:
        return None, f"the key command `{command}` printed more than one line (the output is not shown)"
    if _CONTROL.search(key):
        return None, f"the key command `{command}` printed control characters (the output is not shown)"
    return key, None


def _signal_name(number: int) -> str:
    import signal

    try:
        return f" ({signal.Signals(number).name})"
    except ValueError:
        return ""


def _kill_group(pid: int | None) -> None:
    if pid is None:
        return

    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except (OSError, AttributeError):  # already gone, or no process groups on this platform
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _first_line(data: bytes) -> str:
    lines = data.decode("utf-8", errors="replace").strip().splitlines()
    return lines[0][:200] if lines else ""


class AuthStorage:
    """Read and write `auth.json`; the file is re-read whenever it changes on disk.

    `get`/`providers` raise nothing: an unreadable or invalid file reads as empty and its problem is in
    `error`. `set`/`remove` raise `AuthFileError` rather than overwrite a file they could not parse, and
    `OSError` when the directory is not writable. Writes go to a 0600 temporary file renamed over the
    original, so a crash leaves either the old or the new file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.error: str | None = None
        self._data: dict[str, Any] = {}
        self._stamp: tuple[int, int] | None = None
        self._key_cache: dict[str, tuple[str | None, str | None]] = {}

    def get(self, provider: str) -> dict[str, Any] | None:
        """The stored credential dict for `provider` (`{"type": "api_key", "key": ...}` or another type)."""
        cred = self._load().get(provider)
        return dict(cred) if isinstance(cred, dict) else None

    def providers(self) -> list[str]:
        """Providers with a stored credential, in file order."""
        return [name for name, cred in self._load().items() if isinstance(cred, dict)]

    def set(self, provider: str, credential: dict[str, Any]) -> None:
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
        cred = self.get(provider)
        if not cred or cred.get("type") != "api_key":
            return False
        value = cred.get("key")
        cached = self._key_cache.get(value) if isinstance(value, str) else None
        return cached[0] is not None if cached else key_value_configured(value)

    def api_key(self, provider: str) -> tuple[str | None, str | None]:
        """`(key, None)` or `(None, reason)` for `provider`'s `api_key` credential.

        A `!command` runs at the first request and its outcome, failure included, is kept for the life of
        the process (the reference agent's documented behaviour), so a slow secret manager runs once.
        """
        value, known = self._stored_key(provider)
        if known is not None:
            return known
        self._key_cache[value] = _resolve(value, os.environ)
        return self._key_cache[value]

    async def api_key_async(self, provider: str) -> tuple[str | None, str | None]:
        """`api_key`, running a `!command` with `resolve_key_value_async` (cancellable; a cancelled run is not
        cached)."""
        value, known = self._stored_key(provider)
        if known is not None:
            return known
        self._key_cache[value] = await resolve_key_value_async(value)
        return self._key_cache[value]

    def _stored_key(self, provider: str) -> tuple[Any, tuple[str | None, str | None] | None]:
        """`(value, outcome)`: the outcome when it needs no command run (no credential, a literal or `$VAR`
        value, a cached command), else `(command, None)` for the caller to run and cache."""
        cred = self.get(provider)
        if not cred or cred.get("type") != "api_key":
            return None, (None, None)
        value = cred.get("key")
        if not (isinstance(value, str) and value.startswith("!")):
            return value, _resolve(value, os.environ)
        return value, self._key_cache.get(value)

    def _load(self) -> dict[str, Any]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._data, self._stamp, self.error = {}, None, None
            return self._data
        except OSError as exc:
            self._data, self._stamp, self.error = {}, None, f"{self.path}: {exc.strerror or exc}"
            return self._data
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self._data, self.error = _read_auth_file(self.path), None
            except AuthFileError as exc:
                self._data, self.error = {}, str(exc)
        return self._data

    def _load_for_write(self) -> dict[str, Any]:
        self._stamp = None  # always re-read under the lock
        data = dict(self._load())
        if self.error:
            raise AuthFileError(f"{self.error} (not overwriting it; fix or delete the file)")
        return data

    def _write(self, data: dict[str, Any]) -> None:
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


def _read_auth_file(path: Path) -> dict[str, Any]:
    try:
        data = read_json_file(path, if_blank={})
    except FileNotFoundError:
        return {}  # removed between the caller's stat and this read
    except ConfigFileError as exc:
        raise AuthFileError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise AuthFileError(f"{path}: expected a JSON object of provider credentials, got {type(data).__name__}")
    return data


def _atomic_write_json(path: Path, data: dict[str, Any]) -> None:
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
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename is already done
    finally:
        os.close(fd)
