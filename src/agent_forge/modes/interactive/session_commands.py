"""Built-in commands that move between sessions and entries: `/resume` (a picker over this directory's
sessions), `/fork` (a picker over the branch's user messages), `/clone`, `/export [path]`. They open dialogs
(`dialogs.Dialogs`) and print the new session's transcript after a switch."""

from __future__ import annotations

from typing import Any, Awaitable, TypeVar

from ...ai.transport_errors import header_value_problem
from ...coding.errors import CommandError
from ...coding.models.selection import require_provider
from ...coding.paths import path_text
from ...coding.session.listing import list_sessions
from ...coding.session.tree import fork_messages
from .actions import guarded
from .completion import typed_text
from .render import one_line
from ...words import counted

T = TypeVar("T")

SESSION_COMMANDS = {
    "resume": "pick one of this directory's sessions and continue it",
    "fork": "pick one of your messages: a new session continues from just before it",
    "clone": "continue in a new session holding a copy of this branch",
    "export": "write the session as an HTML file",
    "tree": "the session tree: continue from any entry (with a summary of the branch left), label entries",
    "login": "store a provider's API key in auth.json (mode 0600)",
    "logout": "remove a provider's API key from auth.json",
}


class SessionCommands:
    """Runs the commands above for the interactive mode `ui` (`session`, `dialogs`, `say`, `editor`,
    `show_transcript`, `spawn`)."""

    def __init__(self, ui: Any):
        self.ui = ui

    async def resume(self, argument: str) -> None:
        _no_argument("resume", argument, "it opens the list of this directory's sessions; type there to filter")
        session = self.ui.session
        current = session.store.path
        skipped: list[str] = []  # a damaged file, a directory that cannot be listed: said, not hidden
        infos = [i for i in list_sessions(session.cwd, session.switching.session_dir, on_skip=skipped.append)
                 if i.path != current]
        for reason in skipped:
            self.ui.say(f"skipped {reason}", "warning")
        if not infos:
            raise CommandError("no other session of this directory to resume")
        labels: dict[str, Any] = {}
        columns = self.ui.terminal.columns()
        for info in infos:  # files sharing an id (a `cp` copy) would share a label: the file name tells them apart
            label = _label(info, columns)
            labels[label if label not in labels else f"{label} · {info.path.name}"] = info.path
        self._pick("Resume a session", list(labels), lambda label: self._switch(str(labels[label])))

    async def _switch(self, path: str) -> None:
        switching = self.ui.session.switch_session(path)
        if await session_change(self.ui, "opening the session…", "resume", switching) is None:
            return
        self.ui.say(f"resumed session {self.ui.session.store.session_id}", "success")
        for warning in self.ui.session.store.load_warnings:  # what reading it found damaged, as at start-up
            self.ui.say(f"warning: {warning}", "warning")
        self.ui.show_transcript()

    async def fork(self, argument: str) -> None:
        _no_argument("fork", argument, "it opens the list of your messages; type there to filter")
        messages = fork_messages(self.ui.session.store)
        if not messages:
            raise CommandError("no user message to fork from yet")
        width = self.ui.terminal.columns() - 8  # the row's `→ `, its number and the dialog's margin
        labels = {f"{n}. {one_line(m['text'], max(width, 20))}": m["entryId"] for n, m in enumerate(messages, 1)}
        self._pick("Fork from before which message?", list(labels), lambda label: self._fork(labels[label]))

    async def _fork(self, entry_id: str) -> None:
        forked = await session_change(self.ui, "forking…", "fork", self.ui.session.fork(entry_id))
        if forked is None:
            return
        self.ui.say(f"forked into session {self.ui.session.store.session_id}", "success")
        self.ui.show_transcript()
        self.ui.editor.set_text(typed_text(forked["text"], self.ui.session.cwd))  # no file blocks

    async def tree(self, argument: str) -> None:
        from .tree_commands import TreeCommands

        _no_argument("tree", argument, "it opens the session tree; type there to filter")
        await TreeCommands(self.ui).tree(argument)

    async def login(self, argument: str) -> None:
        if argument:
            self._ask_key(argument)
            return
        self._pick("Log in to which provider?", self.ui.session.registry.known_providers(), self._ask_key_later)

    async def _ask_key_later(self, provider: str) -> None:
        self._ask_key(provider)

    def _ask_key(self, provider: str) -> None:
        registry = self.ui.session.registry
        provider = require_provider(registry, provider)

        def reply(fields: dict[str, Any]) -> None:
            key = fields.get("value")
            if fields.get("cancelled") or not isinstance(key, str):
                self.ui.say(f"login cancelled: nothing was saved for {provider}", "info")
                return
            problem = header_value_problem(key.strip()) if key.strip() else "is empty"
            if problem:  # saved, it would fail every request of the provider
                self.ui.say(f"nothing was saved for {provider}: the key {problem}, which an HTTP header cannot "
                            "carry (the key is not shown)", "error")
                return
            registry.auth.set(provider, {"type": "api_key", "key": key.strip()})
            self.ui.say(f"saved the API key for {provider} in {path_text(registry.auth_path)}", "success")
            self.ui.footer_changed()

        self.ui.dialogs.open({"method": "input", "title": f"API key for {provider}", "secret": True}, reply)

    async def logout(self, argument: str) -> None:
        if argument:
            self._logout(argument)
            return
        stored = self.ui.session.registry.auth.providers()
        if not stored:
            raise CommandError("auth.json holds no credential")
        self._pick("Log out of which provider?", stored, self._logout_later)

    async def _logout_later(self, provider: str) -> None:
        self._logout(provider)

    def _logout(self, provider: str) -> None:
        result = self.ui.session.model_control.logout_provider(provider)
        count = len(result["models"])
        self.ui.say(f"logged out of {provider} ({counted(count, 'model')} still "
                    f"{'has' if count == 1 else 'have'} a key)", "success")

    async def clone(self, argument: str) -> None:
        _no_argument("clone", argument, "it copies the current branch")
        if await session_change(self.ui, "cloning…", "clone", self.ui.session.clone()) is not None:
            self.ui.say(f"cloned into session {self.ui.session.store.session_id}", "success")

    async def export(self, argument: str) -> None:
        path = await self.ui.session.export_html(argument or None)
        self.ui.say(f"exported to {path_text(path)}", "success")

    def _pick(self, title: str, options: list[str], then: Any) -> None:
        def reply(fields: dict[str, Any]) -> None:
            if isinstance(fields.get("value"), str):
                self.ui.spawn(self._guarded(then(fields["value"])))

        self.ui.dialogs.open({"method": "select", "title": title, "options": options}, reply)

    async def _guarded(self, work: Any) -> None:
        await guarded(self.ui, work)


