"""auth.json storage (mode, atomic writes, concurrent writers) and key-value resolution."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_forge.coding.models import auth_file, key_values
from agent_forge.coding.errors import AuthFileError
from agent_forge.coding.models.auth_file import AuthStorage
from agent_forge.coding.models.key_values import explain_key_value, key_value_configured, resolve_key_value


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_set_creates_a_private_file_with_the_reference_schema(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "auth.json"
    store = AuthStorage(path)
    store.set("anthropic", {"type": "api_key", "key": "sk-ant-1"})
    assert mode(path) == 0o600
    assert json.loads(path.read_text()) == {"anthropic": {"type": "api_key", "key": "sk-ant-1"}}
    assert store.get("anthropic") == {"type": "api_key", "key": "sk-ant-1"}
    assert store.get("openai") is None


def test_write_replaces_the_file_atomically_and_tightens_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text(json.dumps({"openai": {"type": "api_key", "key": "old"}}))
    path.chmod(0o644)
    inode = path.stat().st_ino
    AuthStorage(path).set("anthropic", {"type": "api_key", "key": "new"})
    assert path.stat().st_ino != inode  # a new file renamed over the old one
    assert mode(path) == 0o600
    assert set(json.loads(path.read_text())) == {"openai", "anthropic"}
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "auth.json"
    original = json.dumps({"openai": {"type": "api_key", "key": "old"}})
    path.write_text(original)

    def crash(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(auth_file.json, "dump", crash)
    with pytest.raises(OSError):
        AuthStorage(path).set("anthropic", {"type": "api_key", "key": "new"})
    assert path.read_text() == original
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_remove(tmp_path: Path) -> None:
    store = AuthStorage(tmp_path / "auth.json")
    store.set("a", {"type": "api_key", "key": "1"})
    store.set("b", {"type": "api_key", "key": "2"})
    assert store.remove("a") is True
    assert store.remove("a") is False
    assert store.providers() == ["b"]
    assert json.loads((tmp_path / "auth.json").read_text()) == {"b": {"type": "api_key", "key": "2"}}


def test_set_rejects_a_credential_without_type(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match='"type"'):
        AuthStorage(tmp_path / "auth.json").set("a", {"key": "1"})
    assert not (tmp_path / "auth.json").exists()


def test_invalid_file_reads_as_empty_and_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text("{not json")
    store = AuthStorage(path)
    assert store.get("anthropic") is None
    assert store.error is not None and str(path) in store.error and "invalid JSON" in store.error
    with pytest.raises(AuthFileError, match="not overwriting"):
        store.set("anthropic", {"type": "api_key", "key": "k"})
    assert path.read_text() == "{not json"


def test_non_object_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text("[1]")
    store = AuthStorage(path)
    assert store.providers() == []
    assert "expected a JSON object" in (store.error or "")


def test_a_provider_written_twice_is_reported_and_its_last_entry_used(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text('{"openai": {"type": "api_key", "key": "old"},\n "openai": {"type": "api_key", "key": "new"}}')
    store = AuthStorage(path)
    assert store.api_key("openai") == ("new", None)
    assert store.warnings() == [f'{path}:2: duplicate key "openai" (lines 1 and 2); only the last one (line 2) is '
                                "used, the earlier one ignored"]
    assert store.unusable_reason("openai") is None  # the entry in use is fine
    path.write_text('{"openai": {"type": "api_key", "key": "new"}}')
    assert store.warnings() == []


def test_changes_by_another_process_are_seen(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    store = AuthStorage(path)
    assert store.get("openai") is None
    path.write_text(json.dumps({"openai": {"type": "api_key", "key": "from-elsewhere"}}))
    assert store.get("openai") == {"type": "api_key", "key": "from-elsewhere"}


def test_other_credential_types_are_kept_but_give_no_api_key(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    oauth = {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}
    path.write_text(json.dumps({"anthropic": oauth}))
    store = AuthStorage(path)
    assert store.get("anthropic") == oauth
    assert store.api_key("anthropic") == (None, None)
    assert store.has_api_key("anthropic") is False
    store.set("openai", {"type": "api_key", "key": "k"})
    assert store.get("anthropic") == oauth


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    script = textwrap.dedent("""
        import sys
        from agent_forge.coding.models.auth_file import AuthStorage
        store = AuthStorage(sys.argv[1])
        for i in range(10):
            store.set(f"{sys.argv[2]}-{i}", {"type": "api_key", "key": str(i)})
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), f"w{n}"]) for n in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    assert len(json.loads(path.read_text())) == 40


