"""End to end: images sent over RPC to a model that takes text only are answered with a `warning` (docs/rpc.md),
so the client learns they were left out; a model that takes images gets no warning."""

from __future__ import annotations

from agent_forge.modes.rpc.client import RpcClient

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
IMAGE = {"type": "image", "mimeType": "image/png", "data": PNG}


async def test_images_for_a_text_only_model_are_answered_with_a_warning(agent_env_factory, fake_llm, tmp_path):
    from support.model_entries import model_entry

    env = agent_env_factory(models=[{**model_entry("fake-model"), "input": ["text"]}])
    fake_llm.set_script([{"text": "Seen."}, {"text": "Again."}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=env) as client:
        reply = await client.send({"type": "prompt", "message": "look", "images": [IMAGE, IMAGE]})
        assert reply["success"] is True and reply["data"]["disposition"] == "started"
        assert reply["data"]["warning"] == ("The model fake-model does not accept images: the 2 images of this "
                                            "prompt are left out (the model sees \"(image omitted)\").")
        await client.wait_for("agent_settled")
        queued = await client.send({"type": "follow_up", "message": "and this", "images": [IMAGE]})
        assert "the image of this prompt is left out" in queued["data"]["warning"]
        steered = await client.send({"type": "steer", "message": "plain text"})
        assert steered["data"] == {"disposition": "queued"}  # no image, no warning
    sent = fake_llm.requests[0]["body"]["messages"][-1]["content"]
    assert "image omitted" in str(sent) and PNG not in str(sent)


async def test_images_for_a_model_that_takes_them_get_no_warning(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "Seen."}])
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        reply = await client.send({"type": "prompt", "message": "look", "images": [IMAGE]})
        assert reply["data"] == {"disposition": "started"}
        await client.wait_for("agent_settled")
    assert PNG in str(fake_llm.requests[0]["body"]["messages"][-1]["content"])
