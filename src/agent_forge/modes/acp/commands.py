"""What ACP lacks, as commands in a prompt: `!command` (the user's own shell command, shown as an `execute`
tool call) and the slash commands `/compact [instructions]`, `/name <title>`, `/model [provider/id]`,
`/export [path]`, `/fork [N]`,
`/clone` and `/tree [N [summarize]]` (`branching.py`), listed in
`available_commands_update` after the session's own commands (plugin commands, templates and skills). A
built-in wins over a session command of its name, as the terminal UI's do (`coding.resources.commands.shadowed`):
that one is neither listed nor run here, and said once on stderr. Each ends its turn (`end_turn`, `cancelled` for a cancelled `!command`);
a slash command answers with a message, a failure is said the same way, never silently."""

from __future__ import annotations

import uuid
from typing import Any, Awaitable, Callable

from ...coding.paths import path_text
from . import branching
from .updates import chunk, usage_update

BUILTINS: dict[str, tuple[str, str | None]] = {
    "compact": ("Condense the conversation so far into a summary (frees context)", "instructions (optional)"),
    "name": ("Name this session (its title in the session list)", "title"),
    "model": ("List the models, or switch to one (as the editor's model picker does)", "provider/id (optional)"),
    "export": ("Write this session as an HTML file", "path (optional)"),
    "fork": ("Copy the conversation before one of your messages into a new session (lists them first)",
             "message number (optional)"),
    "clone": ("Copy this conversation into a new session", None),
    "tree": ("Show the session tree, or continue from one of its entries", "entry number [summarize] (optional)"),
}

AFTER_THE_TURN = frozenset({"compact", "fork", "clone", "tree"})
"""Sent while a turn runs, these wait for it (and the prompts queued behind it) to end, then run: they read or
move the conversation the turn is still writing. They run one at a time, in arrival order (a `/tree M` sent
during a `/tree N summarize` waits for it). The others run at once."""


def commands(session: Any) -> list[dict[str, Any]]:
    """ACP `AvailableCommand`s: the session's commands (`/name args` in a prompt) but those a built-in
    shadows, then the built-ins."""
    from ...coding.resources.commands import unshadowed

    found = []
    for item in unshadowed(session.get_commands(), BUILTINS):
        hint = item.get("argumentHint") or item.get("argument_hint")
        found.append({"name": str(item.get("name")), "description": str(item.get("description") or ""),
                      "input": {"hint": str(hint) if hint else "arguments (optional)"}})
    found.extend({"name": name, "description": text, **({"input": {"hint": hint}} if hint else {})}
                 for name, (text, hint) in BUILTINS.items())
    return found


_WARNED: set[str] = set()
"""The shadowing warnings said in this process: each once, however many sessions are opened."""


def warn_shadowed(session: Any) -> None:
    """Say on stderr, once per process, each session command a built-in shadows here."""
    from ...coding.resources.commands import shadowed, shadowed_warning
    from ...coding.tools.sanitize import print_warning

    for item in shadowed(session.get_commands(), BUILTINS):
        warning = shadowed_warning(item, "ACP")
        if warning not in _WARNED:
            _WARNED.add(warning)
            print_warning(warning)


def builtin(session: Any, blocks: Any) -> tuple[str, str] | None:
    """(name, arguments) when the prompt is one text block naming a built-in (which wins over a session
    command of its name), or a `!command` / `!!command` (name `!` / `!!`)."""
    if not (isinstance(blocks, list) and len(blocks) == 1 and isinstance(blocks[0], dict)
            and blocks[0].get("type") == "text" and isinstance(blocks[0].get("text"), str)):
        return None
    text = blocks[0]["text"].strip()
    if text.startswith("!") and text.lstrip("!").strip():
        bang = "!!" if text.startswith("!!") else "!"
        return bang, text[len(bang):].strip()
    name, _, rest = text[1:].partition(" ") if text.startswith("/") else ("", "", "")
    if name not in BUILTINS:
        return None
    return name, rest.strip()


