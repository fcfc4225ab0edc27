"""MCP prompt commands: recognising `/mcp:<server>:<prompt>`, mapping typed words to declared arguments, and
turning a `GetPromptResult` into the user message."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from agent_forge.coding.errors import CommandError
from agent_forge.coding.mcp.prompts import map_arguments, prompt_command, prompt_message, split_prompt_command


def arg(name: str, required: bool = False, description: str | None = None) -> NS:
    return NS(name=name, required=required, description=description)


REVIEW = NS(name="review", title=None, description="Review a file",
            arguments=[arg("path", True, "the file"), arg("focus"), arg("tone")])
BARE = NS(name="bare", title="Bare", description=None, arguments=None)


def test_prompt_commands_are_recognised_by_shape():
    assert split_prompt_command("/mcp:git:commit fix it") == ("git", "commit", "fix it")
    assert split_prompt_command("/mcp:git:ns:tool") == ("git", "ns:tool", "")
    for text in ("/mcp:git", "/mcp::x", "/mcp:git:", "mcp:git:x", "/other:git:x", "/ mcp:a:b", 42):
        assert split_prompt_command(text) is None, text


@pytest.mark.parametrize("typed, expected", [
    ("a.py", {"path": "a.py"}),
    ("a.py style", {"path": "a.py", "focus": "style"}),
    ("a.py style calm and kind", {"path": "a.py", "focus": "style", "tone": "calm and kind"}),
    ('"my file.py" focus=x=y', {"path": "my file.py", "focus": "x=y"}),
    ("tone=dry a.py speed", {"tone": "dry", "path": "a.py", "focus": "speed"}),
    ("a.py k=v", {"path": "a.py", "focus": "k=v"}),  # an undeclared name= is ordinary text
])
def test_words_fill_the_declared_arguments(typed, expected):
    assert map_arguments(REVIEW, typed, "mcp:s:review") == expected


def test_missing_required_and_surplus_words_are_refused_naming_the_arguments():
    with pytest.raises(CommandError, match=r"/mcp:s:review needs path \(arguments: path \(required\): the file; "
                                           r"focus; tone\)"):
        map_arguments(REVIEW, "focus=x", "mcp:s:review")
    with pytest.raises(CommandError, match="takes no arguments"):
        map_arguments(BARE, "extra words", "mcp:s:bare")
    with pytest.raises(CommandError, match="every argument was given by name"):
        map_arguments(NS(name="one", arguments=[arg("a")]), "a=1 more", "mcp:s:one")
    assert map_arguments(BARE, "  ", "mcp:s:bare") == {}


def test_the_command_item_lists_the_arguments():
    item = prompt_command("s", "project", REVIEW)
    assert item["name"] == "mcp:s:review" and item["source"] == "mcp" and item["location"] == "project"
    assert item["argumentHint"] == "<path> [focus] [tone]"
    assert item["arguments"][0] == {"name": "path", "required": True, "description": "the file"}
    assert prompt_command("s", "sdk", BARE)["description"] == "Bare" and "location" not in prompt_command(
        "s", "sdk", BARE)


def test_the_prompt_result_becomes_text_and_images():
    result = NS(messages=[
        NS(role="user", content=NS(type="text", text="one")),
        NS(role="assistant", content=NS(type="text", text="two")),
        NS(role="user", content=NS(type="image", data="iVBORw0KGgo=", mime_type="image/png")),
        NS(role="user", content=NS(type="resource", resource=NS(uri="file:///r", text="body", mime_type=None)))])
    text, images = prompt_message(result)
    assert text == "one\n\ntwo\n\n[Resource file:///r]\nbody"
    assert images == [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]
