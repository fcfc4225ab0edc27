"""Shared fixtures: a live fake LLM server per test and isolated agent environments for CLI subprocesses."""

from __future__ import annotations

import compileall
import functools
import gc
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

# Bytecode caches even where PYTHONDONTWRITEBYTECODE is set (this machine's environment sets it): without them
# every xdist worker rewrote the asserts of all ~230 test modules again (14 s of CPU per worker before the first
# test), and every agent process the tests start compiled the modules that had no cache (~80 ms each).
sys.dont_write_bytecode = False

# `support` lives beside this file; make it importable whichever import mode pytest uses.
_TESTS_DIR = str(Path(__file__).parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

from support.fake_llm import FakeLLMServer  # noqa: E402
from support.model_entries import model_entry  # noqa: E402
from support import ordering, rewrite_ahead, timing  # noqa: E402

from agent_forge.ai import json_wire  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    """Once per run, before the xdist workers start: byte-compile the package and the test helpers, so that the
    processes tests start (agents in tmux, MCP servers) read caches (`sys.dont_write_bytecode` above). With
    `TEST_TIMING_DIR` set, every worker also records each test's wall and CPU time (`support/timing.py`). The
    tests' temporary directories are in memory where they can be (`_temp_root_in_memory`). Before xdist starts
    its workers, the test modules' asserts are rewritten once for all of them (`support/rewrite_ahead.py`: a
    fresh clone's workers each spent ~7 s of CPU on it)."""
    timing.register(config)
    if hasattr(config, "workerinput"):
        return
    _temp_root_in_memory(config)
    import agent_forge

    for root in (Path(agent_forge.__file__).parent, Path(_TESTS_DIR) / "support"):
        compileall.compile_dir(root, quiet=1, workers=1)
    rewrite_ahead.rewrite(config)


MEMORY_TEMP_ROOT = Path("/dev/shm")
MEMORY_TEMP_MIN_FREE = 8 << 30
"""Free bytes the tmpfs needs: a whole run writes ~1 GB (the 64 MiB session-line tests) and pytest keeps the
directories of the last 3 runs."""


def _temp_root_in_memory(config: pytest.Config) -> None:
    """`tmp_path` directories under `/dev/shm` (a tmpfs) when it is writable with `MEMORY_TEMP_MIN_FREE` free,
    unless `--basetemp` or `PYTEST_DEBUG_TEMPROOT` (pytest's own variable for the root) chose a place. On the
    2-core machine's disk a file or directory costs ~0.3 ms of CPU and ~0.5-1 ms to make and up to 2.7 ms to
    remove, in memory ~10 us, and an end-to-end test makes dozens (issue 11: the agent's dirs, its session and
    lock files). The variable also reaches the xdist workers."""
    if config.option.basetemp or os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        return
    try:
        usage = os.statvfs(MEMORY_TEMP_ROOT)
    except OSError:
        return
    if os.access(MEMORY_TEMP_ROOT, os.W_OK | os.X_OK) and usage.f_bavail * usage.f_frsize >= MEMORY_TEMP_MIN_FREE:
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(MEMORY_TEMP_ROOT)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker, the longest tests first (`support/ordering.py`, `tests/durations.json`): the last
    tests handed out are short, so the workers end together instead of one finishing a long test alone. Every
    worker orders the same collection the same way (xdist requires it); a run without workers keeps file order."""
    if hasattr(config, "workerinput"):
        items[:] = ordering.longest_first(items, ordering.load())


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """As a run ends pytest collects garbage twice, for the unraisable exceptions of objects only the cyclic
    collector frees: in its `pytest_unconfigure`, then again in its cleanup, each a full collection of the whole
    process (~0.15-0.3 s of CPU in a worker, when all the workers end together). The first has run when this
    hook does (trylast): what survived it is moved out of the collector's way (`gc.freeze`), so the second walks
    only what was made since (the cleanup's garbage). No test runs after it: the session reads of a frozen
    process (`coding/session/reading.py`) do not happen here."""
    gc.freeze()


# In-process tests use one JSON backend from the first call (the agent's default defers orjson for a few
# calls): orjson, or the stdlib fallback with AGENT_FORGE_JSON=stdlib. `json_backend` runs a test on both.
JSON_BACKEND = "stdlib" if os.environ.get("AGENT_FORGE_JSON") == "stdlib" else "orjson"
json_wire.set_backend(JSON_BACKEND)


@pytest.fixture(params=["orjson", "stdlib"])
def json_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs the test once with each JSON backend (`json_wire.set_backend`); yields the backend's name."""
    json_wire.set_backend(request.param)
    try:
        yield request.param
    finally:
        json_wire.set_backend(JSON_BACKEND)

API_BASE_URL = {"openai-completions": "base_url_openai", "anthropic-messages": "base_url_anthropic",
                "openai-responses": "base_url_openai", "google-generative-ai": "base_url_gemini"}
"""models.json `api` value -> the FakeLLMServer attribute holding the matching `baseUrl`."""

SCRUBBED_PREFIXES = ("AGENT_FORGE_", "ANTHROPIC_", "OPENAI_", "AZURE_", "AWS_", "GOOGLE_", "GEMINI_", "VERTEX_",
                     "XDG_", "PI_")
SCRUBBED_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN", "_OAUTH_TOKEN", "_ACCESS_TOKEN")
SCRUBBED_NAMES = frozenset({"HF_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN", "HTTP_PROXY",
                            "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"})
"""Variables removed from subprocess envs: real credentials, provider overrides, config dirs, proxies
(matched case-insensitively, so `https_proxy` goes too)."""

FAKE_API_KEY = "FAKE_KEY_VALUE"


def scrubbed_environ(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Copy of `environ` (default os.environ) without the variables described by the SCRUBBED_* constants."""
    def keep(name: str) -> bool:
        upper = name.upper()
        return not (upper in SCRUBBED_NAMES or upper.startswith(SCRUBBED_PREFIXES)
                    or upper.endswith(SCRUBBED_SUFFIXES))

    return {name: value for name, value in (os.environ if environ is None else environ).items() if keep(name)}


def write_models_json(agent_dir: Path, server: FakeLLMServer, *, api: str = "openai-completions",
                      provider: str = "fake", model_id: str = "fake-model", reasoning: bool = True,
                      context_window: int = 128000, max_tokens: int | None = None,
                      models: list[dict[str, Any]] | None = None) -> Path:
    """Write `<agent_dir>/models.json` with one provider pointing at `server`; returns its path.

    `models` replaces the single default entry (build items with `model_entry`). Raises ValueError for an
    `api` the fake server does not speak.
    """
    if api not in API_BASE_URL:
        raise ValueError(f"fake LLM server speaks {sorted(API_BASE_URL)}, not {api!r}")
    entries = models if models is not None else [
        model_entry(model_id, reasoning=reasoning, context_window=context_window, max_tokens=max_tokens)]
    config = {"providers": {provider: {
        "baseUrl": getattr(server, API_BASE_URL[api]), "api": api, "apiKey": FAKE_API_KEY, "models": entries,
    }}}
    return _write_json(Path(agent_dir) / "models.json", config)


def _write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def make_agent_env(root: Path, server: FakeLLMServer, *, api: str = "openai-completions", provider: str = "fake",
                   model_id: str = "fake-model", settings: Mapping[str, Any] | None = None,
                   extra_env: Mapping[str, str] | None = None, **model_options: Any) -> dict[str, str]:
    """Env dict for an `agent-forge` subprocess that can only reach `server`.

    Layout: HOME=`<root>/home`, AGENT_FORGE_DIR=`<root>/home/.agent-forge/agent` holding models.json
    (see `write_models_json`; `model_options` go there) and settings.json (default provider/model, updated
    with `settings`), TMPDIR=`<root>/agent-tmp` (bash output files, sessions saved at exit when their file
    cannot be written: nothing lands in the machine's /tmp). `extra_env` is applied last.
    """
    home = Path(root) / "home"
    agent_dir = home / ".agent-forge" / "agent"
    write_models_json(agent_dir, server, api=api, provider=provider, model_id=model_id, **model_options)
    _write_json(agent_dir / "settings.json",
                {"defaultProvider": provider, "defaultModel": model_id, **(settings or {})})
    env = scrubbed_environ()
    temp = Path(root) / "agent-tmp"
    temp.mkdir(parents=True, exist_ok=True)
    env.update({"HOME": str(home), "AGENT_FORGE_DIR": str(agent_dir), "TMPDIR": str(temp),
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    env.update(extra_env or {})
    return env


@pytest.fixture
def fake_llm(request: pytest.FixtureRequest) -> Iterator[FakeLLMServer]:
    """A running FakeLLMServer with an empty script (call `set_script`); stopped, hangs released, at teardown.

    A request the script had no answer for (a 500 `script exhausted`) fails the test at teardown unless it is
    marked `exhausts_script`: the agent retries a 500 with backoff (2 + 4 + 8 s), so a script one answer short
    made a test wait 14 s and check less than it meant to."""
    server = FakeLLMServer().start()
    try:
        yield server
    finally:
        server.stop()
    exhausted = [r["seq"] for r in server.requests if r["outcome"] == "exhausted"]
    if exhausted and request.node.get_closest_marker("exhausts_script") is None:
        pytest.fail(f"fake LLM script exhausted at request(s) {exhausted}: script every answer the test needs, "
                    "or mark the test `exhausts_script`")


@pytest.fixture
def agent_env(tmp_path: Path, fake_llm: FakeLLMServer) -> dict[str, str]:
    """`make_agent_env(tmp_path, fake_llm)`: OpenAI-completions provider `fake`, model `fake-model`."""
    return make_agent_env(tmp_path, fake_llm)


@pytest.fixture
def agent_env_factory(tmp_path: Path, fake_llm: FakeLLMServer) -> Callable[..., dict[str, str]]:
    """`make_agent_env` bound to tmp_path and fake_llm, e.g. `agent_env_factory(api="anthropic-messages")`."""
    return functools.partial(make_agent_env, tmp_path, fake_llm)


# -- shared doubles (tests/support/doubles.py) ---------------------------------------------------------------


@pytest.fixture
def faux():
    """A `FauxProvider` of this test's own: pass `faux.model()` and `faux.stream` to what runs the model."""
    from agent_forge.ai.providers.faux import FauxProvider

    return FauxProvider()


@pytest.fixture
def make_gate(tmp_path: Path):
    """`make_gate()` → a new `FifoGate` in tmp_path; all are closed at teardown."""
    from support.doubles import FifoGate

    gates: list[FifoGate] = []

    def make(name: str = "gate") -> FifoGate:
        gates.append(FifoGate(tmp_path / f"{name}-{len(gates)}.fifo"))
        return gates[-1]

    yield make
    for gate in gates:
        gate.close()


@pytest.fixture
def gate(make_gate):
    """One `FifoGate`."""
    return make_gate()


@pytest.fixture
def pid_fifo(tmp_path: Path):
    """A `PidFifo` in tmp_path (`pid_fifo.path` goes in the command); closed at teardown."""
    from support.doubles import PidFifo

    fifo = PidFifo(tmp_path / "pid.fifo")
    yield fifo
    fifo.close()


@pytest.fixture
def watch_process():
    """`watch_process(pid)` → a `ProcessWatch`; each is closed (its process killed if alive) at teardown."""
    from support.doubles import ProcessWatch

    watches: list[ProcessWatch] = []

    def watch(pid: int) -> ProcessWatch:
        watches.append(ProcessWatch(pid))
        return watches[-1]

    yield watch
    for watch_ in watches:
        watch_.close()


@pytest.fixture
def nobody_dir() -> Iterator[Path]:
    """A directory user 65534 can enter and read (tmp_path's root is root's alone), removed afterwards; skips
    unless the tests run as root with `setpriv` on PATH."""
    import shutil
    import tempfile

    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a command as another user")
    root = Path(tempfile.mkdtemp(prefix="nobody-", dir=os.environ.get("PYTEST_DEBUG_TEMPROOT")))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)  # root removes entries of a mode 000 directory too


@pytest.fixture
def nobody_env(nobody_dir: Path, fake_llm: FakeLLMServer) -> dict[str, str]:
    """`make_agent_env(nobody_dir, fake_llm)` with a TMPDIR user 65534 may write in (run it with
    `support.doubles.run_as_nobody`). Tests take it as a fixture: `from conftest import ...` finds whichever conftest
    module pytest imported first (tests/ai has one too)."""
    env = make_agent_env(nobody_dir, fake_llm)
    Path(env["TMPDIR"]).chmod(0o777)
    return env
