"""End to end: leftovers of issues 10 and 12 in a real terminal (tmux) against the loopback model server: keys
typed after a bracketed paste act as keys, even read with it (a slow link batches them), and a paste whose end
mark never comes is ended and said so; `/reload` reads keybindings.json again (its warnings as at start, the new keys act, the hints name them); text
printed where a live region that had scrolled the screen was (the `/` menu narrowed to `/se`, then Enter) leaves
no blank rows under the footer."""

from __future__ import annotations

import json
from pathlib import Path

from support.tui import needs_tmux, user_texts

from agent_forge.modes.interactive.paste import END, START

from .test_interactive_round8 import ROWS, footer_at_bottom, full_screen, rows

pytestmark = needs_tmux


def joined_rows(term) -> str:
    """The screen with its rows joined (a long warning wraps at the edge)."""
    return "".join(term.screen().splitlines())


def test_reload_reads_keybindings_json_again(terminal, fake_llm, agent_env):
    term = terminal()
    path = Path(agent_env["AGENT_FORGE_DIR"]) / "keybindings.json"
    path.write_text(json.dumps({"app.exit": "ctrl+q", "app.clear": "ctrl+t", "app.nope": "ctrl+x"}))
    term.type("/reload")
    term.press("Enter")
    term.wait_until(lambda: "keys: app.clear ctrl+t (was ctrl+c), app.exit ctrl+q (was ctrl+d)" in joined_rows(term)
                    and "unknown action 'app.nope'" in joined_rows(term)
                    and "app.thinking.toggle has no key left" in joined_rows(term), "the keys' line and the warnings")
    term.type("/qu")
    term.wait_for("also ctrl+q on an empty editor")  # the hint follows the new key
    for _ in range(3):
        term.press("BSpace")
    term.wait_until(lambda: "also ctrl+q" not in term.screen(), "the menu to close")
    term.press("C-d")  # no longer exits: typing still goes to the editor
    term.type("typed")
    term.wait_for("› typed")
    term.press("C-t")  # now app.clear
    term.wait_until(lambda: "› typed" not in term.screen(), "the editor cleared by ctrl+t")
    term.press("C-q")
    assert term.exit_code() == 0


def test_a_message_sent_from_a_narrowed_slash_menu_leaves_no_blank_rows_under_the_footer(terminal, fake_llm):
    term = terminal(columns=100, rows=ROWS)
    full_screen(term, fake_llm, [{"text": "Short."}])
    term.type("/")
    term.wait_for("/hotkeys  the keyboard shortcuts")  # 8 rows of menu: the screen scrolled by them
    term.type("se")  # two rows left: the other six blank under the menu while it is open
    term.wait_until(lambda: "/hotkeys" not in term.screen() and "/settings" in term.screen(), "the menu to narrow")
    term.press("Enter")  # no command is chosen: "/se" is sent as text, its message printed where the menu was
    term.wait_for("Short.")
    term.wait_until(lambda: "esc to interrupt" not in term.screen(), "the run to end")
    # one capture judged whole: the answer right above the editor, the footer on the screen's last row
    term.wait_until(lambda: footer_at_bottom(term) and (lines := rows(term))[-7] == "Short."
                    and lines[-9] == " /se", "the answer above the editor, no blank rows under the footer")
    history = term.scrollback()
    assert history.count("Paragraph 7 of answer 1.") == 1 and "/settings" not in history, history


def test_keys_typed_after_a_paste_act_even_when_read_with_it(terminal, fake_llm):
    fake_llm.set_script([{"text": "First answer."}])
    term = terminal()
    term.type(f"{START}pasted line{END} and typed\r")  # one send: the terminal gets it in one write
    term.wait_for("First answer.")
    assert user_texts(fake_llm.requests[0])[-1] == "pasted line and typed"


def test_several_keys_typed_right_after_a_paste_act(terminal, fake_llm):
    fake_llm.set_script([{"text": "Second answer."}])
    term = terminal()
    term.type(f"{START}two{END}")
    term.type(" more\r")  # right after the paste: several keys in one read (a slow link), the Enter among them
    term.wait_for("Second answer.")
    assert user_texts(fake_llm.requests[0])[-1] == "two more"


def test_a_paste_whose_end_mark_never_comes_is_ended_and_said_so(terminal, fake_llm):
    fake_llm.set_script([{"text": "Got the rest."}])
    term = terminal()
    term.type(f"{START}half a paste")  # the end mark is lost: every key would be pasted text from now on
    term.wait_until(lambda: "a paste did not end" in joined_rows(term) and "› half a paste" in term.screen(),
                    "the paste ended, said so")
    term.type(" then typed")
    term.press("Enter")
    term.wait_for("Got the rest.")
    assert user_texts(fake_llm.requests[0])[-1] == "half a paste then typed"
