"""The texts agent-forge sends to the model when it condenses a session; each family carries a version number.

The version is recorded with every compaction (`details.promptVersion`, and `promptVersion` in the verbatim-line
result of seed 003) so a session file tells which wording produced its summaries. Bump a version whenever its
texts change in a way that could change the model's output.
"""

from __future__ import annotations

SUMMARY_PROMPT_VERSION = 1
"""Version of the checkpoint-note texts (summary compaction and branch summaries)."""

VERBATIM_PROMPT_VERSION = 1
"""Version of the line-deletion texts (verbatim-line compaction)."""

SUMMARY_SYSTEM_PROMPT = (
    "You condense the transcript of a coding-agent session into a checkpoint note. Another instance of the "
    "agent will read only this note and the most recent messages, and must be able to carry on the work "
    "without asking the user to repeat anything. You do not continue the conversation and you do not call "
    "tools: you only write the note."
)

_NOTE_FORMAT = """## Objective
What the user wants overall (several lines if the session pursued several tasks).

## Requirements from the user
- Constraints, preferences and conventions the user asked for ("none stated" if there were none).

## Status
### Finished
- Work that is complete, naming the files and functions involved.
### Underway
- Work that was started and is not finished.
### Obstacles
- Errors, failing tests or open questions blocking progress ("none" if there are none).

## Decisions
- **The choice made**: why it was made.

## Next actions
1. The concrete steps that should follow, in order.

## Facts to keep
- Exact paths, identifiers, commands, error messages, values and snippets that later work depends on."""

_CLOSING = ("Be brief, but drop nothing needed to continue: quote file paths, names and error texts exactly. "
            "Answer with the note only.")


def summary_prompt(*, conversation: str, request_start: str = "", earlier_note: str | None = None,
                   focus: str | None = None) -> str:
    """The user message of a compaction summary request.

    `conversation`: the serialized messages to condense (may be empty when only a split request is condensed);
    `request_start`: the serialized beginning of a user request whose later messages stay verbatim (a cut inside
    a long turn); `earlier_note`: the summary of a previous compaction, to be merged; `focus`: the user's
    `customInstructions` for a manual compaction.
    """
    parts = []
    if earlier_note:
        parts.append(f"<earlier-note>\n{earlier_note}\n</earlier-note>")
    parts.append(f"<transcript>\n{conversation}\n</transcript>")
    if request_start:
        parts.append(f"<request-in-progress>\n{request_start}\n</request-in-progress>")
    parts.append(_summary_task(bool(earlier_note), bool(request_start)))
    if focus:
        parts.append(f"The user asked the note to pay particular attention to: {focus}")
    return "\n\n".join(parts)


def _summary_task(has_note: bool, split: bool) -> str:
    lines = ["Write the checkpoint note for the session above, using exactly these headings, in this order:",
             "", _NOTE_FORMAT]
    if split:
        lines += ["", "## Request in progress",
                  "What the user asked in <request-in-progress> and what has been done on it so far. The rest "
                  "of the work on that request follows your note word for word, so describe only its "
                  "beginning."]
    if has_note:
        lines += ["", "<earlier-note> condenses the part of the session before <transcript>. Merge both into one "
                      "updated note: keep what still holds, update what changed, drop what was superseded."]
    lines += ["", _CLOSING]
    return "\n".join(lines)


BRANCH_SUMMARY_SYSTEM_PROMPT = (
    "You write a short note about a line of work in a coding-agent session that the user has left to go back "
    "to an earlier point. The agent continues from that earlier point and reads your note to know what was "
    "tried. You do not continue the conversation and you do not call tools: you only write the note."
)


def branch_summary_prompt(*, conversation: str, focus: str | None = None) -> str:
    """The user message of a branch summary request: `conversation` is the serialized abandoned branch."""
    parts = [f"<abandoned-branch>\n{conversation}\n</abandoned-branch>",
             "Write the note about the abandoned branch above, using exactly these headings:\n\n"
             "## Objective\nWhat the work on this branch was trying to achieve.\n\n"
             "## Attempted\n- What was done, naming the files and functions involved.\n\n"
             "## Outcome\n- What worked, what failed and why, with exact error texts.\n\n"
             "## Decisions\n- **The choice made**: why it was made.\n\n"
             "## Facts to keep\n- Paths, identifiers and values that may matter on the new branch.\n\n"
             + _CLOSING]
    if focus:
        parts.append(f"The user asked the note to pay particular attention to: {focus}")
    return "\n\n".join(parts)


VERBATIM_SYSTEM_PROMPT = (
    "You shorten the transcript of a coding-agent session by choosing lines to delete. You never rewrite "
    "anything: the lines you keep stay word for word and every run of deleted lines is replaced by a marker. "
    "You answer only with deletion ranges."
)


def verbatim_prompt(*, numbered_transcript: str, line_count: int, delete_percent: int, query: str) -> str:
    """The user message of a verbatim-line request. `numbered_transcript` holds `<n>| <text>` rows,
    `delete_percent` the share of lines to delete (0-100), `query` the task the kept lines must serve."""
    return (
        f"Below is the transcript of a coding-agent session, one numbered line per row (`<number>| <text>`), "
        f"{line_count} lines in all. The newest messages are not shown; they are kept as they are.\n\n"
        f"Choose lines to delete so that about {delete_percent}% of the lines go. Delete what later work will "
        "not need: superseded attempts, long tool output whose useful facts are stated elsewhere, repeated file "
        "contents, chatter. Keep the user's requests and constraints, decisions, file paths, identifiers, error "
        f"messages, and whatever the current task needs. Current task: {query}\n\n"
        "Answer with one deletion range per line, written start,end (inclusive line numbers, start <= end; a "
        "single line n is n,n), in ascending order and without overlaps. Write nothing else: no prose, no code "
        f"fences.\n\n<transcript>\n{numbered_transcript}\n</transcript>"
    )
