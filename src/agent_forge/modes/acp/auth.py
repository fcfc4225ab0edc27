"""`authMethods` and `authenticate`: the API-key providers the agent knows (`ai/hosts.py`), each with the
variable and the `auth.json` entry that give it a key. ACP carries no secret, so `authenticate` checks that
the key is there now (an `auth.json` written meanwhile counts; a variable must be in the agent's environment)
and says how to add it when it is not (`-32000`, authentication required)."""

from __future__ import annotations

import os
from typing import Any

from .protocol import AUTH_REQUIRED, AcpError, invalid_params


def auth_methods() -> list[dict[str, Any]]:
    """ACP `AuthMethod`s (the `agent` kind), one per provider that takes an API key."""
    from ...ai.hosts import HOSTS

    return [{"id": name, "name": f"{name} API key", "description": _how(name, host.env)}
            for name, host in HOSTS.items() if host.env]


def authenticate(method_id: Any) -> dict[str, Any]:
    """`{}` when provider `method_id` has a key. Raises `AcpError`: -32602 for an unknown method, -32000 with
    the instructions when there is no key yet."""
    from ...ai.hosts import HOSTS
    from ...coding.models.auth_file import AuthStorage
    from ...coding.paths import agent_dir

    host = HOSTS.get(method_id) if isinstance(method_id, str) else None
    if host is None or not host.env:
        raise invalid_params(f"unknown authentication method {method_id!r}: use one of initialize's authMethods")
    if os.environ.get(host.env) or AuthStorage(agent_dir() / "auth.json").has_api_key(method_id):
        return {}
    raise AcpError(AUTH_REQUIRED, f"No {method_id} API key yet. {_how(method_id, host.env)}, then authenticate again.")


def _how(name: str, variable: str | None) -> str:
    from ...coding.paths import agent_dir, path_text

    entry = f'{{"{name}": {{"type": "api_key", "key": "..."}}}}'
    return (f"Set {variable} in the agent's environment (the editor's agent settings, then restart the agent), "
            f"or add {entry} to {path_text(agent_dir() / 'auth.json')}")
