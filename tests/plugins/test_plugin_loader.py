"""Plugin discovery and loading with real files: plugin directories, settings lists, `-e` values, entry points
of a distribution on sys.path, trust gating, and every kind of load failure."""

from __future__ import annotations

import importlib.util
import py_compile
import sys
import textwrap
from pathlib import Path

import pytest

from support.stale_source import rewrite_in_the_same_second

from agent_forge.plugins.entry_points import entry_points
from agent_forge.plugins.loader import (
    ENTRY_POINT_GROUP,
    PluginLoadError,
    PluginSource,
    cli_source,
    discover,
    load_plugin,
    plugin_files,
)

SETUP = "def setup(plugin):\n    plugin.register_command({name!r}, lambda args, ctx: None)\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def plugin_file(path: Path, command: str = "cmd") -> Path:
    return write(path, SETUP.format(name=command))


def make_dist(site: Path, dist: str, module: str, body: str, entries: str) -> None:
    write(site / f"{module}.py", body)
    write(site / f"{dist}-1.0.dist-info" / "entry_points.txt", entries)
    write(site / f"{dist}-1.0.dist-info" / "METADATA", f"Name: {dist}\nVersion: 1.0\n")


@pytest.fixture
def dirs(tmp_path):
    agent = tmp_path / "agent"
    cwd = tmp_path / "project"
    project_plugins = cwd / ".agent-forge" / "agent" / "plugins"
    agent.mkdir()
    cwd.mkdir()
    return agent, cwd, project_plugins


def test_plugin_files_lists_modules_and_packages_by_name(tmp_path):
    plugin_file(tmp_path / "b.py")
    plugin_file(tmp_path / "a_pkg" / "__init__.py")
    plugin_file(tmp_path / "_private.py")
    plugin_file(tmp_path / ".hidden.py")
    write(tmp_path / "notes.txt", "x")
    (tmp_path / "no_init").mkdir()
    assert [p.name for p in plugin_files(tmp_path)] == ["a_pkg", "b.py"]
    assert plugin_files(tmp_path / "missing") == []


def test_cli_source_tells_paths_from_modules(tmp_path):
    plugin_file(tmp_path / "local.py")
    assert cli_source("local.py", str(tmp_path)) == PluginSource(str(tmp_path / "local.py"), "path", "temporary")
    assert cli_source("missing.py", str(tmp_path)).kind == "path"
    assert cli_source("sub/dir", str(tmp_path)).kind == "path"
    assert cli_source("pkg.module:setup", str(tmp_path)) == PluginSource("pkg.module:setup", "module", "temporary")


def test_discover_order_scopes_and_dedupe(dirs, monkeypatch):
    agent, cwd, project_plugins = dirs
    user = plugin_file(agent / "plugins" / "user_one.py")
    listed = plugin_file(agent / "extra" / "listed.py")
    project = plugin_file(project_plugins / "proj.py")
    project_listed = plugin_file(cwd / ".agent-forge" / "agent" / "more" / "p2.py")
    site = agent.parent / "site"
    make_dist(site, "forge_extra", "forge_extra_mod", SETUP.format(name="ep"),
              f"[{ENTRY_POINT_GROUP}]\nextra = forge_extra_mod:setup\n")
    monkeypatch.syspath_prepend(str(site))
    found = discover(str(cwd), agent, cli_plugins=[str(user), "some.module"],
                     user_settings={"plugins": ["extra/listed.py", 3]}, project_settings={"plugins": ["more/p2.py"]},
                     project_trusted=True)
    assert [(s.target, s.kind, s.scope, s.origin) for s in found.sources] == [
        (str(user), "path", "temporary", "top-level"),  # -e first; the same file from the agent dir is not loaded twice
        ("some.module", "module", "temporary", "top-level"),
        (str(listed), "path", "user", "top-level"),
        ("extra = forge_extra_mod:setup (forge_extra-1.0.dist-info)", "entry_point", "user", "package"),
        (str(project), "path", "project", "top-level"),
        (str(project_listed), "path", "project", "top-level"),
    ]
    assert found.skipped == []


