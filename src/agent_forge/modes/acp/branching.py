"""`/fork`, `/clone` and `/tree` in ACP (docs/acp.md, "Branching").

ACP's session model has no way to move an open session to another id, so fork and clone do not switch: each
writes a new stored session (`SessionSwitch.save_copy`) that `session/list` shows and `session/load` opens,
and this session stays as it was. `/tree` moves within this session's file (same id): the next prompt
continues from the chosen entry, or from before it when it is a message of yours (not sent again: the answer
quotes it). Lists are numbered; `/fork N` and `/tree N` take a number of the list (or
an entry id). Each returns the text the editor shows; a failure raises `CommandError`."""

from __future__ import annotations

from typing import Any

from ...coding.errors import CommandError
from ..tree_rows import tree_rows, user_text


async def fork(session: Any, arguments: str) -> str:
    from ...coding.session.tree import fork_messages

    messages = fork_messages(session.store)
    if not messages:
        raise CommandError("there is no message of yours to fork from yet")
    if not arguments:
        lines = [f"{n}. {_one_line(m['text'])}" for n, m in enumerate(messages, 1)]
        return "Fork from before which of your messages? Send `/fork N`:\n\n" + _fence(lines)
    entry_id = _choose(arguments, [m["entryId"] for m in messages], "/fork")
    outcome = await session.switching.save_copy(entry_id)
    if outcome["cancelled"]:
        return "A plugin cancelled the fork."
    return (f"Forked into the new session `{outcome['sessionId']}`: it holds the conversation before your "
            f"message \"{_one_line(outcome['text'])}\". Open it from the session history (`session/load`) to "
            "continue there; this session is unchanged.")


async def clone(session: Any, arguments: str) -> str:
    if arguments:
        raise CommandError("/clone takes no arguments")
    outcome = await session.switching.save_copy(None)
    if outcome["cancelled"]:
        return "A plugin cancelled the clone."
    return (f"Cloned this conversation into the new session `{outcome['sessionId']}`. Open it from the session "
            "history (`session/load`) to continue there; this session is unchanged.")


async def tree(session: Any, arguments: str) -> str:
    from ...coding.session.tree import get_flat_tree

    flat = get_flat_tree(session.store)
    rows = tree_rows(flat["nodes"], flat["leafId"])
    if not rows:
        raise CommandError("the session has no messages yet")
    if not arguments:
        return ("The session tree (`(here)` is where the next prompt continues). Send `/tree N` to continue "
                "from entry N, `/tree N summarize` to also summarise the branch left:\n\n" + _fence(list(rows)))
    choice, _, rest = arguments.partition(" ")
    if rest.strip() not in ("", "summarize", "summarise"):
        raise CommandError(f"unknown /tree option {rest.strip()!r}: use `/tree N` or `/tree N summarize`")
    entry_id = _choose(choice, list(rows.values()), "/tree")
    node = next(node for node in flat["nodes"] if node["entry"]["id"] == entry_id)
    unsent = _user_message_text(node["entry"])  # a message of yours: the move goes to before it
    outcome = await session.navigate_tree(node["parentId"] if unsent is not None else entry_id,
                                          summarize=bool(rest.strip()))
    if outcome.get("cancelled"):
        return "A plugin cancelled the move."
    row = next(text for text, target in rows.items() if target == entry_id).removesuffix(" (here)")
    note = " The branch left is summarised for the model." if outcome.get("summaryEntry") else ""
    where = (f"from before entry {row}: your message \"{_one_line(unsent)}\" was not sent again (send it, as it "
             "was or changed, as your next prompt)" if unsent is not None else f"from entry {row}")
    return (f"The next prompt continues {where}.{note} The editor still shows the conversation as it "
            "was: reopen this session (`session/load`) to see this branch alone.")


def _user_message_text(entry: dict[str, Any]) -> str | None:
    """The text of a user message entry (the reference puts it back in the editor to resend; ACP has no editor,
    so the move goes to the entry before it and the answer quotes it), else None."""
    message = entry.get("message") if entry.get("type") == "message" else None
    return user_text(message) if isinstance(message, dict) and message.get("role") == "user" else None


def _choose(argument: str, entry_ids: list[str], command: str) -> str:
    """The entry a `/fork N` / `/tree N` names: N of the list (1-based, ASCII digits only: `٣` or `²` is no
    number) or an entry id of it."""
    argument = argument.strip()
    if argument.isascii() and argument.isdigit() and 1 <= int(argument) <= len(entry_ids):
        return entry_ids[int(argument) - 1]
    if argument in entry_ids:
        return argument
    raise CommandError(f"no entry {argument!r}: send `{command}` for the list and pick a number 1-{len(entry_ids)}")


def _fence(lines: list[str]) -> str:
    return "```text\n" + "\n".join(line.replace("`", "'") for line in lines) + "\n```"


def _one_line(text: str, width: int = 80) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"

