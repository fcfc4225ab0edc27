"""Images a text-only model will not see: the one check and warning text of RPC and ACP prompts (docs/rpc.md,
docs/acp.md). Such a prompt still runs; the providers send `(image omitted: ...)` in each image's place
(`ai/transform.py`), and the client is told first so the user learns the image went nowhere."""

from __future__ import annotations

from collections.abc import Mapping, Sized


def takes_images(model: object) -> bool:
    """False for a model whose catalogue entry lists its `input` without "image"; True without a model (no
    request is made) or without an `input` list (the catalogue's default is text and images)."""
    if not isinstance(model, Mapping):
        return True
    return "image" in (model.get("input") or ["text", "image"])


def dropped_images_warning(model: object, images: Sized | None) -> str | None:
    """`The model M does not accept images: the N images of this prompt are left out ...` (`the image ... is`
    for one) when `images` is not empty and `model` takes text only, else None."""
    if not images or takes_images(model):
        return None
    model_id = model.get("id") if isinstance(model, Mapping) else None
    which = "the image of this prompt is" if len(images) == 1 else f"the {len(images)} images of this prompt are"
    return f"The model {model_id} does not accept images: {which} left out (the model sees \"(image omitted)\")."
