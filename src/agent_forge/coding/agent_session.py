"""AgentSession: the hub every mode drives — agent, session file, model registry and settings in one object.

Modes stay thin: RPC commands, print mode and the SDK call the methods here. Every entry is appended to the
session file before the event that reports it reaches a listener, so a client that saw `message_end` can trust
the entry is on disk.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..agent.agent import QUEUE_MODES, Agent
from ..agent.loop import now_ms
from ..agent.types import AgentTool
from ..ai.types import THINKING_LEVELS, Model
from .session_store import SessionStore

Listener = Callable[[dict[str, Any]], None]


class CommandError(Exception):
    """A command was rejected before it changed anything; the message is shown to the client as is."""


@dataclass(kw_only=True)
class SessionOptions:
    """How to build a session. `session_file` resumes that file; `no_session` keeps everything in memory.
    `stream_fn` replaces the provider registry (tests, SDK users with a custom transport)."""

    cwd: str
    agent_dir: Path | None = None
    provider: str | None = None
    model: str | None = None
    api_key: str | None = None
    thinking: str | None = None
    session_file: str | None = None
    session_dir: str | None = None
    no_session: bool = False
    name: str | None = None
    tools: list[AgentTool] | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    stream_fn: Any = None


class AgentSession:
    """One conversation: its agent, store, model and listeners. Build it with `create_session(options)`."""

    def __init__(self, *, store: SessionStore, agent: Agent, registry: Any, settings: Any, cwd: str,
                 system_prompt_override: str | None = None, append_system_prompt: str | None = None):
        self.store = store
        self.agent = agent
        self.registry = registry
        self.settings = settings
        self.cwd = cwd
        self.warnings: list[str] = []
        self._listeners: list[Listener] = []
        self._settle_task: asyncio.Task | None = None
        self._system_prompt_override = system_prompt_override
        self._append_system_prompt = append_system_prompt

    # -- events --------------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(event)` for every event, synchronously and in order. Returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, event: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            listener(event)

    def on_agent_event(self, event: dict[str, Any]) -> None:
        """Persist first, then tell listeners (the durability promise of this module)."""
        if event["type"] == "message_end":
            self.store.append_message(event["message"])
        self._emit(event)

    # -- state ---------------------------------------------------------------------------------------

    @property
    def model(self) -> Model | None:
        return self.agent.model

    @property
    def is_streaming(self) -> bool:
        return self._settle_task is not None and not self._settle_task.done()

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.agent.messages

    def get_state(self) -> dict[str, Any]:
        """The `get_state` response data (seed 000)."""
        state: dict[str, Any] = {
            "model": self.model,
            "thinkingLevel": self.agent.thinking_level,
            "isStreaming": self.is_streaming,
            "isCompacting": False,
            "steeringMode": self.agent.steering_mode,
            "followUpMode": self.agent.follow_up_mode,
            "sessionFile": str(self.store.path) if self.store.path else None,
            "sessionId": self.store.session_id,
            "autoCompactionEnabled": True,
            "messageCount": len(self.agent.messages),
            "pendingMessageCount": len(self.agent.steering_queue) + len(self.agent.follow_up_queue),
        }
        name = self.store.session_name
        if name:
            state["sessionName"] = name
        return state

    def last_assistant_text(self) -> str | None:
        for message in reversed(self.agent.messages):
            if message.get("role") == "assistant":
                texts = [b["text"] for b in message["content"] if b.get("type") == "text"]
                return "".join(texts) if texts else None
        return None

    # -- prompting -----------------------------------------------------------------------------------

    def prompt(self, text: str, images: list[dict[str, Any]] | None = None,
               streaming_behavior: str | None = None) -> str:
        """Accept a prompt: start a run, or queue it while one is going on. Returns the disposition
        (`"started"` or `"queued"`). Raises `CommandError` when it cannot be accepted."""
        message = user_message(text, images)
        if self.is_streaming:
            if streaming_behavior not in ("steer", "followUp"):
                raise CommandError(
                    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue "
                    "the message.")
            self.queue(message, streaming_behavior)
            return "queued"
        self._check_ready()
        self._start([message])
        return "started"

    def queue(self, message: dict[str, Any], behavior: str) -> None:
        if behavior == "steer":
            self.agent.steer(message)
        else:
            self.agent.follow_up(message)

    def _check_ready(self) -> None:
        model = self.agent.model
        if model is None:
            raise CommandError(no_model_message(self.registry))
        if not self.registry.has_auth(model):
            raise CommandError(self.registry.auth_error_message(model))

    def _start(self, prompts: list[dict[str, Any]]) -> None:
        self.agent.system_prompt = self.system_prompt()
        run = self.agent.start(prompts)
        self._settle_task = asyncio.ensure_future(self._settle(run))

    async def _settle(self, run: asyncio.Task) -> None:
        try:
            await asyncio.wait({run})
        finally:
            self._emit({"type": "agent_settled", "aborted": self.agent.was_aborted})

    async def prompt_and_wait(self, text: str, images: list[dict[str, Any]] | None = None) -> None:
        """SDK convenience: prompt (queueing as a follow-up when busy) and wait until the session settles."""
        self.prompt(text, images, streaming_behavior="followUp")
        await self.wait_for_idle()

    async def wait_for_idle(self) -> None:
        while self._settle_task is not None and not self._settle_task.done():
            await asyncio.wait({self._settle_task})

    async def abort(self) -> None:
        """Abort the running step and wait until the session settles."""
        self.agent.abort()
        await self.wait_for_idle()

    def system_prompt(self) -> str:
        from .system_prompt import build_system_prompt

        if self._system_prompt_override is not None:
            return self._system_prompt_override
        return build_system_prompt(cwd=self.cwd, tools=self.agent.tools, append=self._append_system_prompt)

    # -- model ---------------------------------------------------------------------------------------

    def set_model(self, provider: str, model_id: str) -> Model:
        """Switch model (recorded as a `model_change` entry). Raises `CommandError` when unknown."""
        model = self.registry.find(provider, model_id)
        if model is None:
            raise CommandError(f"Model not found: {provider}/{model_id}")
        self.agent.model = model
        self.store.append_model_change(model["provider"], model["id"])
        self._clamp_thinking_level()
        return model

    def _clamp_thinking_level(self) -> None:
        levels = self.available_thinking_levels()
        if self.agent.thinking_level not in levels:
            self.set_thinking_level(_closest_level(self.agent.thinking_level, levels))

    def set_thinking_level(self, level: str) -> None:
        if level not in THINKING_LEVELS:
            raise CommandError(f"Invalid thinking level: {level}. Valid levels: {', '.join(THINKING_LEVELS)}")
        if level != self.agent.thinking_level:
            self.agent.thinking_level = level
            self.store.append_thinking_level_change(level)

    def available_thinking_levels(self) -> list[str]:
        from ..ai.catalogue import thinking_levels_for

        return thinking_levels_for(self.agent.model) if self.agent.model else ["off"]

    def set_queue_mode(self, queue: str, mode: str) -> None:
        """`queue` is "steering" or "followUp"; `mode` is "all" or "one-at-a-time"."""
        if mode not in QUEUE_MODES:
            raise CommandError(f"Invalid mode: {mode}. Valid modes: all, one-at-a-time")
        if queue == "steering":
            self.agent.steering_mode = mode
        else:
            self.agent.follow_up_mode = mode

    def set_session_name(self, name: str) -> None:
        if not name.strip():
            raise CommandError("Session name cannot be empty")
        self.store.append_entry("session_info", name=name.strip())

    def available_models(self) -> list[Model]:
        return self.registry.available_models()

    async def close(self) -> None:
        """Finish the running work and release the session file."""
        await self.wait_for_idle()
        self.store.close()


def user_message(text: str, images: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content.extend(images or [])
    return {"role": "user", "content": content, "timestamp": now_ms()}


def _closest_level(level: str, levels: list[str]) -> str:
    """The highest supported level not above `level` (thinking levels are ordered)."""
    rank = THINKING_LEVELS.index(level) if level in THINKING_LEVELS else 0
    supported = [lv for lv in levels if THINKING_LEVELS.index(lv) <= rank]
    return supported[-1] if supported else levels[0]


def create_session(options: SessionOptions) -> AgentSession:
    """Build an AgentSession from options: settings, registry, store (new, resumed or in memory), agent.

    Raises `CommandError` for a `--session` file that cannot be opened and for an invalid `thinking` level.
    """
    from .factory import build_session

    return build_session(options)


def no_model_message(registry: Any) -> str:
    from ..ai.catalogue import PROVIDER_ENV_KEYS

    keys = ", ".join(PROVIDER_ENV_KEYS[p] for p in ("anthropic", "openai") if p in PROVIDER_ENV_KEYS)
    return (f"No model available: no provider has an API key. Set {keys}, add a key to "
            f"{registry.agent_dir / 'auth.json'}, or configure a provider in {registry.agent_dir / 'models.json'}.")