def test_untrusted_project_plugins_are_skipped_and_disabled_projects_ignored(dirs):
    agent, cwd, project_plugins = dirs
    project = plugin_file(project_plugins / "proj.py")
    found = discover(str(cwd), agent, project_settings={"plugins": ["other.module"]}, project_trusted=False)
    assert found.sources == [] and found.skipped == [str(project), "other.module"]
    ignored = discover(str(cwd), agent, project_settings={"plugins": ["x"]}, project_enabled=False)
    assert ignored.sources == [] and ignored.skipped == []


def test_no_plugins_keeps_only_explicit_ones(dirs):
    agent, cwd, project_plugins = dirs
    plugin_file(agent / "plugins" / "user.py")
    plugin_file(project_plugins / "proj.py")
    found = discover(str(cwd), agent, cli_plugins=["explicit.mod"], no_plugins=True, project_trusted=True)
    assert [s.target for s in found.sources] == ["explicit.mod"] and found.skipped == []


async def test_load_a_file_a_package_and_same_named_files_apart(tmp_path):
    one = await load_plugin(PluginSource(str(plugin_file(tmp_path / "a" / "plugin.py", "one")), "path", "user"))
    two = await load_plugin(PluginSource(str(plugin_file(tmp_path / "b" / "plugin.py", "two")), "path", "project"))
    write(tmp_path / "pkg" / "helper.py", "NAME = 'from-helper'\n")
    write(tmp_path / "pkg" / "__init__.py", """
        from .helper import NAME

        async def setup(plugin):
            plugin.register_command(NAME, lambda args, ctx: None)
    """)
    package = await load_plugin(PluginSource(str(tmp_path / "pkg"), "path", "user"))
    assert [(p.id, p.scope, [c.name for c in p.commands]) for p in (one, two, package)] == [
        ("plugin", "user", ["one"]), ("plugin", "project", ["two"]), ("pkg", "user", ["from-helper"])]
    assert one.path == str(tmp_path / "a" / "plugin.py") and package.path == str(tmp_path / "pkg")


