"""End to end: in a real terminal (tmux), `/reload` and plugins. A plugin whose async setup waits (a server that
never answers): the spinner shows with the abort hint, and Escape or Ctrl+C stops the reload's plugin step, says
so in one line (naming the plugin by its id), the new plugins already set up are shut down, and the plugins
running before stay as they were (their old code answers, their modules too); exit still works, also after a
setup that swallows its cancellation. A plugin named by module (settings `plugins`, an installed package
on the path) runs its current source after `/reload`; one whose package was imported before it loaded keeps its
code, and the notice says so."""

from __future__ import annotations

import pytest

from support.stale_source import rewrite_in_the_same_second, with_bytecode_cache
from support.tui import flat, needs_tmux

pytestmark = needs_tmux

SETUP_WAITS = '''
import asyncio
from pathlib import Path


async def setup(plugin):
    if Path("hold-setup").exists():
        Path("setup-started").touch()
        WAIT

    @plugin.command("hello")
    async def hello(args, ctx):
        ctx.ui.notify("hello from VERSION")
'''

WAITS = "await asyncio.sleep(3600)  # only an abort ends it"
STUBBORN = """while True:  # swallows its cancellation: it is abandoned, never waited for
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                pass"""
KEPT = "reloaded all but the plugins: the setup of holding was stopped, the plugins stay as they were"


def plugin_text(version: str, wait: str = WAITS) -> str:
    return SETUP_WAITS.replace("VERSION", version).replace("WAIT", wait)


def hello(term, version: str) -> None:
    term.type("/hello")
    term.press("Enter")
    term.wait_for(f"hello from {version}")


@pytest.mark.parametrize(("key", "wait"), [("Escape", WAITS), ("C-c", STUBBORN)])
def test_escape_stops_a_reload_whose_plugin_setup_waits_and_the_old_plugins_stay(
        terminal, fake_llm, agent_env_factory, tmp_path, key, wait):
    plugin = tmp_path / "holding.py"
    plugin.write_text(plugin_text("v1", wait))
    term = terminal("-e", str(plugin), env=agent_env_factory(settings={"pluginSetupTimeoutMs": 120000}))
    hello(term, "v1")
    plugin.write_text(plugin_text("v2", wait))
    (terminal.work / "hold-setup").touch()
    term.type("/reload")
    term.press("Enter")
    term.wait_for_all("reloading… (", "s · esc to interrupt)")
    term.wait_until(lambda: (terminal.work / "setup-started").exists(), "the new setup to start")
    term.press(key)
    term.wait_until(lambda: KEPT in flat(term), "the reload's notice")
    term.wait_until(lambda: "reloading…" not in term.screen().split(KEPT[:30])[-1], "the spinner to go")
    assert "plugins: 1 loaded, unchanged" in flat(term)
    assert "did not finish within" not in flat(term)  # stopped by the key, not timed out
    hello(term, "v1")  # the plugin running before answers, with its code
    (terminal.work / "hold-setup").unlink()
    term.type("/reload")
    term.press("Enter")
    term.wait_until(lambda: "plugins: 1 loaded (holding changed)" in flat(term), "the second reload")
    hello(term, "v2")
    term.press("C-d")
    assert term.exit_code() == 0


INSTALLED = '''
from .words import WORD


def setup(plugin):
    @plugin.command("installed")
    async def installed(args, ctx):
        ctx.ui.notify("installed says " + WORD)
'''

USES_THE_LIBRARY = '''
import forge_library  # a library this plugin uses: imported before the module plugin of that name loads


def setup(plugin):
    pass
'''


def test_reload_runs_the_current_source_of_a_plugin_named_by_module_and_names_one_that_keeps_its_code(
        terminal, fake_llm, agent_env_factory, tmp_path):
    site = tmp_path / "site"
    (site / "forge_installed").mkdir(parents=True)
    (site / "forge_installed" / "__init__.py").write_text(INSTALLED)
    words = site / "forge_installed" / "words.py"
    words.write_text("WORD = 'v1'\n")
    (site / "forge_library.py").write_text(RELOAD_LIBRARY.replace("VERSION", "v1"))
    user = tmp_path / "user.py"
    user.write_text(USES_THE_LIBRARY)
    env = agent_env_factory(settings={"plugins": ["forge_installed"]})
    env["PYTHONPATH"] = str(site)
    term = terminal("-e", str(user), "-e", "forge_library", env=with_bytecode_cache(env))
    term.type("/installed")
    term.press("Enter")
    term.wait_for("installed says v1")
    rewrite_in_the_same_second(words, "WORD = 'v2'\n")
    (site / "forge_library.py").write_text(RELOAD_LIBRARY.replace("VERSION", "v2"))
    term.type("/reload")
    term.press("Enter")
    term.wait_until(lambda: "plugins: 3 loaded (forge_installed changed)" in flat(term), "the reload summary")
    assert ("plugins running the code first imported (restart to run an edit): forge_library (its package "
            "forge_library was imported before the plugin loaded)") in flat(term)
    term.type("/installed")
    term.press("Enter")
    term.wait_for("installed says v2")
    term.type("/library")
    term.press("Enter")
    term.wait_for("library says v1")  # as the notice said