async def session_change(ui: Any, activity: str, what: str, change: Awaitable[T]) -> T | None:
    """Await the session change `change` (`new_session`, `switch_session`, `clone`: `cancelled`; `fork`:
    `{text, cancelled}`) with the spinner showing `activity` (`InputActions.working`: Escape or Ctrl+C aborts it,
    which cancels a change still asking its plugins). Its answer when it was made (`False`, or the fork's dict);
    None when it was cancelled, said so (`what`: "fork"), by that abort or by a plugin's veto."""
    answer, interrupted = await ui.interruptible(activity, change)
    if not (answer["cancelled"] if isinstance(answer, dict) else answer):
        return answer
    if interrupted:
        ui.say(f"{what} cancelled: the current session stays as it was", "warning")
    else:
        ui.say(f"a plugin cancelled the {what}: the current session stays as it was", "warning")
    return None


def _label(info: Any, columns: int) -> str:
    """`name or first message · 2026-12-02 10:14 · 12 messages · id prefix` (unique through the id), the title
    cut to what a `columns`-wide terminal leaves beside the rest (at least 20 characters)."""
    when = info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
    rest = f" · {when} · {counted(info.message_count, 'message', grouped=True)} · {info.id[:8]}"
    copy = f"(recovered copy of {info.recovered_from[:8]}) " if info.recovered_from else ""
    width = max(20, columns - len(rest) - len(copy) - 4)
    return f"{copy}{info.name or one_line(info.first_message, width) or '(no messages)'}{rest}"


def _no_argument(command: str, argument: str, what: str) -> None:
    """Refuse an argument `/command` would ignore (`/fork 99` opened the list as if none were given); `what`
    says what the command does instead."""
    if argument.strip():
        raise CommandError(f"/{command} takes no argument ({path_text(argument.strip())} is not used): {what}")
