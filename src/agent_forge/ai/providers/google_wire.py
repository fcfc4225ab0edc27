"""Wire shapes of Gemini's generateContent API, named as https://ai.google.dev/api/generate-content names them.

A `Part` is a oneof in the API (text, inline data, function call or response): one `total=False` TypedDict
stands for all of them, in requests and in response chunks alike. Response shapes are `total=False`: the
handler reads every field defensively.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from ..types import JsonValue


class Blob(TypedDict):
    """Base64 `data` of `mimeType`."""

    mimeType: str
    data: str


class FunctionCall(TypedDict, total=False):
    id: str
    name: str
    args: dict[str, JsonValue]


class FunctionResponsePart(TypedDict):
    """Media of a multimodal function response (the API's `FunctionResponseBlob` has Blob's fields)."""

    inlineData: Blob


class FunctionResponse(TypedDict, total=False):
    """`response` is `{"output": text}`, or `{"error": text}` for a failed call; `id` is the answered
    `FunctionCall.id` (sent when the call had one); `parts` the result's images (Gemini 3 and later)."""

    id: str
    name: str
    response: dict[str, str]
    parts: list[FunctionResponsePart]


class Part(TypedDict, total=False):
    text: str
    thought: bool
    thoughtSignature: str
    inlineData: Blob
    functionCall: FunctionCall
    functionResponse: FunctionResponse


class Content(TypedDict):
    role: Literal["user", "model"]
    parts: list[Part]


class ThinkingConfig(TypedDict, total=False):
    """`thinkingLevel` (Gemini 3) or `thinkingBudget` in tokens (Gemini 2.5)."""

    thinkingLevel: str
    thinkingBudget: int
    includeThoughts: bool


class FunctionDeclaration(TypedDict):
    name: str
    description: str
    parametersJsonSchema: dict[str, JsonValue]


# ---- response chunks -----------------------------------------------------------------------------------


class CandidateContent(TypedDict, total=False):
    role: str
    parts: list[Part]


class Candidate(TypedDict, total=False):
    content: CandidateContent
    finishReason: str


class PromptFeedback(TypedDict, total=False):
    blockReason: str


class UsageMetadata(TypedDict, total=False):
    """`promptTokenCount` includes the cached tokens; `candidatesTokenCount` excludes the thoughts."""

    promptTokenCount: int
    candidatesTokenCount: int
    cachedContentTokenCount: int
    thoughtsTokenCount: int


class GenerateContentResponse(TypedDict, total=False):
    """One streamed chunk; `error` is what the API sends instead when the stream fails midway."""

    candidates: list[Candidate]
    promptFeedback: PromptFeedback
    usageMetadata: UsageMetadata
    modelVersion: str
    responseId: str
    error: JsonValue
