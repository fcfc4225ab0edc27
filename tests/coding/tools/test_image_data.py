"""`image_data_problem`: the checks an image from elsewhere (an MCP server) passes before it reaches a provider."""

from __future__ import annotations

import base64

import pytest

from agent_forge.coding.tools.file_kinds import MAX_IMAGE_BYTES, image_data_problem

B64 = lambda data: base64.b64encode(data).decode()  # noqa: E731


@pytest.mark.parametrize("data, mime", [
    (B64(b"\x89PNG\r\n\x1a\nrest"), "image/png"), (B64(b"\xff\xd8\xffx"), "image/jpeg"),
    (B64(b"GIF89a..."), "image/gif"), (B64(b"RIFF\0\0\0\0WEBPVP8 "), "image/webp")])
def test_each_supported_type_with_its_magic_bytes_passes(data, mime):
    assert image_data_problem(data, mime) is None


@pytest.mark.parametrize("data, mime, problem", [
    (B64(b"<svg/>"), "image/svg+xml", "image type 'image/svg+xml' is not one of"),
    (B64(b"x"), None, "image type 'None' is not one of"),
    ("", "image/png", "the image data is empty"),
    ("@@@@", "image/png", "not valid base64"),
    ("iVBORw0KGgo=\n", "image/png", "not valid base64"),
    ("é", "image/png", "not valid base64"),
    (B64(b"GIF89a..."), "image/png", "the data is not of type image/png (it is image/gif)"),
    (B64(b"hello"), "image/jpeg", "the data is not of type image/jpeg"),
    (B64(b"\x89PNG\r\n\x1a\n" + b"\0" * MAX_IMAGE_BYTES), "image/png", "over the 20MB limit"),
])
def test_anything_else_is_refused_with_a_reason(data, mime, problem):
    assert problem in (image_data_problem(data, mime) or "")
