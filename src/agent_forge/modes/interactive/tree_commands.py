"""`/tree`: the whole session tree drawn with branch lines, searchable and filtered (`tree_view.TreeDialog`), then
what to do with the chosen entry: continue from it, continue from it with a summary of the branch left behind (a
`branch_summary` entry, as the SDK's `navigate_tree` with `summarize`; Escape or Ctrl+C aborts it), for one of
your messages edit it (continue from just before it, the message back in the editor as typed), or set / clear
its label (a `label` entry, `SessionStore.append_label`: the label RPC's `get_tree` reports)."""

from __future__ import annotations

from typing import Any

from ...coding.errors import AbortedError, CommandError
from ...coding.session.tree import get_flat_tree
from .actions import guarded
from .completion import typed_text
from .keymap import key_hint
from .tree_layout import TreeModel, keeps
from .tree_view import TreeDialog

CONTINUE = "Continue from here"
SUMMARIZE = "Continue from here, with a summary of the branch left"
LABEL = "Label this entry"
RELABEL = "Change the label"
UNLABEL = "Clear the label"
EDIT = "Edit this message (continue from before it; the text back in the editor)"


class TreeCommands:
    """`/tree` for the interactive mode `ui` (`session`, `dialogs`, `say`, `show_transcript`, `spawn`,
    `working`, `session_busy`)."""

    def __init__(self, ui: Any):
        self.ui = ui
        self.filter = "default"  # kept when the tree opens again after a label

    async def tree(self, argument: str, *, select: str | None = None) -> None:
        """Open the navigator (at `select`, else the current leaf); the chosen entry opens the action menu.
        Refused while the agent works: the tree would cover the stream and go stale, and no entry could be
        continued from until the run ends."""
        if self.ui.session_busy():
            raise CommandError("the agent is working: /tree opens once it has finished"
                               + key_hint("app.interrupt", " (or press {} to stop it)"))
        flat = get_flat_tree(self.ui.session.store)
        model = TreeModel(flat["nodes"], flat["leafId"])
        if not any(keeps(item, "default") for item in model.items):
            raise CommandError("the session has no messages yet")

        def reply(fields: dict[str, Any]) -> None:
            self.filter = dialog.filter
            entry_id = fields.get("value")
            if isinstance(entry_id, str) and entry_id in model.by_id:
                self._actions(entry_id, model.by_id[entry_id].label)

        dialog = TreeDialog(model, reply, filter_=self.filter, select=select)
        self.ui.dialogs.open(dialog)

    def _actions(self, entry_id: str, label: str | None) -> None:
        from ...agent.agent import message_text  # (not before the first paint: `app.py`)

        entry = self.ui.session.store.get_entry(entry_id) or {}
        message = entry.get("message") if entry.get("type") == "message" else None
        typed = message_text(message) if isinstance(message, dict) and message.get("role") == "user" else None
        options = [CONTINUE, SUMMARIZE, *([EDIT] if typed is not None else []), RELABEL if label else LABEL] \
            + ([UNLABEL] if label else [])

        def act(choice: str) -> None:
            if choice == EDIT and typed is not None:
                self.ui.spawn(self._guarded(self._edit(entry.get("parentId"), typed)))
            elif choice in (CONTINUE, SUMMARIZE):
                self.ui.spawn(self._guarded(self._navigate(entry_id, summarize=choice == SUMMARIZE)))
            elif choice == UNLABEL:
                self._set_label(entry_id, None)
            else:
                self._ask_label(entry_id, label)

        self._pick("What to do with this entry?", options, act)

    async def _navigate(self, entry_id: str, *, summarize: bool) -> None:
        """Move to `entry_id`; a summary is a model request, shown with the spinner and aborted by Escape or
        Ctrl+C (`InputActions.working`): the move is then not made and nothing is written."""
        moving = self.ui.session.navigate_tree(entry_id, summarize=summarize)
        try:
            outcome = await (self.ui.working("summarising the branch left…", moving) if summarize else moving)
        except AbortedError:
            self.ui.say("branch summary aborted: the conversation stays where it was (nothing was written)",
                        "warning")
            return
        if outcome.get("cancelled"):
            self.ui.say("a plugin cancelled the move", "warning")
            return
        summary = outcome.get("summaryEntry")
        note = " (the branch left is summarised)" if summary else ""
        self.ui.say(f"continuing from the chosen entry{note}; the branch so far:", "success")
        self.ui.show_transcript()

    async def _edit(self, parent_id: str | None, text: str) -> None:
        """Continue from just before a user message, its text back in the editor as it was typed (`@path`
        references, not the `<file>` blocks: sent again they attach once)."""
        outcome = await self.ui.session.navigate_tree(parent_id, summarize=False)
        if outcome.get("cancelled"):
            self.ui.say("a plugin cancelled the move", "warning")
            return
        self.ui.say("continuing from before the message; it is back in the editor", "success")
        self.ui.show_transcript()
        self.ui.editor.set_text(typed_text(text, self.ui.session.cwd))

    def _ask_label(self, entry_id: str, current: str | None) -> None:
        def reply(fields: dict[str, Any]) -> None:
            value = fields.get("value")
            if isinstance(value, str):
                self._set_label(entry_id, value.strip() or None)

        self.ui.dialogs.open({"method": "input", "title": "Label (empty clears it):", "prefill": current or ""},
                             reply)

    def _set_label(self, entry_id: str, label: str | None) -> None:
        """Append the `label` entry, then show the tree again with it."""
        session = self.ui.session
        if self.ui.session_busy():
            self.ui.say("wait for the agent to finish" + key_hint("app.interrupt", " (or press {})")
                        + " before labelling", "error")
            return
        try:
            session.store.append_label(entry_id, " ".join(label.split()) if label else None)
        except (OSError, ValueError) as exc:
            self.ui.say(f"could not write the label: {exc}", "error")
            return
        self.ui.say(f"label set: {label}" if label else "label cleared", "success")
        self.ui.spawn(self._guarded(self.tree("", select=entry_id)))

    def _pick(self, title: str, options: list[str], then: Any) -> None:
        def reply(fields: dict[str, Any]) -> None:
            if isinstance(fields.get("value"), str):
                then(fields["value"])

        self.ui.dialogs.open({"method": "select", "title": title, "options": options}, reply)

    async def _guarded(self, work: Any) -> None:
        await guarded(self.ui, work)
