"""The transcript's Markdown (`render.markdown`): one shared parser and cached lexers, rendering exactly what
rich's own `Markdown` renders (with our compact tables and code bands)."""

from __future__ import annotations

import re

from rich.markdown import Markdown

from agent_forge.modes.interactive import render
from agent_forge.modes.interactive.render import markdown, to_ansi

DOCUMENT = ("# Title\n\nSome **bold**, ~~struck~~ and `code`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
            "```python\nprint(1)\n```\n\n```nosuchlanguage\nplain\n```\n\n> quoted\n\n1. one\n2. two\n")


def test_the_compact_markdown_is_built_like_richs_own():
    ours, richs = markdown(DOCUMENT), Markdown(render.clean(DOCUMENT), code_theme=ours_theme(), hyperlinks=False)
    assert vars(ours).keys() == vars(richs).keys()  # a rich upgrade that adds a field fails here, not at render
    assert [(t.type, t.content) for t in ours.parsed] == [(t.type, t.content) for t in richs.parsed]
    assert {key: value for key, value in vars(ours).items() if key != "parsed"} == \
        {key: value for key, value in vars(richs).items() if key != "parsed"}


def ours_theme() -> str:
    return render.theme.current.code


def test_documents_share_one_parser_and_each_language_one_lexer():
    first, second = markdown("```python\na = 1\n```"), markdown("```python\nb = 2\n```\n\n~~gone~~")
    text = re.sub(r"\x1b\[[0-9;]*m", "", to_ansi([first, second], 60))
    assert "a = 1" in text and "b = 2" in text and "gone" in text
    assert len(render._PARSERS) == 1
    assert render._lexer("python") is render._lexer("python")
    assert render._lexer("nosuchlanguage") == "nosuchlanguage"  # rich then shows it plain


def test_code_in_an_unknown_language_is_shown_plain_and_tables_have_no_edge():
    text = re.sub(r"\x1b\[[0-9;]*m", "", to_ansi([markdown(DOCUMENT)], 60))
    assert "plain" in text and "print" in text
    assert "┏" not in text and "┗" not in text  # the compact table's top and bottom edges are gone
