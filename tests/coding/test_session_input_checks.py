"""Arguments the SDK passes straight to AgentSession (the RPC layer checks types, the SDK does not): empty
prompts, wrong types, unknown queue names, and models of hosts without built-in models."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from agent_forge.ai.catalogue import PROVIDER_ENV_KEYS
from agent_forge.coding.errors import CommandError
from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, faux_requests
from agent_forge.sdk import set_faux_responses

IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_ENV_KEYS.values():
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def key() -> str:
    return f"checks-{uuid.uuid4().hex}"


@pytest.fixture
def session(tmp_path: Path, key: str):
    s = create_agent_session(cwd=str(tmp_path), agent_dir=tmp_path / "agent", model=faux_model(key=key),
                             no_session=True, tools=[])
    yield s
    s.store.close()


@pytest.mark.parametrize("text", ["", "   \n\t"])
async def test_empty_prompt_is_refused_and_sends_nothing(session, key: str, text: str) -> None:
    set_faux_responses([FauxResponse(text="never")], key)
    for send in (session.prompt, session.steer, session.follow_up):
        with pytest.raises(CommandError, match="^Empty prompt: send some text or an image$"):
            send(text)
    with pytest.raises(CommandError, match="^Empty prompt"):
        await session.submit(text)
    assert faux_requests(key) == [] and session.messages == [] and not session.is_streaming
    assert session.agent.steering_queue == [] and session.agent.follow_up_queue == []


async def test_an_image_alone_is_a_prompt(session, key: str) -> None:
    set_faux_responses([FauxResponse(text="A picture.")], key)
    await session.prompt_and_wait("", [IMAGE])
    [request] = faux_requests(key)
    assert request.context["messages"][0]["content"] == [{"type": "text", "text": ""}, IMAGE]


async def test_a_template_that_expands_to_nothing_is_refused(tmp_path: Path, key: str) -> None:
    (tmp_path / "agent" / "prompts").mkdir(parents=True)
    (tmp_path / "agent" / "prompts" / "blank.md").write_text("---\ndescription: nothing\n---\n\n")
    s = create_agent_session(cwd=str(tmp_path), agent_dir=tmp_path / "agent", model=faux_model(key=key),
                             no_session=True, tools=[])
    with pytest.raises(CommandError, match="^Empty prompt"):
        s.prompt("/blank")
    assert faux_requests(key) == []


def test_prompt_that_is_not_a_string(session) -> None:
    with pytest.raises(CommandError, match="^A prompt must be a string, got int$"):
        session.prompt(123)


def test_set_session_name_of_the_wrong_type(session) -> None:
    with pytest.raises(CommandError, match="^Session name must be a string, got int$"):
        session.set_session_name(123)
    with pytest.raises(CommandError, match="cannot be empty"):
        session.set_session_name("  ")
    assert session.store.session_name is None


@pytest.mark.parametrize("queue, mode, message", [
    ("nope", "all", "Invalid queue: 'nope'. Valid queues: steering, followUp"),
    (None, "all", "Invalid queue: None"),
    ("steering", "nope", "Invalid mode: nope"),
    ("followUp", ["all"], "Invalid mode"),
])
def test_set_queue_mode_refuses_unknown_queues_and_modes(session, queue, mode, message: str) -> None:
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(".", r"\.")):
        session.set_queue_mode(queue, mode)
    assert (session.agent.steering_mode, session.agent.follow_up_mode) == ("one-at-a-time", "one-at-a-time")
    session.set_queue_mode("followUp", "all")
    assert session.agent.follow_up_mode == "all"


def test_set_model_and_logout_of_the_wrong_type(session) -> None:
    with pytest.raises(CommandError, match="^provider must be a string, got int$"):
        session.set_model(123, "x")
    with pytest.raises(CommandError, match="^model_id must be a string, got NoneType$"):
        session.set_model("groq", None)
    with pytest.raises(CommandError, match="^provider must be a string, got list$"):
        session.model_control.logout_provider(["groq"])


def test_set_model_accepts_any_id_of_a_host_without_built_in_models(session, monkeypatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk-test")
    model = session.set_model("groq", "qwen/qwen3-32b")
    assert (model["provider"], model["id"], model["baseUrl"]) == ("groq", "qwen/qwen3-32b",
                                                                  "https://api.groq.com/openai/v1")
    assert session.get_state()["model"]["id"] == "qwen/qwen3-32b"
    with pytest.raises(CommandError, match="^Model not found: anthropic/no-such-model$"):
        session.set_model("anthropic", "no-such-model")


def test_no_model_message_mentions_models_json_errors(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps({"providers": {"local": {
        "baseUrl": "localhost:11434", "api": "openai-completions", "models": [{"id": "m"}]}}}))
    s = create_agent_session(cwd=str(tmp_path), agent_dir=agent, no_session=True, tools=[])
    assert s.model is None
    with pytest.raises(CommandError) as caught:
        s.prompt("hello")
    message = str(caught.value)
    assert message.startswith("No model available: no provider has an API key.")
    assert f"{agent / 'models.json'} had errors, so some of its models may have been skipped: line 1: providers.local: " \
           '"baseUrl" must be an http:// or https:// URL' in message


async def test_provider_groq_with_any_model_id_sends_a_real_request(tmp_path: Path, fake_llm, monkeypatch) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps({"providers": {"groq": {"baseUrl": fake_llm.base_url_openai}}}))
    monkeypatch.setenv("GROQ_API_KEY", "gsk-fake")
    fake_llm.set_script([{"text": "Hello from Groq."}])
    s = create_agent_session(cwd=str(tmp_path), agent_dir=agent, provider="groq",
                             model="llama-3.3-70b-versatile", no_session=True, tools=[])
    try:
        assert any('Model "llama-3.3-70b-versatile" of groq is not described in the catalogue' in w
                   for w in s.warnings)
        await s.prompt_and_wait("hi")
    finally:
        s.store.close()
    [request] = fake_llm.requests
    assert request["body"]["model"] == "llama-3.3-70b-versatile" and request["path"] == "/v1/chat/completions"
    assert {k.lower(): v for k, v in request["headers"].items()}["authorization"] == "Bearer gsk-fake"
    assert s.last_assistant_text() == "Hello from Groq."
