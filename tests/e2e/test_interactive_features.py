"""End to end: interactive-mode features in a real terminal (tmux) against the loopback model server: `/tree`
labels and branch summaries, `/reload`, `/settings` applied at once, argument hints in the `/` menu, theme
files, the collapsed resource list, a terminal without a size and a 5 MB paste."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support.stale_source import rewrite_in_the_same_second, with_bytecode_cache
from support.tui import ask, choose, flat, needs_tmux, user_texts

pytestmark = needs_tmux


def session_entries(agent_env: dict[str, str]) -> list[dict]:
    files = list((Path(agent_env["AGENT_FORGE_DIR"]) / "sessions").rglob("*.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines()]


def test_tree_labels_an_entry_and_summarises_the_branch_left(terminal, fake_llm, agent_env):
    fake_llm.set_script([{"text": "Answer one."}, {"text": "Answer two."},
                         {"text": "SUMMARY: the user also asked question two."}, {"text": "Answer three."}])
    term = terminal()
    ask(term, "question one", "Answer one.")
    ask(term, "question two", "Answer two.")
    term.type("/tree")
    term.press("Enter")
    choose(term, "Session tree", "Answer one", "assistant: Answer one.")
    choose(term, "What to do with this entry?", "Label", "Label this entry")
    term.wait_for("Label (empty clears it):")
    term.type("checkpoint")
    term.press("Enter")
    term.wait_for("label set: checkpoint")
    # the tree is shown again, with the label
    term.wait_for_all("[checkpoint] assistant: Answer one.", "assistant: Answer two. (here)")
    labels = [e for e in session_entries(agent_env) if e["type"] == "label"]
    assert len(labels) == 1 and labels[0]["label"] == "checkpoint"
    choose(term, "Session tree", "checkpoint", "[checkpoint] assistant: Answer one.")
    choose(term, "What to do with this entry?", "summary", "Continue from here, with a summary of the branch left")
    term.wait_for("continuing from the chosen entry (the branch left is summarised)")
    assert "question two" in json.dumps(fake_llm.requests[2]["body"]["messages"])  # the branch left, summarised
    term.type("/tree")
    term.press("Enter")
    screen = term.wait_for("branch summary: SUMMARY: the user also asked question two.")
    term.press("Escape")
    term.wait_until(lambda: "Session tree" not in term.screen(), "the tree to close")
    ask(term, "question three", "Answer three.")
    sent = json.dumps(fake_llm.requests[3]["body"]["messages"])
    assert "SUMMARY: the user also asked question two." in sent and "Answer two." not in sent
    assert user_texts(fake_llm.requests[3])[0] == "question one"


def test_tree_clears_a_label(terminal, fake_llm, agent_env):
    fake_llm.set_script([{"text": "Answer one."}])
    term = terminal()
    ask(term, "question one", "Answer one.")
    for action, needle in (("Label this entry", "Label"), ("Clear the label", "Clear")):
        term.type("/tree")
        term.press("Enter")
        row = "user: question one" if action == "Label this entry" else "[start] user: question one"
        choose(term, "Session tree", "question", row)
        choose(term, "What to do with this entry?", needle, action)
        if action == "Label this entry":
            term.wait_for("Label (empty clears it):")
            term.type("start")
            term.press("Enter")
            term.wait_for("[start] user: question one")
            term.press("Escape")
            term.wait_until(lambda: "Session tree" not in term.screen(), "the tree to close")
    term.wait_for("label cleared")
    screen = term.wait_for("user: question one")
    assert "[start]" not in screen.split("label cleared")[-1]
    labels = [e for e in session_entries(agent_env) if e["type"] == "label"]
    assert [e.get("label") for e in labels] == ["start", None]


RELOAD_PLUGIN = '''
def setup(plugin):
    @plugin.command("hello", description="says which version runs")
    async def hello(args, ctx):
        ctx.ui.notify("hello from VERSION")
'''


def test_reload_reads_context_files_templates_and_plugins_again(terminal, fake_llm, tmp_path, agent_env):
    fake_llm.set_script([{"text": "Reloaded answer."}])
    plugin = tmp_path / "hello.py"
    plugin.write_text(RELOAD_PLUGIN.replace("VERSION", "v1"))
    term = terminal("-e", str(plugin), env=with_bytecode_cache(agent_env))  # the users' default
    term.type("/hello")
    term.press("Enter")
    term.wait_for("hello from v1")
    rewrite_in_the_same_second(plugin, RELOAD_PLUGIN.replace("VERSION", "v2"))
    (terminal.work / "AGENTS.md").write_text("Always answer in haiku.\n")
    prompts = Path(agent_env["AGENT_FORGE_DIR"]) / "prompts"
    prompts.mkdir()
    (prompts / "greet.md").write_text("---\ndescription: greets\n---\nSay hello to $1.\n")
    term.type("/reload")
    term.press("Enter")
    summary = ("plugins: 1 loaded (hello changed)", "context: 1 loaded (+", "templates: 1 loaded (+/greet)",
               "skills: 0 loaded, unchanged")
    term.wait_until(lambda: all(part in flat(term) for part in summary)  # a long path wraps
                    and "AGENTS.md)" in term.screen().replace("\n", ""), "the whole reload summary")
    term.type("/hello")
    term.press("Enter")
    term.wait_for("hello from v2")
    term.type("/greet Ada")
    term.press("Enter")
    term.wait_for("Reloaded answer.")
    request = fake_llm.requests[0]["body"]["messages"]
    assert "Always answer in haiku." in json.dumps(request[0]) and user_texts(fake_llm.requests[0]) == [
        "Say hello to Ada."]


PACKAGE_PLUGIN = '''
import importlib

from .words import GREETING


def setup(plugin):
    @plugin.command("greet-pkg", description="says which versions of its modules run")
    async def greet(args, ctx):
        deep = importlib.import_module(__name__ + ".sub.deep")  # an absolute import of its own module
        ctx.ui.notify(f"{GREETING} and {deep.TAIL}")
'''


def test_reload_runs_the_current_source_of_a_package_plugins_submodules(terminal, fake_llm, tmp_path, agent_env):
    package = Path(agent_env["AGENT_FORGE_DIR"]) / "plugins" / "greeter"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text(PACKAGE_PLUGIN)
    (package / "words.py").write_text("GREETING = 'words-v1'\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "deep.py").write_text("TAIL = 'deep-v1'\n")
    term = terminal(env=with_bytecode_cache(agent_env))
    term.type("/greet-pkg")
    term.press("Enter")
    term.wait_for("words-v1 and deep-v1")
    rewrite_in_the_same_second(package / "words.py", "GREETING = 'words-v2'\n")
    rewrite_in_the_same_second(package / "sub" / "deep.py", "TAIL = 'deep-v2'\n")
    term.type("/reload")
    term.press("Enter")
    term.wait_for("plugins: 1 loaded (greeter changed)")
    term.type("/greet-pkg")
    term.press("Enter")
    term.wait_for("words-v2 and deep-v2")
    term.type("/reload")
    term.press("Enter")
    term.wait_until(lambda: flat(term).count("plugins: 1 loaded") == 2, "the second reload's summary")
    assert "plugins: 1 loaded, unchanged" in flat(term)


def colours(term) -> str:
    """The screen with its colours, as tmux's SGR sequences."""
    return term._tmux("capture-pane", "-p", "-e", "-t", "t")


