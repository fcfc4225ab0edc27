"""Hosts as data: the wire API, base URL, key variable and compat flags of every known provider.

A host that speaks an existing API needs no code, only an entry here (or a `models.json` provider). Each
provider module reads a model's flags through `effective_compat(model)`: the host's defaults below, overridden
key by key by the model's own `compat` (which `models.json` sets at provider or model level).

Base URLs and variable names follow each host's public API documentation and the reference agent's
`providers.md`; the flags record documented differences from OpenAI's Chat Completions API:
`maxTokensField` (`max_tokens` where `max_completion_tokens` is not accepted), `supportsDeveloperRole`,
`supportsStore`, `supportsReasoningEffort`, `supportsUsageInStreaming` (`stream_options.include_usage`),
`thinkingFormat` (how reasoning is requested: `openai` = `reasoning_effort`, `openrouter` = `reasoning.effort`,
`qwen` = `enable_thinking`, `chat-template` = `chat_template_kwargs.enable_thinking`), `toolCallIdFormat`
(`mistral`: exactly nine letters or digits).
"""

from __future__ import annotations

from collections import namedtuple
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from .types import JsonValue, Model

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
OPENAI_BASE_URL = "https://api.openai.com/v1"
GOOGLE_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"


# A tuple, not a dataclass: ACP's `initialize` answer lists these before `dataclasses` (and `inspect`, ~12 ms)
# are imported (start-up budget, docs/acp.md). Not a `typing.NamedTuple` either: it makes a `ForwardRef` of each
# field's annotation (text here), compiling it, and the first `compile` of a process costs ~1.5 ms (issue 15).
class Host(namedtuple("Host", ("name", "api", "base_url", "env", "compat"), defaults=(MappingProxyType({}),))):
    """One provider endpoint. `env`: variable holding its API key (None: keyless local server); `compat`: the
    host's compat flags (read-only)."""

    __slots__ = ()
    name: str
    api: str
    base_url: str
    env: str | None
    compat: Mapping[str, JsonValue]

    @property
    def local(self) -> bool:
        return self.env is None


# Flags shared by most OpenAI-compatible hosts: no `store`, no `developer` role, the classic `max_tokens`.
_PLAIN: dict[str, JsonValue] = {"supportsStore": False, "supportsDeveloperRole": False, "maxTokensField": "max_tokens"}
_LOCAL: dict[str, JsonValue] = {**_PLAIN, "supportsReasoningEffort": False}

HOSTS: dict[str, Host] = {
    "anthropic": Host("Anthropic", "anthropic-messages", ANTHROPIC_BASE_URL, "ANTHROPIC_API_KEY"),
    "openai": Host("OpenAI", "openai-responses", OPENAI_BASE_URL, "OPENAI_API_KEY"),
    "google": Host("Google Gemini", "google-generative-ai", GOOGLE_BASE_URL, "GEMINI_API_KEY"),
    "openrouter": Host("OpenRouter", "openai-completions", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY",
                       {**_PLAIN, "thinkingFormat": "openrouter"}),
    "groq": Host("Groq", "openai-completions", "https://api.groq.com/openai/v1", "GROQ_API_KEY",
                 {"supportsStore": False, "supportsDeveloperRole": False}),
    "cerebras": Host("Cerebras", "openai-completions", "https://api.cerebras.ai/v1", "CEREBRAS_API_KEY",
                     {"supportsStore": False, "supportsDeveloperRole": False}),
    "xai": Host("xAI", "openai-completions", "https://api.x.ai/v1", "XAI_API_KEY",
                {**_PLAIN, "supportsReasoningEffort": False}),
    "mistral": Host("Mistral", "openai-completions", "https://api.mistral.ai/v1", "MISTRAL_API_KEY",
                    {**_PLAIN, "supportsReasoningEffort": False, "supportsUsageInStreaming": False,
                     "toolCallIdFormat": "mistral"}),
    "deepseek": Host("DeepSeek", "openai-completions", "https://api.deepseek.com", "DEEPSEEK_API_KEY",
                     {**_PLAIN, "supportsReasoningEffort": False}),
    "together": Host("Together AI", "openai-completions", "https://api.together.xyz/v1", "TOGETHER_API_KEY",
                     {**_PLAIN, "supportsReasoningEffort": False}),
    "fireworks": Host("Fireworks", "openai-completions", "https://api.fireworks.ai/inference/v1",
                      "FIREWORKS_API_KEY", {**_PLAIN, "supportsReasoningEffort": False}),
    "huggingface": Host("Hugging Face", "openai-completions", "https://router.huggingface.co/v1", "HF_TOKEN",
                        {**_PLAIN, "supportsReasoningEffort": False}),
    "nvidia": Host("NVIDIA NIM", "openai-completions", "https://integrate.api.nvidia.com/v1", "NVIDIA_API_KEY",
                   {**_PLAIN, "supportsReasoningEffort": False}),
    "moonshot": Host("Moonshot AI", "openai-completions", "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY",
                     {**_PLAIN, "supportsReasoningEffort": False}),
    "zai": Host("Z.ai", "openai-completions", "https://api.z.ai/api/paas/v4", "ZAI_API_KEY",
                {**_PLAIN, "supportsReasoningEffort": False}),
    "vercel-ai-gateway": Host("Vercel AI Gateway", "openai-completions", "https://ai-gateway.vercel.sh/v1",
                              "AI_GATEWAY_API_KEY", dict(_PLAIN)),
    # Local servers: keyless, default ports of each project's documentation.
    "ollama": Host("Ollama", "openai-completions", "http://localhost:11434/v1", None,
                   {**_PLAIN, "supportsReasoningEffort": True}),
    "vllm": Host("vLLM", "openai-completions", "http://localhost:8000/v1", None,
                 {**_PLAIN, "supportsReasoningEffort": True}),
    "lmstudio": Host("LM Studio", "openai-completions", "http://localhost:1234/v1", None, dict(_LOCAL)),
    "llamacpp": Host("llama.cpp server", "openai-completions", "http://localhost:8080/v1", None, dict(_LOCAL)),
}
"""Provider id -> host. Order is the display order of providers without built-in models."""

_BY_NETLOC = {urlsplit(host.base_url).netloc: provider for provider, host in HOSTS.items() if not host.local}


def host_for(model: Model) -> Host | None:
    """The host of `model`: by its `provider` id, else by its `baseUrl`'s network location (a custom provider
    id pointing at, say, `api.deepseek.com` still gets DeepSeek's flags); None when neither is known."""
    host = HOSTS.get(str(model.get("provider") or ""))
    if host is not None:
        return host
    netloc = urlsplit(str(model.get("baseUrl") or "")).netloc
    provider = _BY_NETLOC.get(netloc)
    return HOSTS[provider] if provider else None


def effective_compat(model: Model) -> dict[str, JsonValue]:
    """The host's compat defaults with `model["compat"]` laid over them (model values win, key by key).

    Host flags only apply when the host speaks the model's `api`: an Anthropic-compatible endpoint behind a
    provider id of an OpenAI-compatible host keeps its own defaults.
    """
    host = host_for(model)
    base = host.compat if host is not None and host.api == model.get("api") else {}
    return {**base, **(model.get("compat") or {})}


def provider_env_keys() -> dict[str, str]:
    """Provider id -> environment variable of its API key (hosted providers only)."""
    return {provider: host.env for provider, host in HOSTS.items() if host.env}


def provider_endpoints() -> dict[str, tuple[str, str]]:
    """Provider id -> (api, baseUrl), so a `models.json` entry for a known host may list only its models."""
    return {provider: (host.api, host.base_url) for provider, host in HOSTS.items()}
