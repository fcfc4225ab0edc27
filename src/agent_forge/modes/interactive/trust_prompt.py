"""The start-up question of the interactive mode in an untrusted project that brings code: its own plugins
(`.agent-forge/agent/plugins/`, a `plugins` list) or settings that run programs (`CODE_SETTINGS`). Asked once,
on the terminal before the session is built, only when nothing decided yet (`--approve` / `--no-approve`, a
recorded decision, `defaultProjectTrust` "always" / "never"); the answer is recorded as `--trust-project` /
`--distrust-project` record it (`<agent dir>/trust.json`). Imports neither prompt_toolkit nor rich."""

from __future__ import annotations

import os
from pathlib import Path

from ...coding.paths import project_dir
from ...coding.errors import ConfigFileError, TrustFileError
from ...coding.safe_read import read_json_file
from ...coding.resources.trust import CODE_SETTINGS, record_trust, recorded_decision
from ...plugins.discovery import PLUGINS_DIR, plugin_files
from ...coding.safe_read import is_dir


def brings_code(cwd: str) -> bool:
    """Whether the project of `cwd` has plugins or code-running settings of its own."""
    base = project_dir(cwd)
    if is_dir(base) and plugin_files(base / PLUGINS_DIR):
        return True
    settings = _json_object(base / "settings.json")
    return bool(settings.get("plugins")) or any(key in settings for key in CODE_SETTINGS)


def should_ask(cwd: str, agent_dir: Path, approve: bool | None) -> bool:
    """True when the question of the module docstring applies."""
    if approve is not None or not brings_code(cwd):
        return False
    agent_settings = _json_object(agent_dir / "settings.json")
    if agent_settings.get("projectResources") is False or agent_settings.get("defaultProjectTrust") in (
            "always", "never"):
        return False
    try:
        return recorded_decision(cwd, agent_dir) is None
    except TrustFileError:
        return False  # the broken file is reported by the session's warnings


def ask(cwd: str, agent_dir: Path, read_line, write) -> bool | None:
    """Ask on the terminal (`write(text)`, `read_line() -> str`); record and return the answer, None when the
    reply was neither yes nor no (nothing recorded: asked again next time)."""
    write(f"{project_dir(cwd)} brings its own plugins or settings that run programs.\n"
          "Trust this project and load them? [y/N] ")
    reply = read_line().strip().lower()
    if reply not in ("y", "yes", "n", "no", ""):
        return None
    trusted = reply in ("y", "yes")
    try:
        path = record_trust(cwd, agent_dir, trusted)
    except TrustFileError as exc:
        write(f"cannot record the decision: {exc}\n")
        return trusted
    write(f"{'trusted' if trusted else 'not trusted'} (recorded in {path})\n")
    return trusted


def ask_on_terminal(cwd: str, agent_dir: Path, approve: bool | None, stdin_fd: int, stdout_fd: int) -> None:
    """`ask` through the claimed terminal descriptors when `should_ask`."""
    if not should_ask(cwd, agent_dir, approve):
        return

    def read_line() -> str:
        data = b""
        while not data.endswith(b"\n"):
            chunk = os.read(stdin_fd, 1)
            if not chunk:
                break
            data += chunk
        return data.decode("utf-8", "replace")

    from .typeahead import paused

    with paused():  # the question is answered on the terminal as it was: echoed, line by line
        ask(cwd, agent_dir, read_line, lambda text: os.write(stdout_fd, text.encode("utf-8")))


def _json_object(path: Path) -> dict:
    """The object of a settings file, {} for anything else: the project's file comes from an unvetted checkout
    (a FIFO or a link to /dev/zero would never finish reading), so it is read as every configuration file is;
    its problems are reported by `load_settings`."""
    try:
        data = read_json_file(path)
    except (OSError, ConfigFileError):
        return {}
    return data if isinstance(data, dict) else {}
