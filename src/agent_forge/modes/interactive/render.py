"""Rich renderables to ANSI text for the terminal's scrollback, and the cleaning every shown string gets.

SAFETY: model, tool and file-name text may hold escape sequences and control characters; `clean` removes them
(`sanitize.terminal_text`) before anything is built from the text. Text is always wrapped in `rich.text.Text`
or `Markdown` (never parsed as rich markup), and Markdown links are not turned into OSC 8 hyperlinks.
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, Any

from ...coding.tools.sanitize import terminal_text
from . import theme

if TYPE_CHECKING:  # rich loads with the first block rendered, after the first paint
    from rich.text import Text


def clean(text: Any) -> str:
    """`text` (any value; None is "") safe for the terminal: control characters but newline and tab shown as
    their escapes (`terminal_text`: nothing hidden); tabs become 4 spaces (their width is the terminal's choice
    otherwise)."""
    if text is None:
        return ""
    return terminal_text(str(text)).replace("\t", "    ")


def plain(text: Any, style: str = "") -> Text:
    """Cleaned `text` as a literal rich Text (brackets stay brackets)."""
    from rich.text import Text

    return Text(clean(text), style=style)


def markdown(text: str) -> Any:
    """Cleaned `text` as a rich `Markdown`: code blocks highlighted, links shown as text (no hyperlink
    escapes). rich.markdown (and markdown-it) load on the first answer, not at start-up."""
    return _compact_markdown()(clean(text), code_theme=theme.current.code, hyperlinks=False)


_COMPACT: list[Any] = []


def _compact_markdown() -> Any:
    """rich's `Markdown` whose tables and code blocks have no blank rows of their own (a table's empty top and
    bottom edge, a code block's vertical padding): with the blank line between blocks that made 2-3 blank
    lines around each in the transcript; now there is one."""
    if _COMPACT:
        return _COMPACT[0]
    from rich.markdown import CodeBlock, Markdown, TableElement

    class CompactTable(TableElement):
        def __rich_console__(self, console: Any, options: Any) -> Any:
            for table in super().__rich_console__(console, options):
                table.show_edge = False
                yield table

    class CompactCode(CodeBlock):
        def __rich_console__(self, console: Any, options: Any) -> Any:
            from rich.syntax import Syntax

            # as rich's, with the band's side margin only, and a lexer found once per language, not per block
            yield Syntax(str(self.text).rstrip(), _lexer(self.lexer_name), theme=self.theme, word_wrap=True,
                         padding=(0, 1))

    class CompactMarkdown(Markdown):
        elements = {**Markdown.elements, "table_open": CompactTable, "fence": CompactCode,
                    "code_block": CompactCode}

        def __init__(self, markup: str, **options: Any) -> None:
            # rich's own __init__ builds a MarkdownIt parser per document (~0.6 ms: its renderer inspects
            # itself), a third of a resumed transcript's cost; one parser, configured as rich's, serves all.
            # `test_render.py` checks that the instance matches rich's own (attributes and tokens).
            defaults = {"code_theme": "monokai", "justify": None, "style": "none", "hyperlinks": True,
                        "inline_code_lexer": None, "inline_code_theme": None, **options}
            self.markup, self.parsed = markup, _parser().parse(markup)
            self.code_theme, self.justify, self.style = defaults["code_theme"], defaults["justify"], \
                defaults["style"]
            self.hyperlinks, self.inline_code_lexer = defaults["hyperlinks"], defaults["inline_code_lexer"]
            self.inline_code_theme = defaults["inline_code_theme"] or defaults["code_theme"]

    _COMPACT.append(CompactMarkdown)
    return CompactMarkdown


_PARSERS: list[Any] = []
_LEXERS: dict[str, Any] = {}


def _parser() -> Any:
    """The MarkdownIt parser rich's `Markdown` builds, built once."""
    if not _PARSERS:
        from markdown_it import MarkdownIt

        _PARSERS.append(MarkdownIt().enable("strikethrough").enable("table"))
    return _PARSERS[0]


def _lexer(name: str) -> Any:
    """The pygments lexer rich's `Syntax` would look up for `name` (same options), or `name` itself when there
    is none (rich then shows the code plain)."""
    if name not in _LEXERS:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound

        try:
            _LEXERS[name] = get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=4)
        except ClassNotFound:
            _LEXERS[name] = name
    return _LEXERS[name]


def color_allowed() -> bool:
    """False when `NO_COLOR` is set (https://no-color.org) or the terminal is `dumb`."""
    return not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def to_ansi(renderables: list[Any], width: int) -> str:
    """`renderables` rendered for a terminal `width` columns wide (at least 1): ANSI text ending in a newline.
    The real width even when narrow: wider rows would be hard-wrapped by the terminal mid-word."""
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=max(width, 1), color_system="256" if color_allowed()
                      else None, markup=False, emoji=False, highlight=False, legacy_windows=False, no_color=None,
                      force_interactive=False, _environ={})
    for renderable in renderables:
        console.print(renderable)
    text = out.getvalue()
    return text if text.isascii() else "\n".join(_fitting(row, width) for row in text.split("\n"))


_SGR = None  # re.compile(r"\x1b\[[0-9;]*m") on first use: rich writes no other escape sequence here


def _fitting(row: str, width: int) -> str:
    """`row` with as many of the spaces rich padded it with left out as a terminal that draws its clusters
    unjoined needs (`graphemes.widest`): else `👍🏽` in a padded row pushes the padding onto a row of its own, a
    blank line in the scrollback (and one row more than `to_ansi` counted)."""
    global _SGR
    from .graphemes import widest

    if row.isascii():
        return row
    if _SGR is None:
        import re

        _SGR = re.compile(r"\x1b\[[0-9;]*m")
    over = widest(_SGR.sub("", row)) - max(width, 1)
    return _unpadded(row, over) if over > 0 else row


def _unpadded(row: str, count: int) -> str:
    """`row` without up to `count` of its trailing spaces (those after its last other character), the escape
    sequences among them kept."""
    parts, codes = _SGR.split(row), _SGR.findall(row)
    for index in range(len(parts) - 1, -1, -1):
        kept = parts[index].rstrip(" ")
        removed = min(count, len(parts[index]) - len(kept))
        parts[index] = parts[index][:len(parts[index]) - removed]
        count -= removed
        if count == 0 or kept:
            break
    return "".join(part + code for part, code in zip(parts, [*codes, ""]))


def one_line(text: Any, width: int) -> str:
    """`text` (any value) cleaned (`clean`) with its whitespace runs as single spaces, on one row of at most
    `width` (at least 1) terminal columns (`fit`). Only the start is read: a queued 5 MB paste costs what a
    line does, each frame."""
    width = max(width, 1)
    return fit(" ".join(clean(str(text)[: 4 * width + 64]).split()), width)


def fit(text: str, width: int) -> str:
    """`text` on one row, cut to `width` terminal columns between grapheme clusters, `…` marking the cut;
    measured as prompt_toolkit parts draw it (`graphemes.cells`: wide characters count 2, `👩‍👩‍👧` 6)."""
    from .graphemes import cells, cut

    text = text.replace("\n", " ")  # one row, whatever a plugin's title or option holds
    if width < 1:
        return ""
    if cells(text) <= width:
        return text
    return cut(text, width - 1) + "…"