async def run(session: Any, name: str, arguments: str, send: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Run built-in `name`; its outcome is sent as an agent message. The `session/prompt` answer."""
    from ...coding.errors import CommandError

    if name in ("!", "!!"):
        return await _shell(session, arguments, send, exclude=(name == "!!"))
    work: Callable[[Any, str], Awaitable[str]] = _RUNNERS[name]
    try:
        text = await work(session, arguments)
    except CommandError as exc:
        text = f"/{name} failed: {exc}"
    else:  # the title and the model picker follow from the session's events (`shown.py`)
        if name in ("tree", "model") and arguments and session.model is not None:  # another context window
            send(usage_update(session))
    send(chunk("agent_message_chunk", text))
    return {"stopReason": "end_turn"}


async def _compact(session: Any, arguments: str) -> str:
    result = await session.compact(arguments or None)
    before = result.get("tokensBefore") if isinstance(result, dict) else None
    return f"Compacted the conversation{f' (it held about {before} tokens)' if before else ''}."


async def _name(session: Any, arguments: str) -> str:
    session.set_session_name(arguments)  # a blank name is a CommandError
    return f"Session named {session.store.session_name}."


async def _model(session: Any, arguments: str) -> str:
    """`/model`: the models that have a key, the current one marked; `/model provider/id` (or an id only one
    provider has) switches to it, recorded in the session like `session/set_config_option`."""
    from ...coding.errors import CommandError

    models = {f"{m['provider']}/{m['id']}": m for m in session.available_models()}
    current = session.model and f"{session.model['provider']}/{session.model['id']}"
    if not arguments:
        if not models:
            return "No model has a key: add one (see authenticate), then choose it here or in the model picker."
        lines = [f"{'*' if key == current else ' '} {key}" + (f" ({m['name']})" if m.get("name") else "")
                 for key, m in models.items()]
        return "Models (* the current one):\n" + "\n".join(lines) + "\nSwitch with /model provider/id or " \
            "the editor's model picker."
    chosen = [key for key in models if arguments in (key, models[key]["id"])]
    if len(chosen) != 1:
        raise CommandError(f"{'no model' if not chosen else 'more than one model'} matches {arguments[:100]!r}: "
                           "use provider/id as /model lists them")
    provider, _, model_id = chosen[0].partition("/")
    session.set_model(provider, model_id)
    return f"Model: {chosen[0]}."


async def _export(session: Any, arguments: str) -> str:
    return f"Exported to {path_text(await session.export_html(arguments or None))}"


async def _shell(session: Any, command: str, send: Callable[[dict[str, Any]], None], *,
                 exclude: bool) -> dict[str, Any]:
    """`!command`: run it in the session's shell as the user's own command (recorded for the model, as `!` is in
    the other modes; `!!` keeps it out of the model's context), shown as an `execute` tool call."""
    from ...coding.errors import CommandError
    from . import tool_calls

    call_id = f"user-bash-{uuid.uuid4().hex}"  # never a replayed call's id (`user-bash-<timestamp>`)
    send({"sessionUpdate": "tool_call", "toolCallId": call_id, "title": tool_calls.title_of("bash", {"command": command}),
          "kind": "execute", "status": "in_progress", "rawInput": {"command": command}})
    try:
        result = await session.user_bash.run(command, exclude_from_context=exclude)
    except CommandError as exc:
        send({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "failed",
              "content": tool_calls.output_content({"content": [{"type": "text", "text": str(exc)}]})})
        return {"stopReason": "end_turn"}
    text = str(result.get("output") or "") + ("" if result.get("exitCode") in (0, None) else
                                              f"\n(exit code {result.get('exitCode')})")
    failed = result.get("exitCode") != 0 or bool(result.get("cancelled"))
    send({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "failed" if failed else "completed",
          "content": tool_calls.output_content({"content": [{"type": "text", "text": text}]}, fenced=True)})
    return {"stopReason": "cancelled" if result.get("cancelled") else "end_turn"}


_RUNNERS = {"compact": _compact, "name": _name, "model": _model, "export": _export, "fork": branching.fork,
            "clone": branching.clone, "tree": branching.tree}