# -- key values ---------------------------------------------------------------------------------------------

ENV = {"MY_KEY": "secret", "TOKEN": "tok", "EMPTY_VAR": ""}


@pytest.mark.parametrize("value, expected", [
    ("sk-literal", "sk-literal"),
    ("$MY_KEY", "secret"),
    ("${MY_KEY}", "secret"),
    ("Bearer $TOKEN!", "Bearer tok!"),
    ("pre-${TOKEN}-post", "pre-tok-post"),
    ("cost$$5", "cost$5"),
    ("$!not-a-command", "!not-a-command"),
    ("$5 literal dollar", "$5 literal dollar"),
    ("MY_KEY", "secret"),          # bare variable name (the older reference form)
    ("EMPTY", "EMPTY"),            # a dummy key for local servers stays literal
    ("$MISSING", None),
    ("$EMPTY_VAR", None),
    ("FAKE_KEY_VALUE", "FAKE_KEY_VALUE"),  # looks like a variable name but is unset: a literal
    ("", None),
    ("   ", None),
    (None, None),
    (42, None),
])
def test_resolve_key_value(value: object, expected: str | None) -> None:
    assert resolve_key_value(value, ENV) == expected


def test_missing_variable_is_explained() -> None:
    assert explain_key_value("$NOPE_X", ENV) == (
        None, '"$NOPE_X" reads the environment variable NOPE_X, which is not set')


def test_command_keys(tmp_path: Path) -> None:
    assert resolve_key_value("!printf '  sk-from-cmd \\n'") == "sk-from-cmd"
    key, reason = explain_key_value("!exit 3")
    assert key is None and reason == "the key command `exit 3` failed with exit status 3"
    assert explain_key_value("!true") == (None, "the key command `true` printed nothing")
    assert explain_key_value("!echo 'vault locked' >&2; exit 2") == (
        None, "the key command `echo 'vault locked' >&2; exit 2` failed with exit status 2: vault locked")
    assert resolve_key_value("!") is None


@pytest.mark.parametrize("output", ["sk-SECRET\\nextra", "sk-SECRET\\r\\nextra", "sk-\\033[0mSECRET"])
def test_a_command_printing_more_than_a_key_never_shows_its_output(output: str) -> None:
    key, reason = explain_key_value(f"!printf '{output}'")
    assert key is None and "SECRET" not in reason.replace(output, "") and "not shown" in reason


def test_command_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(key_values, "KEY_COMMAND_TIMEOUT_S", 0.2)
    key, reason = explain_key_value(f"!{sys.executable} -c 'import time; time.sleep(5)'")
    assert key is None and "did not finish within 0.2 s" in (reason or "")


async def test_async_command_timeout_kills_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(key_values, "KEY_COMMAND_TIMEOUT_S", 0.2)
    key, reason = await key_values.resolve_key_value_async(f"!{sys.executable} -c 'import time; time.sleep(5)'")
    assert key is None and "did not finish within 0.2 s" in (reason or "")


