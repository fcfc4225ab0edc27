"""Start-up budget (DESIGN.md, issue 15): RPC mode answers its first get_state before the event loop, the
session, its tools and the RPC server are imported (`LATE`, `modes/rpc/early.py`), and serves its first commands
without importing any provider SDK, pydantic, rich, prompt_toolkit or the MCP SDK (no server configured)."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("anthropic", "openai", "google", "pydantic", "rich", "prompt_toolkit", "httpx2", "httpx", "h11",
             "httpcore", "httpcore2", "anyio", "certifi", "mcp", "mcp_types",  # mcp: only with a server configured
             "orjson",  # imported after start-up's first records (ai/json_wire.py): it costs more than it saves there
             "tempfile", "shutil", "bz2", "lzma",  # the HTML export needs them, the first response does not
             "hashlib",  # only a version-1 session's migration and a cwd too deep for a file name need it
             "difflib",  # the edit tool's diff: imported by the first edit
             ) + (("ssl", "_ssl") if sys.version_info < (3, 14) else ())  # OpenSSL (~6 MB resident): mapped by
# the first HTTPS request (lazy_ssl.py, which checked asyncio's use of it up to 3.13)
FORBIDDEN_OWN = ("agent_forge.coding.export_html", "agent_forge.ai.tls", "agent_forge.coding.compaction.branch",
                 "agent_forge.coding.compaction.transcript", "agent_forge.coding.compaction.prompts",
                 "agent_forge.plugins.loader", "agent_forge.coding.tools.edit_apply",
                 "agent_forge.coding.tools.edit_match", "agent_forge.coding.tools.diff",
                 "agent_forge.coding.tools.line_window")
"""Modules of ours the first response does not need: the HTML export, the TLS context of a model request, the
branch summary of a tree navigation (and its transcript and prompts), the plugin loader when no plugin is found
(discovery is `plugins/discovery.py`), the edit tool's matching and diff and the read tool's line window (the
first call imports them)."""

# Runs the real CLI entry point in a child interpreter and reports the imported modules after get_state.
_CHILD = """
import atexit, json, sys
target = sys.argv[1]
atexit.register(lambda: open(target, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["agent-forge", "--mode", "rpc", "--no-session"]
from agent_forge.console import main
raise SystemExit(main())
"""


def test_get_state_imports_no_heavy_modules(tmp_path):
    out = tmp_path / "modules.json"
    env = {"AGENT_FORGE_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(out)], input=b'{"id":"s","type":"get_state"}\n',
                          capture_output=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    reply = json.loads(proc.stdout.splitlines()[0])
    assert reply["id"] == "s" and reply["success"] is True
    modules = json.loads(out.read_text())
    loaded = {name.split(".")[0] for name in modules}
    assert not loaded & set(FORBIDDEN), sorted(loaded & set(FORBIDDEN))
    own = [name for name in modules if name.startswith(FORBIDDEN_OWN)]
    assert not own, own


# Runs the real CLI entry point; the modules loaded when stdout is first written go to the file argv[1].
FIRST_WRITE_CHILD = """
import json, os, sys
from agent_forge.modes import stdout_guard
record, real = sys.argv[1], stdout_guard.write_out
def first_write(stream, data):
    if not os.path.exists(record):
        open(record, "w").write(json.dumps(sorted(sys.modules)))
    return real(stream, data)
stdout_guard.write_out = first_write
sys.argv = ["agent-forge", "--mode", "rpc", *sys.argv[2:]]
from agent_forge.console import main
raise SystemExit(main())
"""

LATE = ("asyncio", "agent_forge.coding.agent_session", "agent_forge.coding.factory", "agent_forge.agent.agent",
        "agent_forge.modes.rpc.server", "agent_forge.coding.resources.loader", "agent_forge.coding.tools",
        "agent_forge.coding.compaction.controller", "agent_forge.plugins.loader", "agent_forge.ai.registry_http")
"""Modules RPC mode's first `get_state` answer must not wait for (`modes/rpc/early.py`): the event loop, the
session, its tools, resources and compaction, the RPC server, the plugin loader."""

NOT_BEFORE_NEW = ("argparse", "gettext", "locale", "bisect", "agent_forge.cli_parser", "agent_forge.modes.approvals",
                  "agent_forge.coding.json_locate", "agent_forge.coding.session.damage", "agent_forge.coding.events",
                  "agent_forge.agent.events")
"""Nor, for a session without a file (`--no-session`), these: argparse and the full grammar (`cli_fast.py` parses
the spawn line), the approval flags' module, the event table, what only a configuration file's problem
(`json_locate`) or a session file read from disk (`session.damage`) needs."""

INSPECT = ("inspect", "ast", "dis", "tokenize")
"""`inspect` and its parsers (~5 ms): not before the first `get_state`, a resumed session's included (orjson's
`dataclasses` gets them when it makes a class: `lazy_inspect.py`)."""

WIRE_SHAPES = ("agent_forge.ai.types", "agent_forge.agent", "threading")
"""Not before the first `get_state`, a resumed session's included: the wire shapes' TypedDicts (~2 ms: the
prelude only checks thinking levels, `ai.options.THINKING_LEVELS`), the agent's types, `threading`."""

NOT_BEFORE_FIRST = ("dataclasses", *INSPECT)
"""Nor these (top-level names): `dataclasses` pulls in `inspect` and its parsers (~15 ms with the classes it
makes); the records of the first response are `agent_forge.records` classes."""

NOT_BEFORE_ANY = ("datetime", "copy", "weakref", "signal")
"""Not before the first `get_state`, a resumed session's included (top-level names): `datetime` (entry
timestamps come from `time`; orjson gets its C API from `_datetime`), `copy` and its `weakref` (a user
models.json's deep copies; `dataclasses`' `asdict`): ~7 M instructions of start-up's ~160 M (`lazy_inspect`);
`signal` and its enums (~3.6 M: `modes/early_signals.py` sets the handlers through `_signal`)."""

OWN_BUDGET = 70
"""Modules of ours imported when the first `get_state` is written (72 after issue 15's start-up work, with
`records`; 69 without the wire shapes and the agent's types; 72 with the console entry point and its stop-signal
guard, `console`, `modes.early_signals`, and the signal-cancelling loop's module; 67 without `coding.approvals`,
`session.stats`, `coding.messages`, `plugins.startup`, `queue_journal` and `message_persist`, with `lazy_re`; 68
with `lazy_inspect`, whose stand-in keeps `ipaddress` out, 4.5 M instructions less to the first answer; 70 with
`modes.output_pump`, which writes that answer without blocking, and `session.naming`, split out of `listing`): a new
one on that path is a cost every spawn pays; raise the budget only for one the first response needs."""


def test_the_first_get_state_is_answered_before_the_session_machinery_is_imported(tmp_path):
    out = tmp_path / "modules.json"
    env = {"AGENT_FORGE_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", FIRST_WRITE_CHILD, str(out), "--no-session"],
                          input=b'{"id":"s","type":"get_state"}\n', capture_output=True, env=env, cwd=tmp_path,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout.splitlines()[0])["id"] == "s"
    modules = set(json.loads(out.read_text()))
    assert "agent_forge.modes.rpc.early" in modules  # the list is the real one
    late = sorted(name for name in modules if name.split(".")[0] in FORBIDDEN + NOT_BEFORE_FIRST + NOT_BEFORE_ANY
                  or name.startswith(LATE + NOT_BEFORE_NEW + WIRE_SHAPES))
    assert not late, late
    own = sorted(name for name in modules if name.startswith("agent_forge"))
    assert len(own) <= OWN_BUDGET, own


