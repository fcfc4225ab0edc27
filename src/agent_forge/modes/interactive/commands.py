"""Built-in `/` commands and `!` / `!!` shell lines of the editor.

`/quit`, `/new`, `/name [name]`, `/session`, `/model [pattern]`, `/thinking [level]`, `/compact
[instructions]`, `/hotkeys`, `/approvals [policy]` (`approval_command.py`), and those of `session_commands` (`/resume`, `/fork`, `/clone`, `/export`).
Any other `/name` (a plugin command, template or skill) and plain text go through `AgentSession.submit`, as
an RPC `prompt` does. `!cmd` runs through the session's user bash and its output is
added to the context (RPC `bash`); `!!cmd` is not added."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ...coding.errors import AbortedError, CommandError
from ...coding.models.selection import resolve_model_pattern
from .approval_command import approvals_command, DESCRIPTION as APPROVALS, HINT as APPROVALS_HINT
from .keymap import with_keys
from .keys import hotkeys
from .config_commands import CONFIG_COMMANDS, ConfigCommands
from .session_commands import SESSION_COMMANDS, SessionCommands, session_change
from .tool_blocks import ToolCall, shell_block
from .wording import error_text
from ...coding.paths import path_text
from ...words import counted

if TYPE_CHECKING:
    from ...coding.agent_session import AgentSession

COMMANDS = {
    "quit": "exit (also {app.exit} on an empty editor)",
    "new": "start a new session",
    "name": "show or set the session's name",
    "session": "the session's file, id, message counts, tokens, cost and context use",
    "model": "pick a model, or switch directly",
    "thinking": "show the thinking levels, or set one",
    "compact": "summarise older messages now",
    "hotkeys": "the keyboard shortcuts",
    "copy": "copy the last answer to the clipboard (OSC 52; also saved to a file)",
    "approvals": APPROVALS,
    **SESSION_COMMANDS,
    **CONFIG_COMMANDS,
}


COMMAND_HINTS = {
    "name": "[name]", "model": "[pattern[:thinking]]", "thinking": "[level]", "compact": "[instructions]",
    "export": "[path]", "login": "[provider]", "logout": "[provider]", "scoped-models": "[pattern,pattern]",
    "approvals": APPROVALS_HINT,
}
"""The arguments of the built-ins that take any: `<required>`, `[optional]` (shown in the `/` menu)."""


def offered_commands(session: AgentSession | None) -> list[tuple[str, str, str]]:
    """(name, argument hint, description) of every command the editor offers: built-ins, then
    `session.get_commands()` (plugin commands and templates with their `argumentHint`; skills take a
    request) but those a built-in shadows (`/model` runs the built-in: a row for the template would run it
    too); the built-ins alone while the session is not built yet."""
    from ...coding.resources.commands import unshadowed
    from .render import clean

    offered = [(name, COMMAND_HINTS.get(name, ""), with_keys(what)) for name, what in COMMANDS.items()]
    for item in unshadowed(session.get_commands(), COMMANDS) if session is not None else []:
        hint = item.get("argumentHint") or ("[request]" if item.get("source") == "skill" else "")
        offered.append((clean(item.get("name")), clean(hint), clean(item.get("description") or "")))
    return offered


def shadowed_warnings(session: AgentSession) -> list[str]:
    """One warning per plugin command, template or skill named like a built-in, which this editor never runs
    (`coding.resources.commands.shadowed`: the rule of every front end with built-ins)."""
    from ...coding.resources.commands import shadowed, shadowed_warning

    return [shadowed_warning(item, "the terminal UI") for item in shadowed(session.get_commands(), COMMANDS)]


def builtin(text: str) -> tuple[str, str] | None:
    """(name, argument) when `text` is a built-in `/command`, else None."""
    if not text.startswith("/"):
        return None
    name, _, argument = text[1:].partition(" ")
    name = name.strip()
    return (name, argument.strip()) if name in COMMANDS else None


class Commands:
    """Runs built-ins and shell lines for the interactive mode `ui` (its `session`, `say`, `print_`, `live`,
    `view`, `footer`, `exit`)."""

    def __init__(self, ui: Any):
        self.ui = ui
        self.sessions = SessionCommands(ui)
        self.config = ConfigCommands(ui)

    async def run(self, name: str, argument: str) -> None:
        """Run built-in `name`; a `CommandError` is shown as an error notice."""
        try:
            if name in SESSION_COMMANDS:
                await getattr(self.sessions, name)(argument)
            elif name in CONFIG_COMMANDS:
                await self.config.run(name, argument)
            else:
                await getattr(self, f"_{name}")(argument)
        except CommandError as exc:
            self.ui.say(error_text(exc), "error")
        self.ui.footer_changed()

    async def _approvals(self, argument: str) -> None:
        await approvals_command(self.ui, argument)

    async def _quit(self, argument: str) -> None:
        self.ui.exit(0)

    async def _new(self, argument: str) -> None:
        if await session_change(self.ui, "starting a new session…", "new session",
                                self.ui.session.new_session()) is not None:
            self.ui.say(f"new session {self.ui.session.store.session_id}", "success")

    async def _name(self, argument: str) -> None:
        session = self.ui.session
        if argument:
            session.set_session_name(argument)
            self.ui.say(f"session name: {session.get_state().get('sessionName')}", "success")  # as stored: stripped
        else:
            self.ui.say(f"session name: {session.get_state().get('sessionName') or '(none)'}")

    async def _session(self, argument: str) -> None:
        from ...coding.session.stats import message_counts

        stats = self.ui.session.get_session_stats()  # its counts are the whole file's
        tokens, usage = stats["tokens"], stats.get("contextUsage") or {}
        percent = usage.get("percent")
        branch = message_counts(self.ui.session.messages)  # the conversation the model sees now
        lines = [f"file: {stats.get('sessionFile') or '(not saved)'}", f"id: {stats['sessionId']}",
                 f"messages on this branch: {branch['totalMessages']} ({_breakdown(branch, self.ui.session.messages)})",
                 f"whole file, all branches: {counted(stats['totalMessages'], 'message', grouped=True)}; "
                 f"tokens {tokens['input']:,} in, {tokens['output']:,} out, {tokens['cacheRead']:,} cache read, "
                 f"{tokens['cacheWrite']:,} cache write; cost ${stats['cost']:.4f}"]
        if usage:
            shown = "unknown until the next answer" if percent is None else f"{percent:.1f}%"
            lines.append(f"context: {shown} (window {usage['contextWindow']:,} tokens)")
        unwritten = self.ui.session.store.write_error  # counted above, but not in the file yet (a full disk)
        if unwritten is not None:
            from ...coding.persistence import entries_text

            lines.append(f"not on disk yet: {entries_text(unwritten['pendingEntries'])} ({unwritten['error']}); "
                         "written once the file can be written")
        self.ui.say("\n".join(lines))

    async def _model(self, argument: str) -> None:
        session = self.ui.session
        if not argument:
            self._pick_model()
            return
        model, level, error = resolve_model_pattern(session.registry, argument)
        if error or model is None:
            raise CommandError(error or f'No model matches "{path_text(argument)}"')
        active = session.set_model(model["provider"], model["id"])
        if level:
            session.set_thinking_level(level)
        self.ui.say(f"model: {path_text(active['provider'] + '/' + active['id'])} • {session.agent.thinking_level}",
                    "success")

    def _pick_model(self) -> None:
        """A searchable selector of the models with a key (type to filter, Enter switches)."""
        models = self.ui.session.model_control.available_models()
        if not models:
            raise CommandError("no model has a key")
        names = [f"{m['provider']}/{m['id']}" for m in models]

        def reply(fields: dict[str, Any]) -> None:
            if isinstance(fields.get("value"), str):
                self.ui.spawn(self.run("model", fields["value"]))

        model = self.ui.session.agent.model
        current = f"{model['provider']}/{model['id']}" if isinstance(model, dict) else None
        self.ui.dialogs.open({"method": "select", "title": "Switch model", "options": names, "selected": current},
                             reply)

    async def _thinking(self, argument: str) -> None:
        session = self.ui.session
        if argument:
            session.set_thinking_level(argument)
            self.ui.say(f"thinking level: {session.agent.thinking_level}", "success")
        else:
            self.ui.say(f"thinking level: {session.agent.thinking_level} (available: "
                        f"{', '.join(session.available_thinking_levels())})")

    async def _compact(self, argument: str) -> None:
        from .blocks import compaction_failure

        try:
            await self.ui.session.compact(argument or None)  # the compaction events show start and success
        except AbortedError:  # the user's own Escape: a warning in the UI's words, as for /tree's summary
            self.ui.say("compaction aborted: the conversation stays as it was (nothing was written)", "warning")
        except CommandError as exc:  # the response holds the cause alone (`Already compacted`, the provider's)
            raise CommandError(compaction_failure(str(exc))) from None

    async def _copy(self, argument: str) -> None:
        from .extras import copy_last_answer

        await copy_last_answer(self.ui)

    async def _hotkeys(self, argument: str) -> None:
        from rich.table import Table

        rows = [*hotkeys(self.ui.keymap), ("", ""), *((f"/{name} {COMMAND_HINTS.get(name, '')}".rstrip(),
                                                       with_keys(what)) for name, what in COMMANDS.items())]
        # The names take the room they need, up to half the width; a longer one wraps (folds), never cut.
        longest = max(len(name) for name, _ in rows)
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", overflow="fold", width=min(longest, max(12, self.ui.terminal.columns() // 2)))
        table.add_column(style="grey70", overflow="fold")
        for name, what in rows:
            table.add_row(name, what)
        self.ui.print_(table)

    async def shell(self, line: str) -> None:
        """`!cmd` / `!!cmd`: run through the session's user bash, output live, then a block."""
        in_context = not line.startswith("!!")
        command = line[2:] if not in_context else line[1:]
        call = ToolCall("bash", {"command": command.strip()})
        live = self.ui.live
        live.shells[id(call)] = call  # apart from the run's tools: a run ending beside it leaves it shown
        started = time.monotonic()
        try:
            result = await self.ui.session.user_bash.run(command, on_chunk=lambda d: self._chunk(call, d),
                                                         exclude_from_context=not in_context)
        except CommandError as exc:
            self.ui.say(error_text(exc), "error")
            return
        finally:
            live.shells.pop(id(call), None)
            self.ui.files.refresh()  # what the command created is offered by the `@` search
            self.ui.changed()
        seconds, total = time.monotonic() - started, call.lines + bool(call.partial and call.partial[-1] != "\n")

        def block(expanded: bool) -> Any:
            return shell_block(command.strip(), result["output"], result["exitCode"], seconds,
                               in_context=in_context, expanded=expanded, result=dict(result), total_lines=total)

        self.ui.view.show_collapsible(block)

    def _chunk(self, call: ToolCall, delta: str) -> None:
        from .render import clean

        call.lines += delta.count("\n")
        call.partial = (call.partial + clean(delta))[-2000:]
        self.ui.changed()


def _breakdown(branch: dict[str, int], messages: list[Any]) -> str:
    """`1 user, 1 assistant with 2 tool calls, 2 tool results, 1 shell command, 1 other`: every message of the
    branch counted once (shell commands are `!` commands; others: plugin messages and summaries)."""
    shell = sum(1 for message in messages if message.get("role") == "bashExecution")
    other = branch["totalMessages"] - branch["userMessages"] - branch["assistantMessages"] - branch["toolResults"]
    parts = [f"{branch['userMessages']} user",
             f"{branch['assistantMessages']} assistant with {counted(branch['toolCalls'], 'tool call')}",
             counted(branch["toolResults"], "tool result")]
    parts += [counted(shell, "shell command")] if shell else []
    parts += [f"{other - shell} other"] if other > shell else []
    return ", ".join(parts)
