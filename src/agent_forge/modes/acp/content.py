"""ACP prompt content (`ContentBlock[]`) → the session's prompt: text and image attachments.

Text blocks are joined in order. An embedded text resource (the editor's file or selection) becomes a
`<file name="...">` block, the format of `@path` attachments in the other modes; an embedded image or an image
block becomes an attachment; a resource link is named in the text so the model can read it with its tools.
Audio and other binary resources are refused (`initialize` does not offer them): never silently dropped.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote, urlparse

from ...ai.visible_text import escape_invisible
from ...coding.file_blocks import file_block
from ...coding.tools.file_kinds import IMAGE_TYPES, image_data_problem
from .protocol import invalid_params


def prompt_input(blocks: Any) -> tuple[str, list[dict[str, Any]]]:
    """`(text, images)` of a `session/prompt`'s `prompt`. Raises `AcpError` (-32602) for a block that is not
    well formed or cannot be given to the model."""
    if not isinstance(blocks, list):
        raise invalid_params('"prompt" must be an array of content blocks')
    parts: list[str] = []
    images: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise invalid_params(f"prompt[{index}] must be an object")
        _add_block(block, index, parts, images)
    text = "\n".join(parts)
    if not text.strip() and not images:
        raise invalid_params('"prompt" is empty: it needs some text, an image or a resource')
    return text, images


def _add_block(block: dict[str, Any], index: int, parts: list[str], images: list[dict[str, Any]]) -> None:
    kind = block.get("type")
    if kind == "text":
        parts.append(_string(block, "text", index))
    elif kind == "image":
        images.append(_image(_string(block, "data", index), _string(block, "mimeType", index), f"prompt[{index}]"))
    elif kind == "resource_link":
        uri, name = _string(block, "uri", index), _string(block, "name", index)
        parts.append(link(name, file_path(uri)))
    elif kind == "resource":
        _add_resource(block.get("resource"), index, parts, images)
    elif kind == "audio":
        raise invalid_params(f"prompt[{index}]: audio is not supported (promptCapabilities.audio is false)")
    else:
        raise invalid_params(f"prompt[{index}]: unknown content block type {kind!r}")


def _add_resource(resource: Any, index: int, parts: list[str], images: list[dict[str, Any]]) -> None:
    if not isinstance(resource, dict):
        raise invalid_params(f"prompt[{index}].resource must be an object")
    uri = _string(resource, "uri", index, "resource.")
    if isinstance(resource.get("text"), str):
        parts.append(file_block(file_path(uri), resource["text"]))
    elif isinstance(resource.get("blob"), str) and resource.get("mimeType") in IMAGE_TYPES:
        images.append(_image(resource["blob"], resource["mimeType"], f"prompt[{index}].resource"))
    elif isinstance(resource.get("blob"), str):
        raise invalid_params(f"prompt[{index}]: the binary resource {uri} ({resource.get('mimeType')}) cannot be "
                             "given to the model; only text and images can")
    else:
        raise invalid_params(f"prompt[{index}].resource needs \"text\" or \"blob\"")


def _image(data: str, mime: str, where: str) -> dict[str, Any]:
    """An image attachment; `where` names the block (`prompt[0]`, `prompt[0].resource`) in the errors."""
    field = "blob" if where.endswith("resource") else "data"
    if mime not in IMAGE_TYPES:
        raise invalid_params(f"{where}.mimeType: image type {mime!r} is not one of {', '.join(IMAGE_TYPES)}")
    problem = image_data_problem(data, mime)
    if problem:
        raise invalid_params(f"{where}.{field}: {problem}")
    return {"type": "image", "data": data, "mimeType": mime}


def link(name: str, target: str) -> str:
    """A Markdown link `[name](target)` that says what the editor sent and nothing more: `\\`, `[`, `]` escaped in
    the name, line breaks and other control characters as escapes (`\\n`); a target holding spaces, brackets or
    control characters written `<target>` with `<`, `>` escaped and control characters percent-encoded."""
    shown = escape_invisible(name.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
                             .replace("\t", "\\t"))
    shown = re.sub(r"([\[\]])", r"\\\1", shown)
    if re.search(r"[\s()<>\x00-\x1f\x7f]", target):
        target = re.sub(r"[\x00-\x1f\x7f]", lambda m: f"%{ord(m.group()):02X}", target)
        target = "<" + re.sub(r"([<>\\])", r"\\\1", target) + ">"
    return f"[{shown}]({target})"


def file_path(uri: str) -> str:
    """A `file://` URI as the path it names; any other URI as it is."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _string(block: dict[str, Any], key: str, index: int, within: str = "") -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise invalid_params(f"prompt[{index}].{within}{key} must be a string")
    return value
