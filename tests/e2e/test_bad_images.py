"""End to end: an image whose bytes are not of its stated type (a "PNG" that is text) is refused at every entry
point, RPC `prompt`/`steer`, a plugin's `input` Transform and a plugin tool's result, by the one check
(`file_kinds.image_data_problem`), so it never reaches the provider nor the session history (ACP `session/prompt`:
tests/e2e/test_acp_sessions.py). The real CLI, the loopback fake LLM."""

from __future__ import annotations

import json
import textwrap

from agent_forge.modes.rpc.client import RpcClient

FAKE_PNG = "aGVsbG8gd29ybGQ="  # "hello world"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

PLUGIN = textwrap.dedent(f'''
    from agent_forge.plugins import ToolResult, Transform

    FAKE = {{"type": "image", "data": "{FAKE_PNG}", "mimeType": "image/png"}}


    def setup(plugin):
        @plugin.on("input")
        def attach(event, ctx):
            if event.text == "attach":
                return Transform("attached", images=[FAKE])

        @plugin.tool("shot", description="a screenshot", parameters={{"type": "object", "properties": {{}}}})
        def shot(args, ctx):
            return {{"content": [{{"type": "text", "text": "here"}}, FAKE]}}
''')


def _sent_images(fake_llm) -> list[str]:
    """Every image data URL or base64 payload the provider was sent."""
    return [text for request in fake_llm.requests for text in [json.dumps(request["body"])] if FAKE_PNG in text]


async def test_rpc_prompt_and_steer_refuse_a_png_that_is_not_one(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "ok"}])
    image = {"type": "image", "data": FAKE_PNG, "mimeType": "image/png"}
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        prompt = await client.send({"type": "prompt", "message": "look", "images": [image]})
        steer = await client.send({"type": "steer", "message": "look", "images": [image]})
        events = await client.prompt_and_wait("fine", images=[{"type": "image", "data": PNG, "mimeType": "image/png"}])
    for reply in (prompt, steer):
        assert reply["success"] is False
        assert reply["error"] == ("Field 'images[0].data' must be base64-encoded image data: the data is not of "
                                  "type image/png")
    assert events[-1]["type"] == "agent_settled" and len(fake_llm.requests) == 1
    assert not _sent_images(fake_llm) and PNG in json.dumps(fake_llm.requests[0]["body"])


async def test_a_plugin_image_that_is_not_its_type_is_an_error_not_a_message(agent_env, fake_llm, tmp_path):
    plugin = tmp_path / "images.py"
    plugin.write_text(PLUGIN)
    fake_llm.set_script([{"text": "plain"}, {"tool_calls": [{"name": "shot", "arguments": {}}]}, {"text": "done"}])
    async with await RpcClient.start(["-e", str(plugin)], cwd=str(tmp_path), env=agent_env) as client:
        first = await client.prompt_and_wait("attach")
        errors = [e for e in first if e["type"] == "extension_error"]
        events = await client.prompt_and_wait("take one")
        session_file = (await client.send({"type": "get_state"}))["data"]["sessionFile"]
    assert any("images[0]: the data is not of type image/png" in e["error"] for e in errors), errors
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert ends[0]["isError"] is True
    assert "content[1]: the data is not of type image/png" in ends[0]["result"]["content"][0]["text"]
    assert len(fake_llm.requests) == 3 and not _sent_images(fake_llm)
    assert FAKE_PNG not in open(session_file).read()