def test_configured_check_never_runs_commands(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    assert key_value_configured(f"!touch {marker}") is True
    assert not marker.exists()
    assert key_value_configured("$MY_KEY", ENV) is True
    assert key_value_configured("$MISSING", ENV) is False
    assert key_value_configured("literal") is True
    assert key_value_configured("") is False


def test_stored_command_runs_once_per_process(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    path = tmp_path / "auth.json"
    path.write_text(json.dumps({"anthropic": {"type": "api_key", "key": f"!echo x >> {counter}; echo sk-1"}}))
    store = AuthStorage(path)
    assert store.has_api_key("anthropic") and not counter.exists()
    assert store.api_key("anthropic") == ("sk-1", None)
    assert store.api_key("anthropic") == ("sk-1", None)
    assert counter.read_text().count("x") == 1


def test_a_failed_stored_command_stays_failed_and_stops_counting_as_auth(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    path = tmp_path / "auth.json"
    path.write_text(json.dumps({"openai": {"type": "api_key", "key": f"!echo x >> {counter}; exit 1"}}))
    store = AuthStorage(path)
    assert store.has_api_key("openai") is True
    first = store.api_key("openai")
    assert first[0] is None and "status 1" in (first[1] or "")
    assert store.api_key("openai") == first
    assert counter.read_text().count("x") == 1
    assert store.has_api_key("openai") is False


async def test_a_stored_command_runs_once_for_the_sync_and_the_async_path_together(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    path = tmp_path / "auth.json"
    path.write_text(json.dumps({"anthropic": {"type": "api_key", "key": f"!echo x >> {counter}; echo sk-1"}}))
    store = AuthStorage(path)
    assert await store.api_key_async("anthropic") == ("sk-1", None)
    assert store.api_key("anthropic") == ("sk-1", None)
    assert await store.api_key_async("anthropic") == ("sk-1", None)
    assert counter.read_text().count("x") == 1


async def test_a_cancelled_stored_command_is_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    started, commands = asyncio.Event(), []

    async def hang(command: str) -> tuple[str | None, str | None]:
        commands.append(command)
        started.set()
        await asyncio.Event().wait()  # never set: only the cancellation ends it
        raise AssertionError("unreachable")

    path = tmp_path / "auth.json"
    path.write_text(json.dumps({"openai": {"type": "api_key", "key": "!vault read openai"}}))
    store = AuthStorage(path)
    monkeypatch.setattr(key_values, "run_key_command_async", hang)
    task = asyncio.create_task(store.api_key_async("openai"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    lookup = store.key_lookup("openai")  # nothing was cached: the next request runs the command again
    assert next(lookup) == "vault read openai" and commands == ["vault read openai"]
    with pytest.raises(StopIteration) as done:
        lookup.send(("sk-o", None))
    assert done.value.value == ("sk-o", None) and store.api_key("openai") == ("sk-o", None)


def test_stored_env_reference_resolves_at_request_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "auth.json"
    path.write_text(json.dumps({"groq": {"type": "api_key", "key": "$GROQ_TEST_KEY"}}))
    store = AuthStorage(path)
    monkeypatch.delenv("GROQ_TEST_KEY", raising=False)
    assert store.has_api_key("groq") is False
    monkeypatch.setenv("GROQ_TEST_KEY", "gsk")
    assert store.api_key("groq") == ("gsk", None)


def test_directory_is_created_private(tmp_path: Path) -> None:
    store = AuthStorage(tmp_path / "new" / "agent" / "auth.json")
    store.set("a", {"type": "api_key", "key": "1"})
    assert mode(tmp_path / "new" / "agent") == 0o700
    assert os.path.exists(tmp_path / "new" / "agent" / "auth.json")


@pytest.mark.parametrize("content, expected", [
    (None, "not a regular file but a character device"),
    ("[" * 100_000 + "]" * 100_000, "nested more than"),
    ('{"p": {"type": "api_key", "key": "' + "k" * (1024 * 1024) + '"}}', "larger than 1 MB"),
])
def test_unusable_auth_file_reads_as_empty_with_a_reason(tmp_path: Path, content: str | None, expected: str) -> None:
    path = tmp_path / "auth.json"
    if content is None:
        path.symlink_to("/dev/zero")
    else:
        path.write_text(content)
    store = AuthStorage(path)
    assert store.providers() == [] and not store.has_api_key("p")
    assert store.error is not None and store.error.startswith(f"{path}: ") and expected in store.error
    with pytest.raises(AuthFileError, match="not overwriting"):
        store.set("p", {"type": "api_key", "key": "k"})


@pytest.mark.parametrize("value,expected", [
    ("!kill -9 $$", (None, "the key command `kill -9 $$` was killed by signal 9 (SIGKILL)")),
    ("!head -c 70000 /dev/zero | tr '\\0' a",
     (None, "the key command `head -c 70000 /dev/zero | tr '\\0' a` printed more than 64 KiB (the output is not shown)")),
    # taken when the shell exits, not when its background child closes stdout (the child is stopped below)
    ("!(sleep 100 & echo $! >> \"$PIDS\") ; echo kbg", ("kbg", None)),
])
def test_the_synchronous_path_fails_and_succeeds_like_the_asynchronous_one(value, expected, tmp_path, monkeypatch):
    import asyncio
    import signal

    pids = tmp_path / "pids"
    monkeypatch.setenv("PIDS", str(pids))
    try:
        assert explain_key_value(value) == expected
        assert asyncio.run(key_values.resolve_key_value_async(value)) == expected
    finally:
        for pid in (pids.read_text().split() if pids.exists() else []):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
