"""Frontmatter: the YAML subset skill and template headers use, and clear errors for the rest."""

from __future__ import annotations

import pytest

from agent_forge.coding.errors import FrontmatterError
from agent_forge.coding.resources.frontmatter import split_frontmatter


def test_no_frontmatter_returns_the_text_unchanged():
    assert split_frontmatter("Just a body\n---\n") == ({}, "Just a body\n---\n")


def test_scalars_quotes_and_booleans():
    meta, body = split_frontmatter(
        "---\nname: pdf-tools\ndescription: \"Say \\\"hi\\\": now\"\nhint: 'it''s'\n"
        "disable-model-invocation: true\nother: no  # YAML 1.2 keeps this text\nempty:\n---\nBody\n")
    assert meta == {"name": "pdf-tools", "description": 'Say "hi": now', "hint": "it's",
                    "disable-model-invocation": True, "other": "no", "empty": None}
    assert body == "Body\n"


def test_block_scalars_lists_and_maps():
    meta, _ = split_frontmatter(
        "---\ndescription: |\n  line one\n  line two\nfolded: >-\n  a\n  b\n"
        "allowed-tools:\n  - read\n  - bash\nmetadata:\n  author: me\n  version: 1.0\n---\n")
    assert meta["description"] == "line one\nline two\n"
    assert meta["folded"] == "a b"
    assert meta["allowed-tools"] == ["read", "bash"]
    assert meta["metadata"] == {"author": "me", "version": "1.0"}


def test_crlf_and_bom_are_normalised():
    meta, body = split_frontmatter("\ufeff---\r\ndescription: x\r\n---\r\nBody\r\n")
    assert meta == {"description": "x"} and body == "Body\n"


@pytest.mark.parametrize("text, message", [
    ("---\ndescription: x\n", "never closed"),
    ("---\njust words\n---\n", "line 2"),
    ("---\nkey: value\n  indented: more\n---\n", "cannot be followed"),
])
def test_malformed_frontmatter_names_the_problem(text, message):
    with pytest.raises(FrontmatterError, match=message):
        split_frontmatter(text)
