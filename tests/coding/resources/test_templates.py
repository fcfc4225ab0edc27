"""Prompt templates and input expansion: discovery, descriptions, argument splitting and substitution."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from agent_forge.coding.resources.expansion import expand_input, parse_arguments, split_command, substitute
from agent_forge.coding.resources.sources import ResourceRoot
from agent_forge.coding.resources import templates as templates_module
from agent_forge.coding.resources.templates import discover_templates


def test_direct_md_children_with_descriptions(tmp_path):
    prompts = tmp_path / "prompts"
    (prompts / "nested").mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review staged changes\nargument-hint: \"[focus]\"\n---\n"
                                       "Review. Focus on ${1:-correctness}.\n")
    (prompts / "plain.md").write_text("\n\nFirst line is the description.\nMore.\n")
    (prompts / "nested" / "deep.md").write_text("not loaded: only direct children")
    (prompts / "notes.txt").write_text("not a template")
    warnings: list[str] = []
    templates = discover_templates([ResourceRoot(prompts, "project", "project")], warnings)
    assert [t.name for t in templates] == ["plain", "review"] and warnings == []
    plain, review = templates
    assert plain.description == "First line is the description."
    assert review.description == "Review staged changes" and review.argument_hint == "[focus]"
    assert review.body == "Review. Focus on ${1:-correctness}."
    assert review.source_info == {"path": str(prompts / "review.md"), "source": "local", "scope": "project",
                                  "origin": "top-level", "baseDir": str(prompts)}


def test_first_of_a_name_wins_and_broken_files_are_reported(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "go.md").write_text("first")
    (second / "go.md").write_text("second")
    (second / "bad.md").write_text("---\ndescription: never closed\n")
    warnings: list[str] = []
    templates = discover_templates([ResourceRoot(first, "temporary", "path"),
                                    ResourceRoot(second, "user", "user")], warnings)
    assert [(t.name, t.body) for t in templates] == [("go", "first")]
    assert any("already defined" in w for w in warnings) and any("bad.md" in w for w in warnings)


def test_argument_splitting_follows_the_documented_quoting():
    assert parse_arguments('Alice Bob "Carol Ann"') == ["Alice", "Bob", "Carol Ann"]
    assert parse_arguments("doesn't matter") == ["doesn't", "matter"]  # a quote inside a word is text
    assert parse_arguments('"unclosed quote here') == ['"unclosed', "quote", "here"]
    assert parse_arguments(r'"the \"fast\" path" c:\dir') == ['the "fast" path', r"c:\dir"]
    assert parse_arguments("'single quoted' \"\"") == ["single quoted", ""]
    assert parse_arguments("  spaced\n\targs  ") == ["spaced", "args"]


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1)
                .filter(lambda a: a.strip() == a and a.isprintable() and not any(c.isspace() for c in a)
                        and a[0] not in "\"'"), max_size=6))
def test_unquoted_words_split_back_into_themselves(words):
    assert parse_arguments(" ".join(words)) == words


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\\")),
                max_size=5))
def test_double_quoted_arguments_round_trip(args):
    quoted = " ".join('"' + a.replace('"', '\\"') + '"' for a in args)
    assert parse_arguments(quoted) == args


def test_substitutions():
    args = ["one", "two", "three"]
    assert substitute("$1|$2|$3|$4|", args) == "one|two|three||"
    assert substitute("$@ / $ARGUMENTS / $ARGUMENTSX", args) == "one two three / one two three / $ARGUMENTSX"
    assert substitute("${1:-d} ${4:-fallback} ${@:-none}", args) == "one fallback one two three"
    assert substitute("${@:-none}", []) == "none"
    assert substitute("${@:2} | ${@:2:1} | ${@:9}", args) == "two three | two | "
    assert substitute("$0 and $10", args) == "$0 and "
    assert substitute("$1", ["$2", "x"]) == "$2"  # one pass: argument text is not substituted again


def test_only_ascii_digits_make_placeholders():
    """Python's `\\d` takes every script's digits: `$٢` (Arabic-Indic 2) or `${@:２}` is text, not `$2`."""
    args = ["one", "two", "three"]
    assert substitute("$٢ $２ ${٢:-d} ${@:٢} $2", args) == "$٢ $２ ${٢:-d} ${@:٢} two"


def test_expand_input_dispatch(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "greet.md").write_text("Hello $1 and ${@:2}!\n")
    templates = {t.name: t for t in discover_templates([ResourceRoot(prompts, "user", "user")], [])}
    assert expand_input('/greet Alice Bob "Carol Ann"', {}, templates) == "Hello Alice and Bob Carol Ann!"
    assert expand_input("/greet", {}, templates) == "Hello  and !"
    assert expand_input("/nonexistent foo bar", {}, templates) == "/nonexistent foo bar"
    assert expand_input("/skill:missing x", {}, templates) == "/skill:missing x"
    assert expand_input("say /greet", {}, templates) == "say /greet"
    assert split_command("/ greet") is None and split_command("/") is None
    assert split_command("/greet\nmulti line") == ("greet", "multi line")


def test_templates_that_are_not_regular_files_or_too_large_are_reported(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "zero.md").symlink_to("/dev/zero")
    os.mkfifo(prompts / "pipe.md")
    (prompts / "loop.md").symlink_to("loop.md")
    (prompts / "big.md").write_text("x" * (256 * 1024 + 1))
    (prompts / "fine.md").write_text("Fine.")
    warnings: list[str] = []
    templates = discover_templates([ResourceRoot(prompts, "project", "project")], warnings)
    assert [t.name for t in templates] == ["fine"]
    assert sorted(w.split(": prompt template not loaded: ")[1] for w in warnings) == [
        "Too many levels of symbolic links",
        "larger than 256 KB (the limit for prompt files)",
        "not a regular file but a FIFO (named pipe); only regular files are read",
        "not a regular file but a character device; only regular files are read",
    ]


def test_a_huge_prompts_directory_is_looked_at_only_up_to_the_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(templates_module, "MAX_WALK_ENTRIES", 10)
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    for index in range(30):
        (prompts / f"t{index:02}.md").write_text(f"Template {index}.")
    warnings: list[str] = []
    templates = discover_templates([ResourceRoot(prompts, "project", "project")], warnings)
    assert len(templates) == 10
    assert warnings == [f"{prompts}: more than 10 entries; only the first 10 listed are looked at for prompt "
                        "templates"]