def write_theme(agent_env: dict[str, str], name: str, text: str) -> None:
    themes = Path(agent_env["AGENT_FORGE_DIR"]) / "themes"
    themes.mkdir(exist_ok=True)
    (themes / f"{name}.json").write_text(text)


def set_setting(agent_env: dict[str, str], key: str, value) -> None:
    path = Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json"
    settings = json.loads(path.read_text())
    settings[key] = value
    path.write_text(json.dumps(settings))


def test_a_theme_file_colours_the_screen(terminal, fake_llm, agent_env):
    fake_llm.set_script([{"text": "Themed answer."}])
    write_theme(agent_env, "alarm", json.dumps({"base": "light", "colors": {
        "prompt": "ansired bold", "user": "on magenta", "code": "default"}}))
    set_setting(agent_env, "theme", "alarm")
    term = terminal()
    assert "warning" not in term.screen()
    assert re.search(r"\x1b\[[0-9;]*31[0-9;]*m›", colours(term)), colours(term)  # the prompt in red
    ask(term, "colour me", "Themed answer.")
    assert re.search(r"\x1b\[[0-9;]*45[0-9;]*m colour me", colours(term)), colours(term)  # the band: magenta


@pytest.mark.parametrize("text, problem", [
    ("{not json", "invalid JSON"),
    ('{"colors": {"prompt": "blinking-red"}}', "colors.prompt: 'blinking-red' is not a style word"),
    ('{"colors": {"user": "on nocolour"}}', "colors.user:"),
    ('{"colors": {"sparkle": "bold"}}', "unknown colour 'sparkle'"),
    ('{"base": "neon"}', "base must be one of dark, light"),
    ('["dark"]', "not a JSON object"),
])
def test_a_bad_theme_file_warns_and_the_default_theme_is_used(terminal, fake_llm, agent_env, text, problem):
    write_theme(agent_env, "broken", text)
    set_setting(agent_env, "theme", "broken")
    term = terminal()
    term.wait_until(lambda: "using the dark theme" in (screen := flat(term)) and problem in screen
                    and "broken.json" in term.screen().replace("\n", ""), "the whole warning")


