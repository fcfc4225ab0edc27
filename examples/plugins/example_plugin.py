"""An example agent-forge plugin: notes the model can read, a guard for risky shell commands, and a shorthand.

Load it for one run with ``agent-forge --mode rpc -e examples/plugins/example_plugin.py``, or copy it to
``~/.agent-forge/agent/plugins/`` to load it always. What it shows (see docs/plugins.md):

- ``/note <text>`` (a command: runs at once, even while the agent works) keeps a note and saves it in the
  session; ``/notes`` lists them in a dialog;
- the ``notes`` tool lets the model read the notes (a tool with a JSON schema and streamed progress);
- a ``tool_call`` handler asks before ``bash`` runs a risky command (``rm -rf``, ``git push --force``) and
  blocks it unless the user confirms within 30 seconds (or at once in print mode, where nobody can answer);
- an ``input`` handler turns ``?? question`` into a request for a short answer;
- a ``before_run`` handler reminds the model of the notes when there are any;
- a ``session_before_change`` handler asks before ``new_session`` throws the notes away;
- ``session_start`` and ``agent_end`` handlers keep a status line up to date.
"""

from __future__ import annotations

import re

from agent_forge.plugins import AddContext, Block, Cancel, Transform

RISKY = re.compile(r"\brm\s+-[a-zA-Z]*r[a-zA-Z]*f|\bgit\s+push\b.*--force")


def setup(plugin):
    notes: list[str] = []
    runs = {"count": 0}

    @plugin.command("note", description="Keep a note the model can read: /note <text>")
    def note(args, ctx):
        if not args:
            ctx.ui.notify("Usage: /note <text>", "warning")
            return
        notes.append(args)
        ctx.session.append_entry("example-note", {"text": args})
        ctx.ui.notify(f"Noted ({len(notes)} so far)")

    @plugin.command("notes", description="Show the notes and copy one into the editor")
    async def show_notes(args, ctx):
        if not notes:
            ctx.ui.notify("No notes yet")
            return
        choice = await ctx.ui.select("Notes", notes, timeout=60)
        if choice is not None:
            ctx.ui.set_editor_text(choice)

    @plugin.tool("notes", description="Read the notes the user kept with /note in this session.",
                 parameters={"type": "object", "properties": {
                     "contains": {"type": "string", "description": "only notes containing this text"}}})
    async def read_notes(args, ctx):
        wanted = args.get("contains", "")
        found = []
        for i, text in enumerate(notes, 1):
            if wanted in text:
                found.append(f"{i}. {text}")
                ctx.update("\n".join(found))  # streamed progress: a tool_execution_update event
        return "\n".join(found) or "No notes."

    @plugin.on("tool_call")
    async def guard_shell(event, ctx):
        command = event.args.get("command", "") if event.tool_name == "bash" else ""
        if not RISKY.search(command):
            return None
        if await ctx.ui.confirm("Run a risky command?", command, timeout=30):
            return None
        return Block(f"The user did not allow this command: {command}")

    @plugin.on("input")
    def shorthand(event, ctx):
        if event.text.startswith("?? "):
            return Transform(f"Answer in one or two sentences: {event.text[3:]}")
        return None

    @plugin.on("before_run")
    def remind(event, ctx):
        if notes:
            return AddContext("Notes the user kept so far:\n" + "\n".join(f"- {n}" for n in notes))
        return None

    @plugin.on("session_before_change")
    async def keep_notes(event, ctx):
        if event.action == "new_session" and notes:
            if not await ctx.ui.confirm("Start a new session?", f"{len(notes)} notes stay behind", timeout=60):
                return Cancel("the user kept this session")
        return None

    @plugin.on("session_start")
    def started(event, ctx):
        notes.clear()  # notes belong to one conversation
        ctx.ui.set_status("example", f"notes plugin ready ({event.reason})")

    @plugin.on("agent_end")
    def count_runs(event, ctx):
        runs["count"] += 1
        ctx.ui.set_status("example", f"{runs['count']} runs, {len(notes)} notes")
