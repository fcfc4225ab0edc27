"""MCP server prompts as commands: `/mcp:<server>:<prompt> args` (`docs/mcp.md`, "Prompts").

Arguments are split like a template's (`resources/expansion.py`: whitespace, shell-like quotes) and mapped to
the prompt's declared arguments: `name=value` sets the declared argument `name`; the other words (`x=1` with
an undeclared `x` included) fill the declared arguments not set by name, in their declared order; words beyond
the last of them are added to it (joined by spaces), so the last argument takes the rest of the line. A required
argument left without a value and words for a prompt without arguments (or with all given by name) are refused
(`CommandError`) naming what the prompt takes. The server's answer (`prompts/get`) becomes the user message:
the text of its messages in order (blank lines between; embedded resources as text headed `[Resource <uri>]`,
like tool results) and its images.

A prompt's command name is its name with every whitespace or control character made `_` (a space would end the
command word); a name listed twice by a server, or made equal to another by that change, is offered once (the
first) and reported (`offered_prompts`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

from ..errors import CommandError
from ..resources.expansion import parse_arguments, split_command
from .limits import MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, cut, shown_name
from .tools import to_content

if TYPE_CHECKING:
    from mcp_types import GetPromptResult, Prompt, PromptArgument

    from ...ai.types import ImageContent

PREFIX = "mcp:"
_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f]")


def split_prompt_command(text: str) -> tuple[str, str, str] | None:
    """`(server, prompt, rest)` for text starting with `/mcp:<server>:<prompt>`, else None. Server names have
    no `:` (config.NAME_RULE); the prompt's name is everything after the second `:` up to the first space."""
    command = split_command(text) if isinstance(text, str) else None
    if command is None or not command[0].startswith(PREFIX):
        return None
    server, colon, prompt = command[0][len(PREFIX):].partition(":")
    return (server, prompt, command[1]) if colon and server and prompt else None


def command_name(prompt_name: str) -> str:
    """The command word's last part for a prompt named `prompt_name` (whitespace and control characters `_`)."""
    return _UNSAFE.sub("_", prompt_name)


def offered_prompts(server: str, prompts: Iterable[Prompt]) -> tuple[dict[str, Prompt], list[str]]:
    """`({command name: prompt}, warnings)` for one server's prompts, each command name once (the first)."""
    offered: dict[str, Prompt] = {}
    warnings = []
    for prompt in prompts:
        name = command_name(prompt.name)
        command = f"/{PREFIX}{server}:{name[:MAX_NAME_CHARS]}"
        if name in offered and offered[name].name == prompt.name:
            warnings.append(f"MCP server {server!r} lists the prompt {shown_name(prompt.name)} more than once; "
                            f"only the first is offered as {command}")
        elif name in offered:
            warnings.append(f"MCP server {server!r}: the prompt {shown_name(prompt.name)} would be {command}, "
                            f"as is the prompt {shown_name(offered[name].name)}; only that one is offered")
        elif name:
            offered[name] = prompt
    return offered, warnings


def prompt_command(server: str, scope: str, prompt: Prompt) -> dict[str, object]:
    """The `get_commands` item of one server prompt (source `"mcp"`), with its declared `arguments`."""
    item: dict[str, object] = {
        "name": f"{PREFIX}{server}:{command_name(prompt.name)}",
        "description": cut(prompt.description or prompt.title or f"Prompt {prompt.name} of MCP server {server}",
                           MAX_DESCRIPTION_CHARS, "the server's description"),
        "source": "mcp",
        "sourceInfo": {"path": f"<mcp:{server}>", "source": f"mcp:{server}", "scope": scope, "origin": "top-level"},
        "path": f"<mcp:{server}>",
        "arguments": [_argument(a) for a in prompt.arguments or []],
        "argumentHint": " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments or []),
    }
    if scope in ("user", "project"):
        item["location"] = scope
    return item


def _argument(argument: PromptArgument) -> dict[str, object]:
    info: dict[str, object] = {"name": argument.name, "required": bool(argument.required)}
    if argument.description:
        info["description"] = cut(argument.description, MAX_DESCRIPTION_CHARS, "the server's description")
    return info


def map_arguments(prompt: Prompt, rest: str, command: str) -> dict[str, str]:
    """The `prompts/get` arguments for the words `rest` typed after `/<command>` (module docstring)."""
    declared = [a.name for a in prompt.arguments or []]
    named: dict[str, str] = {}
    positional: list[str] = []
    for word in parse_arguments(rest):
        key, equals, value = word.partition("=")
        if equals and key in declared:
            named[key] = value
        else:
            positional.append(word)
    free = [name for name in declared if name not in named]
    if positional and not declared:
        raise CommandError(f"/{command} takes no arguments (got {' '.join(positional)!r})")
    if positional and not free:
        raise CommandError(f"/{command}: every argument was given by name; extra text {' '.join(positional)!r}"
                           f" ({_usage(prompt)})")
    values = dict(named)
    for name, word in zip(free, positional):
        values[name] = word
    if len(positional) > len(free):
        values[free[-1]] = " ".join(positional[len(free) - 1:])
    missing = [a.name for a in prompt.arguments or [] if a.required and not values.get(a.name)]
    if missing:
        raise CommandError(f"/{command} needs {', '.join(missing)} ({_usage(prompt)})")
    return values


def _usage(prompt: Prompt) -> str:
    """`arguments: topic (required): what to write about; tone` for messages."""
    parts = [a.name + (" (required)" if a.required else "") + (f": {a.description}" if a.description else "")
             for a in prompt.arguments or []]
    return "arguments: " + "; ".join(parts) if parts else "no arguments"


def prompt_message(result: GetPromptResult) -> tuple[str, list[ImageContent]]:
    """`(text, images)` of a `GetPromptResult`: its messages' text blocks joined by blank lines, and its images."""
    blocks = [block for message in result.messages or [] for block in to_content(_Content(message.content))]
    texts = [block["text"] for block in blocks if block.get("type") == "text"]
    images = [dict(block) for block in blocks if block.get("type") == "image"]
    return "\n\n".join(texts), images


class _Content:
    """One prompt message's content in the shape `to_content` reads (a tool result's `content` list)."""

    def __init__(self, content: object):
        self.content = content if isinstance(content, list) else [content]
        self.structured_content = None

