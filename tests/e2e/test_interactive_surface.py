"""End to end, in tmux: the parts of the terminal UI a person meets that the other interactive tests leave out:
a plugin's widget, title, status and editor text; Ctrl+T showing thinking; `!!cmd` kept out of the context; an
image file's path pasted into the editor attached as an image; `--resume` at start; `/clone`."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from support.tui import needs_tmux, user_texts
from .test_interactive import finish_first_session

pytestmark = needs_tmux

SURFACE_PLUGIN = '''
def setup(plugin):
    @plugin.command("dress", description="widget, title, status, editor text")
    async def dress(args, ctx):
        ctx.ui.set_widget("w", ["widget line one", "widget line two"])
        ctx.ui.set_title("forge-title-1")
        ctx.ui.set_status("s", "status-seg")
        ctx.ui.set_editor_text("prefilled by plugin")

    @plugin.command("undress", description="clears them")
    async def undress(args, ctx):
        ctx.ui.set_widget("w", None)
        ctx.ui.set_status("s", None)
'''

# A 1x1 PNG: the smallest file an image check accepts as what its name says
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def test_a_plugin_sets_widget_title_status_and_editor_text(terminal, fake_llm, tmp_path):
    plugin = tmp_path / "dress.py"
    plugin.write_text(SURFACE_PLUGIN)
    term = terminal("-e", str(plugin))
    term.type("/dress")
    term.press("Enter")
    screen = term.wait_for_all("widget line two", "status-seg", "› prefilled by plugin")
    lines = screen.splitlines()
    widget_row = next(i for i, line in enumerate(lines) if "widget line one" in line)
    editor_row = next(i for i, line in enumerate(lines) if "› prefilled by plugin" in line)
    assert widget_row < editor_row, "the widget sits above the editor"
    term.wait_until(lambda: term.title() == "forge-title-1", "the plugin's terminal title")
    term.press("C-u")  # clear the prefilled text
    term.type("/undress")
    term.press("Enter")
    term.wait_until(lambda: "widget line" not in term.screen() and "status-seg" not in term.screen(),
                    "the widget and the status segment cleared")


def test_ctrl_t_shows_and_hides_thinking(terminal, fake_llm):
    fake_llm.set_script([{"thinking": "secret chain of thought", "text": "The answer."},
                         {"thinking": "second thoughts", "text": "Answer two."},
                         {"thinking": "third thoughts", "text": "Answer three."}])
    term = terminal()
    term.type("think")
    term.press("Enter")
    screen = term.wait_for_all("The answer.", "ctrl+t to show")
    assert "secret chain of thought" not in screen
    term.press("C-t")  # the last answer's thinking is printed again (the scrollback cannot change)
    term.wait_for("secret chain of thought")
    term.type("again")
    term.press("Enter")
    term.wait_for_all("Answer two.", "second thoughts")  # shown from now on
    term.press("C-t")
    term.wait_for("thinking hidden")
    term.type("once more")
    term.press("Enter")
    assert "third thoughts" not in term.wait_for("Answer three.")


def test_double_bang_runs_a_command_without_adding_it_to_the_context(terminal, fake_llm):
    fake_llm.set_script([{"text": "Seen."}])
    term = terminal()
    term.type("!!echo hidden-$((6*7))")
    term.press("Enter")
    term.wait_for("hidden-42")
    term.type("!echo shown-$((5*5))")
    term.press("Enter")
    term.wait_for("shown-25")
    # its output shows while it runs; a prompt sent before it ends would get it only on the next prompt
    term.wait_until(lambda: term.screen().count("exit 0") == 2, "the second command to end")
    term.type("what ran?")
    term.press("Enter")
    term.wait_for("Seen.")
    sent = " ".join(user_texts(fake_llm.requests[0]))
    assert "shown-25" in sent and "hidden-42" not in sent


def test_a_pasted_image_path_is_sent_as_an_image(terminal, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "A tiny picture."}])
    term = terminal()
    image = terminal.work / "dot.png"
    image.write_bytes(PNG)
    source = tmp_path / "paste.txt"
    source.write_text(str(image))
    term._tmux("load-buffer", str(source))
    term._tmux("paste-buffer", "-p", "-t", "t")  # bracketed, as a terminal sends a dragged file's path
    term.wait_for("dot.png")
    term.type(" what is this")
    # The temp path is long, so the editor may wrap the line anywhere: match with the wraps taken out.
    term.wait_for("whatisthis", where=lambda: re.sub(r"\s+", "", term.screen()))
    term.press("Enter")
    term.wait_for("A tiny picture.")
    content = fake_llm.requests[0]["body"]["messages"][-1]["content"]
    images = [part for part in content if part.get("type") == "image_url"]
    assert len(images) == 1 and images[0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_the_resume_flag_opens_the_picker_at_start(terminal, fake_llm):
    fake_llm.set_script([{"text": "First run answer."}, {"text": "Picked up again."}])
    finish_first_session(terminal, name="flagged work")
    term = terminal("--resume")
    term.wait_for("→ flagged work")
    term.press("Enter")
    term.wait_for("First run answer.")
    term.type("go on")
    term.press("Enter")
    term.wait_for("Picked up again.")
    assert user_texts(fake_llm.requests[1]) == ["first question", "go on"]


def test_clone_continues_in_a_new_session_file(terminal, fake_llm, agent_env):
    fake_llm.set_script([{"text": "Original answer."}, {"text": "Answer in the clone."}])
    term = terminal()
    term.type("original question")
    term.press("Enter")
    term.wait_for("Original answer.")
    sessions = Path(agent_env["AGENT_FORGE_DIR"]) / "sessions"
    before = set(sessions.rglob("*.jsonl"))
    term.type("/clone")
    term.press("Enter")
    term.wait_until(lambda: len(set(sessions.rglob("*.jsonl")) - before) == 1, "a new session file")
    term.type("in the clone")
    term.press("Enter")
    term.wait_for("Answer in the clone.")
    assert user_texts(fake_llm.requests[1]) == ["original question", "in the clone"]
    (clone,) = set(sessions.rglob("*.jsonl")) - before
    assert "in the clone" in clone.read_text() and all("in the clone" not in f.read_text() for f in before)
