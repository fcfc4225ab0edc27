"""Markdown of user and assistant text to HTML with markdown-it-py: raw HTML off (shown as text), fenced code
highlighted by pygments, and images turned into links so the page never fetches anything."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Sequence

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

from .highlight import code_block

if TYPE_CHECKING:
    from markdown_it.renderer import RendererHTML
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict
from .text import clean


def render_markdown(text: str) -> str:
    """HTML of `text` (CommonMark plus tables and strikethrough), wrapped in `<div class="md">`."""
    return f'<div class="md">{_parser().render(clean(text))}</div>'


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # html=False: a message's `<script>` is text, not markup; linkify stays off (no extra dependency).
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("fence", _fence)
    md.add_render_rule("code_block", _code_block)
    md.add_render_rule("image", _image)
    return md


def _fence(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    language = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else None
    return code_block(token.content, language) + "\n"


def _code_block(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    return code_block(tokens[idx].content) + "\n"


def _image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """`![alt](url)` → a link labelled with the alt text: an `<img>` would load the URL when the page opens."""
    token = tokens[idx]
    src = token.attrGet("src") or ""
    alt = self.renderInlineAsText(token.children or [], options, env) or src
    href = escapeHtml(str(src))
    return f'<a class="md-image" href="{href}" rel="noopener noreferrer">[image: {escapeHtml(alt)}]</a>'
