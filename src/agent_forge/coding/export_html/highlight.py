"""Syntax highlighting of code, file contents and diffs with pygments, as class-based spans styled by one
embedded stylesheet (`stylesheet()`)."""

from __future__ import annotations

import html
from functools import lru_cache

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

from .text import clean

CSS_CLASS = "hl"
STYLE = "friendly"
MAX_HIGHLIGHT_CHARS = 200_000
"""Longer texts are shown plain: highlighting cost grows with size and a huge dump gains little from colour."""


def code_block(code: str, language: str | None = None, *, filename: str | None = None) -> str:
    """`<pre class="code hl">…</pre>` of `code`, highlighted for `language` (a pygments alias such as `python`,
    `bash`, `diff`, `json`) or else for `filename`'s extension; plain escaped text when neither is known."""
    text = clean(code)
    lexer = _lexer(language, filename) if len(text) <= MAX_HIGHLIGHT_CHARS else None
    body = html.escape(text, quote=False) if lexer is None else highlight(text, lexer, _formatter())
    lang = f' data-lang="{html.escape(lexer.name)}"' if lexer is not None else ""
    # A newline right after <pre> is dropped by HTML parsers: this one keeps a leading blank line of `code`.
    return f'<pre class="code {CSS_CLASS}"{lang}>\n{body}</pre>'


@lru_cache(maxsize=1)
def stylesheet() -> str:
    """The CSS rules of the highlighting colours, scoped to `.hl` (built once: it depends on nothing)."""
    return HtmlFormatter(style=STYLE).get_style_defs(f".{CSS_CLASS}")


def _lexer(language: str | None, filename: str | None) -> Lexer | None:
    if language:
        return _lexer_by_name(language.strip().lower())
    if filename:
        return _lexer_by_filename(filename.rsplit("/", 1)[-1])
    return None


@lru_cache(maxsize=64)
def _lexer_by_name(name: str) -> Lexer | None:
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=True)
    except ClassNotFound:
        return None


@lru_cache(maxsize=64)
def _lexer_by_filename(name: str) -> Lexer | None:
    try:
        return get_lexer_for_filename(name, stripnl=False, ensurenl=True)
    except ClassNotFound:
        return None


@lru_cache(maxsize=1)
def _formatter() -> HtmlFormatter:
    return HtmlFormatter(nowrap=True, style=STYLE)
