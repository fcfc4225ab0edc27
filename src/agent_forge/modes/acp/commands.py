"""What ACP lacks, as slash commands: `/compact [instructions]`, `/name <title>` and `/export [path]`, listed in
`available_commands_update` after the session's own commands (plugin commands, templates and skills, which
win when they have the same name). Each answers with a message and ends its turn (`end_turn`); a failure is
said the same way, never silently."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from .updates import chunk

BUILTINS = {
    "compact": ("Condense the conversation so far into a summary (frees context)", "instructions (optional)"),
    "name": ("Name this session (its title in the session list)", "title"),
    "export": ("Write this session as an HTML file", "path (optional)"),
}


def commands(session: Any) -> list[dict[str, Any]]:
    """ACP `AvailableCommand`s: the session's commands (`/name args` in a prompt), then the built-ins."""
    found = []
    for item in session.get_commands():
        hint = item.get("argumentHint") or item.get("argument_hint")
        found.append({"name": str(item.get("name")), "description": str(item.get("description") or ""),
                      "input": {"hint": str(hint) if hint else "arguments (optional)"}})
    taken = {entry["name"] for entry in found}
    found.extend({"name": name, "description": text, "input": {"hint": hint}}
                 for name, (text, hint) in BUILTINS.items() if name not in taken)
    return found


def builtin(session: Any, blocks: Any) -> tuple[str, str] | None:
    """(name, arguments) when the prompt is one text block naming a built-in the session has no command of."""
    if not (isinstance(blocks, list) and len(blocks) == 1 and isinstance(blocks[0], dict)
            and blocks[0].get("type") == "text" and isinstance(blocks[0].get("text"), str)):
        return None
    text = blocks[0]["text"].strip()
    name, _, rest = text[1:].partition(" ") if text.startswith("/") else ("", "", "")
    if name not in BUILTINS or session.names_command(text):
        return None
    return name, rest.strip()


async def run(session: Any, name: str, arguments: str, send: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Run built-in `name`; its outcome is sent as an agent message. The `session/prompt` answer."""
    from ...coding.errors import CommandError

    work: Callable[[Any, str], Awaitable[str]] = _RUNNERS[name]
    try:
        text = await work(session, arguments)
    except CommandError as exc:
        text = f"/{name} failed: {exc}"
    else:
        if name == "name":  # the editor's title follows
            send({"sessionUpdate": "session_info_update", "title": session.store.session_name})
    send(chunk("agent_message_chunk", text))
    return {"stopReason": "end_turn"}


async def _compact(session: Any, arguments: str) -> str:
    result = await session.compact(arguments or None)
    before = result.get("tokensBefore") if isinstance(result, dict) else None
    return f"Compacted the conversation{f' (it held about {before} tokens)' if before else ''}."


async def _name(session: Any, arguments: str) -> str:
    session.set_session_name(arguments)  # a blank name is a CommandError
    return f"Session named {session.store.session_name}."


async def _export(session: Any, arguments: str) -> str:
    return f"Exported to {await session.export_html(arguments or None)}"


_RUNNERS = {"compact": _compact, "name": _name, "export": _export}