def test_an_unknown_theme_name_warns(terminal, fake_llm, agent_env):
    set_setting(agent_env, "theme", "nosuch")
    term = terminal()
    term.wait_until(lambda: "theme 'nosuch': no such theme" in (screen := flat(term)) and "using the dark theme" in screen,
                    "the whole warning")


def test_settings_applies_at_once_and_offers_custom_themes(terminal, fake_llm, agent_env):
    write_theme(agent_env, "alarm", json.dumps({"colors": {"prompt": "ansired"}}))
    term = terminal()
    term.type("/settings")
    term.press("Enter")
    choose(term, "Change which setting?", "theme", "theme (now: dark)")
    choose(term, "theme:", "alarm", "alarm")
    term.wait_for("theme = alarm saved in")
    term.wait_for("applied to what is shown from now on", where=lambda: flat(term))
    term.wait_until(lambda: re.search(r"\x1b\[[0-9;]*31[0-9;]*m›", colours(term)) is not None, "a red prompt")
    term.type("/settings")
    term.press("Enter")
    term.wait_for("theme (now: alarm)")  # the session reads the saved value (it used to stay stale)
    choose(term, "Change which setting?", "hideThinking", "hideThinkingBlock (now: true)")
    choose(term, "hideThinkingBlock:", "false", "false")
    term.wait_for("hideThinkingBlock = false saved in")
    settings = json.loads((Path(agent_env["AGENT_FORGE_DIR"]) / "settings.json").read_text())
    assert settings["theme"] == "alarm" and settings["hideThinkingBlock"] is False


HINTED_PLUGIN = '''
def setup(plugin):
    @plugin.command("deploy", description="ships it", argument_hint="<env> [tag]")
    async def deploy(args, ctx):
        ctx.ui.notify(f"deploying {args}")
'''