_GC_CHILD = """
import atexit, gc, json, sys
target = sys.argv[1]
atexit.register(lambda: open(target, "w").write(json.dumps([gc.isenabled(), gc.get_freeze_count()])))
sys.argv = ["agent-forge", "--mode", "rpc", "--no-session"]
from agent_forge.console import main
raise SystemExit(main())
"""


def test_the_collector_paused_for_start_up_runs_again_once_rpc_serves(tmp_path):
    """cli_gc.py: start-up's objects are frozen and the collector is back on for the rest of the run."""
    out = tmp_path / "gc.json"
    env = {"AGENT_FORGE_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", _GC_CHILD, str(out)], input=b'{"id":"s","type":"get_state"}\n',
                          capture_output=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout.splitlines()[0])["success"] is True
    enabled, frozen = json.loads(out.read_text())
    assert enabled is True and frozen > 1000


_GC_AT_IMPORT_CHILD = """
import gc, json, sys
target, seen = sys.argv[1], {}
class Watch:  # notes whether the collector runs when the command line's modules are first looked for
    def find_spec(self, name, path=None, target=None):
        if name in ("agent_forge.modes.early_signals", "agent_forge.cli"):
            seen.setdefault(name, gc.isenabled())
sys.meta_path.insert(0, Watch())
import atexit
atexit.register(lambda: open(target, "w").write(json.dumps([seen, gc.isenabled()])))
sys.argv = ["agent-forge", "--mode", "rpc", "--no-session"]
from agent_forge.console import main
raise SystemExit(main())
"""


def test_the_collector_is_paused_before_the_command_line_is_imported(tmp_path):
    """`console.main` pauses it first: the imports of the command line (typing, re, pathlib, ...) make only
    objects that live as long as the process, and their collections (~3 M instructions) would find no garbage."""
    out = tmp_path / "gc.json"
    env = {"AGENT_FORGE_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", _GC_AT_IMPORT_CHILD, str(out)],
                          input=b'{"id":"s","type":"get_state"}\n', capture_output=True, env=env, cwd=tmp_path,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    seen, enabled_at_exit = json.loads(out.read_text())
    assert seen == {"agent_forge.modes.early_signals": False, "agent_forge.cli": False}
    assert enabled_at_exit is True  # resumed once RPC serves