async def test_load_a_module_an_attribute_and_an_entry_point(tmp_path, monkeypatch):
    write(tmp_path / "site" / "forge_mod.py", """
        def setup(plugin):
            plugin.register_command("from-module", lambda args, ctx: None)

        def other(plugin):
            plugin.register_command("from-attribute", lambda args, ctx: None)
    """)
    make_dist(tmp_path / "site", "forge_dist", "forge_dist_mod", SETUP.format(name="from-entry-point"),
              f"[console_scripts]\nx = y:z\n\n[{ENTRY_POINT_GROUP}]\nmine = forge_dist_mod [extra]\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    module = await load_plugin(PluginSource("forge_mod", "module", "temporary"))
    attribute = await load_plugin(PluginSource("forge_mod:other", "module", "temporary"))
    [point] = entry_points(ENTRY_POINT_GROUP, [str(tmp_path / "site")])
    entry = await load_plugin(PluginSource("mine", "entry_point", "user", "package", point))
    assert [c.name for p in (module, attribute, entry) for c in p.commands] == [
        "from-module", "from-attribute", "from-entry-point"]
    assert (module.id, attribute.id, entry.id, entry.origin) == ("forge_mod", "forge_mod", "mine", "package")
    assert entry.path == str(tmp_path / "site" / "forge_dist_mod.py")


@pytest.mark.parametrize("body, message", [
    ("x = 1\n", "defines no setup(plugin) function"),
    ("def setup(plugin:\n", "SyntaxError"),
    ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
    ("def setup(plugin):\n    raise RuntimeError('no way')\n", "RuntimeError: no way"),
    ("def setup(plugin):\n    plugin.on('nope', print)\n", "PluginError: Unknown event 'nope'"),
    ("import does_not_exist_anywhere\n", "ModuleNotFoundError"),
])
async def test_load_failures_name_the_plugin_and_the_reason(tmp_path, body, message):
    path = write(tmp_path / "broken.py", body)
    with pytest.raises(PluginLoadError) as info:
        await load_plugin(PluginSource(str(path), "path", "user"))
    assert message in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize("target", ["missing.py", "not_a_package", "notes.txt"])
async def test_paths_that_are_not_plugins(tmp_path, target):
    (tmp_path / "not_a_package").mkdir()
    write(tmp_path / "notes.txt", "hello")
    with pytest.raises(PluginLoadError, match="plugin"):
        await load_plugin(PluginSource(str(tmp_path / target), "path", "user"))


async def test_unknown_module_fails_cleanly():
    with pytest.raises(PluginLoadError, match="ModuleNotFoundError"):
        await load_plugin(PluginSource("no_such_module_for_forge", "module", "temporary"))


def test_entry_points_parser_dedupes_distributions_and_skips_junk(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    write(first / "Forge_Thing-2.0.dist-info" / "entry_points.txt",
          f"# comment\n[{ENTRY_POINT_GROUP}]\none = a.b:c\nbroken line\n = nothing\n[other]\ntwo = x:y\n")
    write(second / "forge.thing-1.0.dist-info" / "entry_points.txt", f"[{ENTRY_POINT_GROUP}]\nshadowed = q:r\n")
    write(second / "old_style.egg-info" / "entry_points.txt", f"[{ENTRY_POINT_GROUP}]\negg = e.f\n")
    (second / "bad-1.0.dist-info").mkdir()
    (second / "bad-1.0.dist-info" / "entry_points.txt").write_bytes(b"\xff\xfe[")
    found = entry_points(ENTRY_POINT_GROUP, [str(first), str(second), str(tmp_path / "missing")])
    assert [(e.name, e.value) for e in found] == [("one", "a.b:c"), ("egg", "e.f")]


def commands_of(plugin) -> list[str]:
    return [c.name for c in plugin.commands]


async def test_a_plugin_file_loaded_again_runs_its_current_source_whatever_its_bytecode_cache(tmp_path):
    assert not sys.dont_write_bytecode  # tests/conftest.py: the cache is on, as for real users
    path = plugin_file(tmp_path / "same.py", "v1")
    source = PluginSource(str(path), "path", "user")
    first = await load_plugin(source)
    rewrite_in_the_same_second(path, SETUP.format(name="v2"))
    second = await load_plugin(source)
    assert (commands_of(first), commands_of(second)) == (["v1"], ["v2"])
    assert first.source_digest != second.source_digest
    assert (await load_plugin(source)).source_digest == second.source_digest
    assert checked_hash_pyc(path)  # the cache kept checks the source's bytes, not its size and mtime


def checked_hash_pyc(source: Path) -> bool:
    """Whether the `.pyc` of `source` is a checked-hash one (PEP 552: flags 0b11)."""
    return Path(importlib.util.cache_from_source(str(source))).read_bytes()[4:8] == (3).to_bytes(4, "little")


async def test_a_timestamp_pyc_that_matches_the_size_and_mtime_is_not_trusted(tmp_path):
    path = plugin_file(tmp_path / "stamped.py", "v1")
    # what a plain import, or an older agent-forge, leaves: size and mtime of the source
    py_compile.compile(str(path), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    rewrite_in_the_same_second(path, SETUP.format(name="v2"))
    assert commands_of(await load_plugin(PluginSource(str(path), "path", "user"))) == ["v2"]
    assert checked_hash_pyc(path)


PACKAGE_INIT = """
    import importlib

    from .helper import NAME

    def setup(plugin):
        deep = importlib.import_module(__name__ + ".sub.deep")  # an absolute import of its own module
        plugin.register_command(NAME, lambda args, ctx: None)
        plugin.register_command(deep.NAME, lambda args, ctx: None)
"""


async def test_a_package_plugin_loaded_again_runs_the_current_source_of_its_submodules(tmp_path):
    package = tmp_path / "pkg"
    write(package / "__init__.py", PACKAGE_INIT)
    helper = write(package / "helper.py", "NAME = 'helper-v1'\n")
    deep = write(package / "sub" / "deep.py", "NAME = 'deep-v1'\n")
    write(package / "sub" / "__init__.py", "")
    source = PluginSource(str(package), "path", "user")
    first = await load_plugin(source)
    rewrite_in_the_same_second(helper, "NAME = 'helper-v2'\n")
    rewrite_in_the_same_second(deep, "NAME = 'deep-v2'\n")
    second = await load_plugin(source)
    assert commands_of(first) == ["helper-v1", "deep-v1"] and commands_of(second) == ["helper-v2", "deep-v2"]
    assert first.source_digest != second.source_digest
    assert all(checked_hash_pyc(module) for module in (package / "__init__.py", helper, deep))


async def test_a_submodule_that_is_gone_is_not_imported_from_the_earlier_load(tmp_path):
    package = tmp_path / "pkg"
    write(package / "__init__.py", PACKAGE_INIT)
    helper = write(package / "helper.py", "NAME = 'helper-v1'\n")
    write(package / "sub" / "__init__.py", "")
    write(package / "sub" / "deep.py", "NAME = 'deep-v1'\n")
    source = PluginSource(str(package), "path", "user")
    await load_plugin(source)
    helper.unlink()
    with pytest.raises(PluginLoadError, match="No module named"):
        await load_plugin(source)
    write(package / "helper.py", "NAME = 'helper-v3'\n")
    assert commands_of(await load_plugin(source)) == ["helper-v3", "deep-v1"]


MODULE_PACKAGE_INIT = """
    from .words import NAME

    def setup(plugin):
        plugin.register_command(NAME, lambda args, ctx: None)
"""


@pytest.mark.parametrize("kind", ["module", "entry_point"])
async def test_a_module_or_entry_point_plugin_loaded_again_runs_its_current_source(tmp_path, monkeypatch, kind):
    site = tmp_path / "site"
    write(site / f"forge_fresh_{kind}" / "__init__.py", MODULE_PACKAGE_INIT)
    words = write(site / f"forge_fresh_{kind}" / "words.py", "NAME = 'words-v1'\n")
    write(site / f"forge_fresh_{kind}-1.0.dist-info" / "entry_points.txt",
          f"[{ENTRY_POINT_GROUP}]\nfresh = forge_fresh_{kind}:setup\n")
    monkeypatch.syspath_prepend(str(site))
    [point] = entry_points(ENTRY_POINT_GROUP, [str(site)])
    source = (PluginSource(f"forge_fresh_{kind}", "module", "user") if kind == "module"
              else PluginSource("fresh", "entry_point", "user", "package", point))
    first = await load_plugin(source)
    rewrite_in_the_same_second(words, "NAME = 'words-v2'\n")
    second = await load_plugin(source)
    assert (commands_of(first), commands_of(second)) == (["words-v1"], ["words-v2"])
    assert first.source_digest != second.source_digest and second.kept_code is None
    assert (await load_plugin(source)).source_digest == second.source_digest
    assert checked_hash_pyc(words)
    assert sys.modules[f"forge_fresh_{kind}.words"].NAME == "words-v2"


async def test_a_module_plugin_whose_package_was_imported_before_keeps_its_code_and_says_why(tmp_path, monkeypatch):
    write(tmp_path / "forge_shared.py", SETUP.format(name="shared-v1"))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("forge_shared")  # a library the agent or another plugin imported first

    rewrite_in_the_same_second(tmp_path / "forge_shared.py", SETUP.format(name="shared-v2"))
    plugin = await load_plugin(PluginSource("forge_shared", "module", "user"))
    again = await load_plugin(PluginSource("forge_shared", "module", "user"))
    assert commands_of(plugin) == commands_of(again) == ["shared-v1"]  # not split in two
    assert again.kept_code == "its package forge_shared was imported before the plugin loaded"
    assert again.source_digest is None


async def test_two_plugins_of_one_package_loaded_in_one_pass_share_its_modules(tmp_path, monkeypatch):
    write(tmp_path / "forge_pair" / "__init__.py", "")
    write(tmp_path / "forge_pair" / "state.py", "SEEN = []\n")
    for name in ("a", "b"):
        write(tmp_path / "forge_pair" / f"{name}.py", f"""
            from . import state

            def setup(plugin):
                state.SEEN.append({name!r})
                plugin.register_command("pair-" + "-".join(state.SEEN), lambda args, ctx: None)
        """)
    monkeypatch.syspath_prepend(str(tmp_path))
    for _ in range(2):  # the second pass imports the package anew, once
        fresh: set[str] = set()
        a = await load_plugin(PluginSource("forge_pair.a", "module", "user"), fresh=fresh)
        b = await load_plugin(PluginSource("forge_pair.b", "module", "user"), fresh=fresh)
        assert (commands_of(a), commands_of(b)) == (["pair-a"], ["pair-a-b"])
        assert a.kept_code is b.kept_code is None and a.source_digest and b.source_digest