def test_the_slash_menu_shows_argument_hints(terminal, fake_llm, tmp_path, agent_env):
    plugin = tmp_path / "deploy.py"
    plugin.write_text(HINTED_PLUGIN)
    agent_dir = Path(agent_env["AGENT_FORGE_DIR"])
    (agent_dir / "prompts").mkdir()
    (agent_dir / "prompts" / "review.md").write_text(
        '---\ndescription: review the diff\nargument-hint: "[focus]"\n---\nReview $1.\n')
    (agent_dir / "skills" / "tidy").mkdir(parents=True)
    (agent_dir / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: tidies code\n---\nTidy it.\n")
    term = terminal("-e", str(plugin))
    term.type("/")
    term.wait_for("/model [pattern[:thinking]]  pick a model, or switch directly")
    for needle, row in (("dep", "/deploy <env> [tag]  ships it"), ("rev", "/review [focus]  review the diff"),
                        ("tid", "/skill:tidy [request]  tidies code"), ("nam", "/name [name]  show or set")):
        term.press("C-u")
        term.type("/" + needle)
        term.wait_for(row)


def test_the_header_counts_resources_and_ctrl_o_lists_them(terminal, fake_llm, tmp_path, agent_env):
    (terminal.work / "AGENTS.md").write_text("Be brief.\n")
    agent_dir = Path(agent_env["AGENT_FORGE_DIR"])
    (agent_dir / "prompts").mkdir()
    for name in ("one", "two"):
        (agent_dir / "prompts" / f"{name}.md").write_text(f"Template {name}.\n")
    term = terminal()
    screen = term.wait_for("loaded: 1 context file · 2 templates (ctrl+o lists them)")
    assert "/one" not in screen and "AGENTS.md" not in screen
    term.press("C-o")
    # a long tmp path wraps right after "[context]" (no space there): AGENTS.md is looked for across the wraps
    term.wait_until(lambda: "[templates] /one, /two" in (screen := term.screen()) and "[context]" in screen
                    and "AGENTS.md" in screen.replace("\n", ""), "the list of resources")


def test_quiet_startup_leaves_the_header_out(terminal, fake_llm, agent_env):
    set_setting(agent_env, "quietStartup", True)
    term = terminal()
    assert "agent-forge v" not in term.screen() and "escape interrupt" not in term.screen()


@pytest.mark.parametrize("term_name", ["xterm-256color", "dumb"])
def test_a_terminal_that_reports_no_size(fake_llm, agent_env, tmp_path, term_name):
    """winsize 0x0 (a serial console, some CI runners): 80x24 is assumed, and the UI works."""
    from support.pty_terminal import PtyTerminal

    long = " ".join(f"word{i}" for i in range(40))
    fake_llm.set_script([{"text": f"Sized answer. {long}"}])
    work = tmp_path / "work"
    work.mkdir()
    term = PtyTerminal({**agent_env, "TERM": term_name}, work)
    try:
        term.wait_for("fake-model •")
        term.type("hello there\r")
        output = term.wait_for("Sized answer.")
        assert user_texts(fake_llm.requests[0]) == ["hello there"]
        assert "Traceback" not in output
        term.wait_for("word39")
        term.type("\x04")  # ctrl+d on the empty editor
        assert term.exit_code() == 0
        text = term.text()  # the answer as printed into the scrollback, each line up to its end
        assert "agent-forge --session " in text
        wrapped = [text[i:text.find("\n", i)] for i in range(len(text)) if text.startswith("Sized answer. word0", i)]
        assert any(len(line) <= 80 and "word39" not in line for line in wrapped), wrapped  # at 80 columns
    finally:
        term.close()


def test_a_5_mb_paste_is_sent_whole(terminal, fake_llm, tmp_path, agent_env_factory):
    fake_llm.set_script([{"text": "Got the big paste."}])
    term = terminal(env=agent_env_factory(context_window=2_000_000))  # 5 MB fit in it (a larger one is refused)
    line = "0123456789 abcdefghijklmnopqrstuvwxyz ÄÖÜ €\n"  # multi-byte characters too
    pasted = line * (5 * 1024 * 1024 // len(line.encode()))
    source = tmp_path / "paste.txt"
    source.write_text(pasted)
    term._tmux("load-buffer", str(source))
    term._tmux("paste-buffer", "-p", "-t", "t")  # bracketed, as the terminal sends a paste
    term.wait_for(f"[paste #1: {pasted.count(chr(10))} lines", deadline_s=60)
    term.type(" summarise")
    term.wait_for("] summarise")
    term.press("Enter")
    term.wait_for("Got the big paste.", deadline_s=60)
    term.wait_for("all of it was sent", where=lambda: flat(term))  # the scrollback shows its start, not 5 MB
    sent = user_texts(fake_llm.requests[0])[-1]
    assert len(sent) == len(pasted) + len(" summarise") and sent == pasted + " summarise"


def test_a_template_named_like_a_built_in_is_not_offered_and_is_warned_about(terminal, fake_llm, agent_env):
    """`/model` runs the built-in here: a second `/model` row for prompts/model.md ran the built-in too."""
    prompts = Path(agent_env["AGENT_FORGE_DIR"]) / "prompts"
    prompts.mkdir()
    (prompts / "model.md").write_text("---\ndescription: talk about models\n---\nTell me about $1.\n")
    (prompts / "modes.md").write_text("---\ndescription: the modes\n---\nModes.\n")
    term = terminal(columns=250, rows=40)
    term.wait_for("rename it to use it here")
    screen = flat(term)
    assert (f"warning: {prompts / 'model.md'}: prompt template /model is shadowed in the terminal UI by its "
            "built-in /model (print mode and RPC still run the prompt template); rename it to use it here") in screen
    term.type("/mod")
    screen = term.wait_for("/modes  the modes")
    rows = [line.strip() for line in screen.splitlines() if line.strip().startswith("/model")]
    assert rows == ["/model [pattern[:thinking]]  pick a model, or switch directly"], screen
    assert "talk about models" not in screen, screen
    term.press("C-u")
    (prompts / "quit.md").write_text("Quit what?\n")  # one /reload loads is warned about as one at start
    term.type("/reload")
    term.press("Enter")
    term.wait_until(lambda: "prompt template /quit is shadowed in the terminal UI" in flat(term), "the warning")
    assert flat(term).count("prompt template /model is shadowed") == 2  # at start, and again after /reload
    term.press("C-d")
    assert term.exit_code() == 0