def test_resuming_an_intact_session_imports_no_damage_report(tmp_path):
    """`session/damage.py` words what a damaged file lost: an intact file's resume does not import it; nor
    `inspect`, which only orjson's `dataclasses` would import."""
    state, record = _first_answer(tmp_path, FIRST_WRITE_CHILD)
    assert "sessionWarnings" not in state
    modules = set(record)
    assert "agent_forge.coding.session.reading" in modules and "agent_forge.coding.session.damage" not in modules
    assert "orjson" in modules and not modules & set(INSPECT), sorted(modules & set(INSPECT))
    assert "platform" not in modules  # uuid (orjson's) asks it one question: `lazy_inspect.deferred_platform`
    assert not modules & set(NOT_BEFORE_ANY), sorted(modules & set(NOT_BEFORE_ANY))  # orjson's, dataclasses', ours
    unneeded = ("agent_forge.coding.queue_journal", "agent_forge.coding.approvals", "agent_forge.coding.session.stats")
    assert not modules & set(unneeded), sorted(modules & set(unneeded))  # no queued message; the setting; no stats
    shapes = sorted(name for name in modules if name.startswith(WIRE_SHAPES))
    assert not shapes, shapes


# Runs the real CLI entry point; the patterns `re` holds compiled when stdout is first written go to argv[1].
_PATTERNS_CHILD = FIRST_WRITE_CHILD.replace(
    "json.dumps(sorted(sys.modules))",
    "json.dumps(sorted(str(key[1]) for cache in (getattr(re, '_cache', {}), getattr(re, '_cache2', {}))"
    " for key in cache))",
).replace("import json, os, sys", "import json, os, re, sys")


def test_the_first_get_state_of_a_resumed_session_compiles_none_of_our_patterns_it_does_not_use(tmp_path):
    """Patterns for input the first answer never sees (environment variables in keys, context window sizes,
    dated model ids, session ids and names, lone surrogates in text) are compiled at their first use."""
    from agent_forge.ai import json_wire
    from agent_forge.coding import state
    from agent_forge.coding.models import control, key_values, selection
    from agent_forge.coding.session import home

    compiled = set(_first_answer(tmp_path, _PATTERNS_CHILD)[1])
    assert compiled  # the list is the real one (json's own patterns, at least)
    ours = {json_wire._SURROGATE, json_wire._PAIR, key_values._CONTROL, key_values._BARE_ENV_NAME,
            key_values._INTERPOLATION, control._COMPACT_SIZE, selection._DATED_ID, home.SESSION_ID,
            state._UNPRINTABLE}
    assert not compiled & {str(getattr(p, "pattern", p)) for p in ours}


# Runs the real CLI entry point; how often `compile` ran when stdout is first written goes to argv[1].
_COMPILES_CHILD = FIRST_WRITE_CHILD.replace("json.dumps(sorted(sys.modules))", "json.dumps(compiles)").replace(
    "import json, os, sys", """import builtins, json, os, sys
compiles = []
real_compile = builtins.compile
def counted(source, *args, **kwargs):
    compiles.append(str(source)[:80])
    return real_compile(source, *args, **kwargs)
builtins.compile = counted""")


def test_the_first_get_state_of_a_resumed_session_compiles_no_source(tmp_path):
    """No `compile` before the first answer: typing compiles each annotation it holds as text (a `ForwardRef`:
    `typing.NamedTuple` fields, class-form TypedDicts under `from __future__ import annotations`, `typing`
    generics of names in quotes), and the first `compile` of a process costs ~1.5 ms (it makes the `ast` types)."""
    assert _first_answer(tmp_path, _COMPILES_CHILD)[1] == []


def _first_answer(tmp_path, child: str) -> tuple[dict, list]:
    """The first `get_state` answer's data of a resumed one-message session run by `child` (FIRST_WRITE_CHILD
    or a variant), and what the child recorded then."""
    from agent_forge.coding.session.store import SessionStore

    store = SessionStore.create(tmp_path, tmp_path / "sessions")
    store.append_message({"role": "user", "content": "hi", "timestamp": 1})
    store.close()
    out = tmp_path / "record.json"
    env = {"AGENT_FORGE_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", child, str(out), "--session", str(store.path)],
                          input=b'{"id":"s","type":"get_state"}\n', capture_output=True, env=env, cwd=tmp_path,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    state = json.loads(proc.stdout.splitlines()[0])["data"]
    assert state["messageCount"] == 1
    return state, json.loads(out.read_text())