RELOAD_LIBRARY = '''
def setup(plugin):
    @plugin.command("library")
    async def library(args, ctx):
        ctx.ui.notify("library says VERSION")
'''


def test_exit_while_a_reload_waits_for_a_plugin_setup_ends_the_process(terminal, fake_llm, agent_env_factory,
                                                                        tmp_path):
    plugin = tmp_path / "holding.py"
    plugin.write_text(plugin_text("v1", STUBBORN))
    term = terminal("-e", str(plugin), env=agent_env_factory(settings={"pluginSetupTimeoutMs": 120000}))
    (terminal.work / "hold-setup").touch()
    term.type("/reload")
    term.press("Enter")
    term.wait_until(lambda: (terminal.work / "setup-started").exists(), "the new setup to start")
    term.press("C-d")
    assert term.exit_code() == 0


COUNTER = '''
from pathlib import Path

MARKS = Path(MARKS_DIR)


def setup(plugin):
    (MARKS / "setup-VERSION").touch()

    @plugin.on("session_shutdown")
    async def bye(event, ctx):
        (MARKS / "shutdown-VERSION").touch()

    @plugin.command("word")
    async def word(args, ctx):
        from .words import WORD  # imported at the call: the package's modules must be this load's

        ctx.ui.notify("word is " + WORD)
'''


def test_a_stopped_reload_shuts_down_the_new_plugins_already_set_up_and_the_old_ones_keep_their_modules(
        terminal, fake_llm, agent_env_factory, tmp_path):
    """An abort during a later plugin's setup dropped the new plugins already set up without their
    `session_shutdown`, and the running plugins' modules were already replaced by the new load's: a lazy import
    in an old command ran the new code."""
    marks = tmp_path / "marks"
    marks.mkdir()
    counter = tmp_path / "counter"
    counter.mkdir()
    source = COUNTER.replace("MARKS_DIR", repr(str(marks)))
    (counter / "__init__.py").write_text(source.replace("VERSION", "v1"))
    (counter / "words.py").write_text("WORD = 'v1'\n")
    holding = tmp_path / "holding.py"
    holding.write_text(plugin_text("v1"))
    term = terminal("-e", str(counter), "-e", str(holding),
                    env=agent_env_factory(settings={"pluginSetupTimeoutMs": 120000}))
    term.type("/word")
    term.press("Enter")
    term.wait_for("word is v1")
    (counter / "__init__.py").write_text(source.replace("VERSION", "v2"))
    (counter / "words.py").write_text("WORD = 'v2'\n")
    (terminal.work / "hold-setup").touch()
    term.type("/reload")
    term.press("Enter")
    term.wait_until(lambda: (terminal.work / "setup-started").exists(), "the new setup to start")
    assert (marks / "setup-v2").exists()  # the new counter was set up before holding's setup began
    term.press("Escape")
    term.wait_until(lambda: KEPT in flat(term), "the reload's notice")
    assert sorted(p.name for p in marks.iterdir()) == ["setup-v1", "setup-v2", "shutdown-v2"]
    term.type("/word")
    term.press("Enter")
    term.wait_until(lambda: flat(term).count("word is") == 2, "the old command's answer")
    assert flat(term).count("word is v1") == 2  # the running plugin's own modules, not the dropped load's


def test_a_stopped_reload_names_a_package_plugin_by_its_id(terminal, fake_llm, agent_env_factory, tmp_path):
    """The notice named a package directory `holding.d` by `Path.stem` (`holding`), not by the id the loader gives
    it and the reload report uses."""
    package = tmp_path / "holding.d"
    package.mkdir()
    (package / "__init__.py").write_text(plugin_text("v1"))
    term = terminal("-e", str(package), env=agent_env_factory(settings={"pluginSetupTimeoutMs": 120000}))
    (terminal.work / "hold-setup").touch()
    term.type("/reload")
    term.press("Enter")
    term.wait_until(lambda: (terminal.work / "setup-started").exists(), "the new setup to start")
    term.press("Escape")
    term.wait_until(lambda: "was stopped" in flat(term), "the reload's notice")
    assert "the setup of holding.d was stopped, the plugins stay as they were" in flat(term)
    (terminal.work / "hold-setup").unlink()
    (package / "__init__.py").write_text(plugin_text("v2"))
    term.type("/reload")
    term.press("Enter")
    term.wait_until(lambda: "plugins: 1 loaded (holding.d changed)" in flat(term), "the second reload")
