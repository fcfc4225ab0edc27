"""The session's model and thinking level as ACP session config options (`configOptions` of `session/new` and
`session/load`, changed with `session/set_config_option`; schema `SessionConfigOption`, `select` kind).

`model` offers every model that has a key (`provider/id`, named as the catalogue names it); `thinking` the
levels the current model supports (only for a reasoning model). A change is recorded in the session like the
RPC `set_model` / `set_thinking_level` commands, and the answer lists all options again (a new model may
change the thinking levels).
"""

from __future__ import annotations

from typing import Any

from .protocol import invalid_params


def config_options(session: Any) -> list[dict[str, Any]]:
    """The options for `session` (an AgentSession); none without a model."""
    model = session.model
    if model is None:
        return []
    current = f"{model['provider']}/{model['id']}"
    choices = [{"value": f"{m['provider']}/{m['id']}", "name": str(m.get("name") or m["id"])}
               for m in session.available_models()]
    if current not in {c["value"] for c in choices}:
        choices.insert(0, {"value": current, "name": str(model.get("name") or model["id"])})
    options: list[dict[str, Any]] = [{"id": "model", "name": "Model", "category": "model", "type": "select",
                                      "currentValue": current, "options": choices}]
    levels = session.available_thinking_levels()
    if len(levels) > 1:
        options.append({"id": "thinking", "name": "Thinking", "category": "thought_level", "type": "select",
                        "currentValue": session.agent.thinking_level,
                        "options": [{"value": level, "name": level} for level in levels]})
    return options


def set_option(session: Any, config_id: Any, value: Any) -> list[dict[str, Any]]:
    """Apply `session/set_config_option`; the options afterwards. Raises `AcpError` (-32602) for an unknown
    option or value (the session's own message, e.g. an unknown model)."""
    from ...coding.errors import CommandError

    if not isinstance(value, str):
        raise invalid_params('"value" must be a string (the id of one of the option\'s values)')
    try:
        if config_id == "model":
            provider, _, model_id = value.partition("/")
            if not model_id:
                raise invalid_params(f"model {value!r}: use provider/id, as the option's values are")
            session.set_model(provider, model_id)
        elif config_id == "thinking":
            session.set_thinking_level(value)
        else:
            raise invalid_params(f"unknown config option {config_id!r}: this agent has model and thinking")
    except CommandError as exc:
        raise invalid_params(str(exc)) from None
    return config_options(session)
