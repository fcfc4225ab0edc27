"""What the model sees of a session: the messages, model, thinking level and context window of one branch.

Rules (reference docs, `session-format.md`, Context Building): settings come from the whole path root → leaf;
messages come from the path, except that when compactions are on it the latest one replaces everything before
it with its summary: the summary first, then the entries from its `firstKeptEntryId` up to the compaction, then
the entries after it; and `context_edit` entries on the path omit or replace the content of the entries they
target (the latest edit of a target wins). Summaries become messages of the roles `compactionSummary` and
`branchSummary` (message-types.md); `coding/messages.py` turns them into user messages for the provider.

Session files are user data (hand edits, other tools), and every later request is built from this context, so
a message whose shape is unusable (not an object, an unknown role, a content of the wrong type, a malformed
content block) is left out of it; the entry stays in the file and in `get_entries`. An optional field of the
wrong type (`usage: "12"`, a string `timestamp`) is repaired in a copy instead (see `context_message`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any, cast

from ...records import Record, factory
from .entries import (
    AgentMessage, BranchSummaryEntry, CompactionEntry, ContextWindowChangeEntry,
    CustomMessageEntry, MessageEntry, ModelChangeEntry, SessionEntry, ThinkingLevelChangeEntry, timestamp_ms)
from .shapes import context_message
from .sharing import NOT_A_MESSAGE


class SessionContext(Record):
    """What the next model request needs from the active branch.

    `messages`: AgentMessages root → leaf (message entries' own dicts: do not mutate); `model`:
    `(provider, modelId)` of the latest `model_change` on the branch (without one: of the latest assistant
    message), or None;
    `thinking_level`: latest `thinking_level_change` or None; `context_window`: latest
    `context_window_change.contextWindow` (tokens) or None.
    """

    messages: list[AgentMessage] = factory(list)
    model: tuple[str, str] | None = None
    thinking_level: str | None = None
    context_window: int | None = None


Checked = dict[int, "AgentMessage | tuple[object, AgentMessage | None]"]
"""`id(message)` → the message itself when its `context_message` is the message (the usual case: no tuple a
message), else (that message, its `context_message`): checks already made (`unusable_entry`), so that opening
a session checks each message once. The message is kept so that its id cannot be reused (`_known`)."""


def _known(checked: Checked | None, raw: object) -> AgentMessage | None | object:
    """`context_message(raw)` as `checked` holds it, else `_UNKNOWN`."""
    known = checked.get(id(raw), _UNKNOWN) if checked else _UNKNOWN
    if known is raw:
        return raw
    return known[1] if type(known) is tuple and known[0] is raw else _UNKNOWN


def _record(checked: Checked, raw: object, message: AgentMessage | None) -> None:
    checked[id(raw)] = message if message is raw else (raw, message)


_UNKNOWN = object()


def build_context(path: list[SessionEntry], checked: Checked | None = None) -> SessionContext:
    """The SessionContext of `path` (entries root → leaf, e.g. `SessionStore.branch()`); `checked`: messages
    whose `context_message` is known (a copy made by a `context_edit` is not in it, so is checked anew).
    One pass over `path` while it holds no compaction and no `context_edit` (they reorder or replace what
    came before them: then the general rules apply, `_built_by_rules`)."""
    context = SessionContext()
    messages: list[AgentMessage] = []
    for entry in path:
        kind = entry["type"]
        if kind == "message":  # the common case, once per entry of a resumed session
            if (message := _context_message(entry, checked)) is not None:
                messages.append(message)
        elif kind in _REORDERING:
            return _built_by_rules(path, checked)
        elif kind in _SETTING_KINDS:
            _apply_setting(context, entry, kind)
        else:
            messages += entry_messages(entry)
    context.model = context.model or _last_answering_model(path)
    context.messages = results_in_call_order(messages)
    return context


def _context_message(entry: SessionEntry, checked: Checked | None) -> AgentMessage | None:
    """The context's message of a `message` entry: the one `checked` already holds, else `context_message`."""
    raw = entry.get("message")
    message = _known(checked, raw)
    return context_message(raw) if message is _UNKNOWN else message  # type: ignore[return-value]


_REORDERING = frozenset(("compaction", "context_edit"))
"""Entry types after which the context is no longer the path's messages in order."""


def _built_by_rules(path: list[SessionEntry], checked: Checked | None) -> SessionContext:
    """`build_context` for a path with compactions or context edits: settings from the whole path, messages
    from `context_entries`."""
    from .projection import context_entries  # only a branch with a compaction or a context edit needs it

    context = _settings(path)
    messages: list[AgentMessage] = []
    for entry in context_entries(path):
        if entry["type"] == "message":
            if (message := _context_message(entry, checked)) is not None:
                messages.append(message)
        else:
            messages += entry_messages(entry)
    context.messages = results_in_call_order(messages)
    return context


def results_in_call_order(messages: list[AgentMessage]) -> list[AgentMessage]:
    """`messages` with each run of `toolResult` messages right after an assistant message sorted into the order
    of that message's tool calls (stable; a result naming no call of it goes last). The file holds a batch's
    results as its calls finished (`persistence.py`, `persist_early`); the agent, its events and a resumed
    session list them in call order. A new list; the messages are not copied."""
    roles = _role_codes(messages)  # the runs are found at C speed: a resume builds a context of every message
    out: list[AgentMessage] = []
    done = 0  # messages[:done] are in `out`
    start = roles.find("att")  # an assistant message and at least two results after it
    while start >= 0:
        end = start + 3
        while end < len(roles) and roles[end] == "t":
            end += 1
        calls = messages[start].get("content")
        if isinstance(calls, list):
            out += messages[done:start + 1]
            out += _in_call_order(calls, messages[start + 1:end])
            done = end
        start = roles.find("att", end)
    out += messages[done:]
    return out


_ROLE_CODES = {"assistant": "a", "toolResult": "t"}


def _role_codes(messages: list[AgentMessage]) -> str:
    """One character a message: `a` for an assistant message, `t` for a tool result, `-` for any other."""
    roles = list(map(dict.get, messages, repeat("role")))
    try:
        return "".join(map(_ROLE_CODES.get, roles, repeat("-")))
    except TypeError:  # an unhashable role (a hand edit): no message of the roles above
        return "".join("a" if role == "assistant" else "t" if role == "toolResult" else "-" for role in roles)


def _in_call_order(content: list[Any], results: list[AgentMessage]) -> list[AgentMessage]:
    """`results` sorted by the position of their `toolCallId` among the tool calls of `content` (stable)."""
    calls = [b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]
    rank = {call_id: position for position, call_id in reversed(list(enumerate(calls)))}
    return sorted(results, key=lambda m: rank.get(m.get("toolCallId"), len(calls)))


def entry_messages(entry: SessionEntry) -> list[AgentMessage]:
    """The context messages one entry contributes (none for settings, labels, custom state, ...)."""
    converter = _CONTEXT_MESSAGES.get(entry["type"])
    return converter(entry) if converter is not None else []


def _settings(path: list[SessionEntry]) -> SessionContext:
    context = SessionContext()
    for entry in path:
        kind = entry["type"]
        if kind in _SETTING_KINDS:
            _apply_setting(context, entry, kind)
    # The selected model is what model_change records (it may be a router); the model that answered only
    # stands in for files that never recorded one (version 1).
    context.model = context.model or _last_answering_model(path)
    return context


_SETTING_KINDS = frozenset(("model_change", "thinking_level_change", "context_window_change"))


def _apply_setting(context: SessionContext, entry: SessionEntry, kind: str) -> None:
    """The setting `entry` (of type `kind`, one of `_SETTING_KINDS`) records, into `context`; a value of the
    wrong type is ignored."""
    if kind == "model_change":
        change = cast(ModelChangeEntry, entry)
        context.model = _model(change.get("provider"), change.get("modelId")) or context.model
    elif kind == "thinking_level_change":
        level = cast(ThinkingLevelChangeEntry, entry).get("thinkingLevel")
        context.thinking_level = level if isinstance(level, str) else context.thinking_level
    else:
        window = cast(ContextWindowChangeEntry, entry).get("contextWindow")
        context.context_window = window if _is_count(window) else context.context_window


def _last_answering_model(path: list[SessionEntry]) -> tuple[str, str] | None:
    for entry in reversed(path):
        message = entry.get("message") if entry["type"] == "message" else None
        if isinstance(message, dict) and message.get("role") == "assistant":
            found = _model(message.get("provider"), message.get("model"))
            if found:
                return found
    return None


def _model(provider: object, model_id: object) -> tuple[str, str] | None:
    return (provider, model_id) if isinstance(provider, str) and isinstance(model_id, str) else None


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _message_of(entry: MessageEntry) -> list[AgentMessage]:
    message = context_message(entry.get("message"))
    return [message] if message is not None else []


def _custom_message_of(entry: CustomMessageEntry) -> list[AgentMessage]:
    """`custom_message` entry → `{"role": "custom", customType, content, display, details?, timestamp}`; none
    when its content is neither a string nor a list of content blocks (see `context_message`)."""
    message: AgentMessage = {
        "role": "custom",
        "customType": entry.get("customType"),
        "content": entry.get("content", ""),
        "display": bool(entry.get("display", True)),
        "timestamp": timestamp_ms(entry.get("timestamp", "")),
    }
    if "details" in entry:
        message["details"] = entry["details"]
    repaired = context_message(message)
    return [repaired] if repaired is not None else []


def _compaction_summary_of(entry: CompactionEntry) -> list[AgentMessage]:
    """`compaction` entry → `{"role": "compactionSummary", summary, tokensBefore, timestamp}`."""
    from .projection import has_summary  # only a branch with a compaction reaches here

    summary = entry.get("summary")
    if not isinstance(summary, str) or not has_summary(entry):
        return []
    tokens = entry.get("tokensBefore")
    return [{"role": "compactionSummary", "summary": summary, "tokensBefore": tokens if _is_count(tokens) else 0,
             "timestamp": timestamp_ms(entry.get("timestamp", ""))}]


def _branch_summary_of(entry: BranchSummaryEntry) -> list[AgentMessage]:
    """`branch_summary` entry → `{"role": "branchSummary", summary, fromId, timestamp}` (none when empty)."""
    summary = entry.get("summary")
    if not isinstance(summary, str) or not summary:
        return []
    return [{"role": "branchSummary", "summary": summary, "fromId": entry.get("fromId"),
             "timestamp": timestamp_ms(entry.get("timestamp", ""))}]


_CONTEXT_MESSAGES: dict[str, Callable[[Any], list[AgentMessage]]] = {
    "message": _message_of,
    "custom_message": _custom_message_of,
    "compaction": _compaction_summary_of,
    "branch_summary": _branch_summary_of,
}
"""Entry type → the context messages it contributes (each converter takes the `ENTRY_SHAPES` TypedDict of its
type); types not listed contribute none."""


Phrase = tuple[str, str]
"""What is wrong with one entry / with several, as the end of a sentence naming their lines."""

_LEFT_OUT = " (left out of the model's context)"
_BAD_MESSAGE: Phrase = ("holds a message of unusable shape" + _LEFT_OUT, "hold messages of unusable shape" + _LEFT_OUT)
_BAD_SUMMARY: Phrase = ("has no summary text" + _LEFT_OUT, "have no summary text" + _LEFT_OUT)
_BAD_SETTING: Phrase = ("records a setting of the wrong type (ignored)", "record settings of the wrong type (ignored)")


def unusable_entry(entry: SessionEntry, checked: Checked | None = None) -> Phrase | None:
    """What makes a well-formed entry useless to the context, or None: a `message` or `custom_message` whose
    message `context_message` refuses, a `compaction` without a summary text (`projection.has_summary`) or a
    `branch_summary` whose summary is not a string, a
    `model_change`, `thinking_level_change` or `context_window_change` whose value `_settings` ignores.
    Opening a file warns about them by line. A `message` entry's check is recorded in `checked`."""
    kind = entry.get("type")
    if kind == "message" and checked is not None:
        raw = entry.get("message")
        message = context_message(raw)
        _record(checked, raw, message)
        return None if message is not None else _BAD_MESSAGE
    if kind in ("message", "custom_message"):
        return None if _CONTEXT_MESSAGES[kind](entry) else _BAD_MESSAGE
    if kind == "compaction":
        from .projection import has_summary  # files with a compaction import it anyway

        return None if has_summary(entry) else _BAD_SUMMARY
    if kind == "branch_summary":
        return None if isinstance(entry.get("summary", ""), str) else _BAD_SUMMARY
    fine = {"model_change": lambda e: _model(e.get("provider"), e.get("modelId")) is not None,
            "thinking_level_change": lambda e: isinstance(e.get("thinkingLevel"), str),
            "context_window_change": lambda e: _is_count(e.get("contextWindow"))}.get(kind)
    return None if fine is None or fine(entry) else _BAD_SETTING


def open_context(entries: list[SessionEntry], lines: Sequence[int], checks: Sequence[object] | None = None
                 ) -> tuple[SessionContext | None, list[tuple[int, Phrase]], Checked | None]:
    """One pass over the entries of a file just read whose active branch is every entry in file order
    (`ParsedSession.linear`): (the branch's context as `build_context` makes it, the unusable entries as
    `unusable_entries` finds them, None), each message checked once; `checks`: each entry's
    `ParsedSession.checks`, made while parsing (then no message is checked here). When the branch holds a
    compaction or a context edit (the context is then not the entries in order: `_built_by_rules`), the context
    is None and the third item holds the checks made, for `build_context`."""
    unusable: list[tuple[int, Phrase]] = []
    messages: list[AgentMessage] = []
    context = SessionContext()
    if checks:
        own, reordered = _open_checked(entries, lines, checks, context, messages, unusable)
    else:
        own, reordered = _open_unchecked(entries, lines, context, messages, unusable)
    if reordered:
        return None, unusable, _checks(entries, own)
    context.model = context.model or _last_answering_model(entries)
    context.messages = results_in_call_order(messages)
    return context, unusable, None


Unusable = list[tuple[int, Phrase]]
"""(line, what is wrong) of each unusable entry, in file order."""


def _open_unchecked(entries: list[SessionEntry], lines: Sequence[int], context: SessionContext,
                    messages: list[AgentMessage], unusable: Unusable) -> tuple[list[AgentMessage | None], bool]:
    """`open_context`'s pass without checks: (each message entry's `context_message`, whether the branch is
    reordered); `context`, `messages` and `unusable` are filled in."""
    own: list[AgentMessage | None] = []  # each message entry's check, in order: `_checks` when they are needed
    reordered = False
    for entry, line in zip(entries, lines):
        kind = entry["type"]
        if kind == "message":  # inlined: once per entry of every session opened
            message = context_message(entry.get("message"))
            own.append(message)
            if message is None:
                unusable.append((line, _BAD_MESSAGE))
            elif not reordered:
                messages.append(message)
            continue
        reordered = _open_other(entry, line, kind, context, messages, unusable, reordered)
    return own, reordered


def _open_checked(entries: list[SessionEntry], lines: Sequence[int], checks: Sequence[object],
                  context: SessionContext, messages: list[AgentMessage], unusable: Unusable
                  ) -> tuple[list[AgentMessage | None], bool]:
    """`_open_unchecked` with each entry's check made while parsing: the message entries' checks are taken a
    run at a time, at C speed; only the other entries (their checks are `NOT_A_MESSAGE`) are visited one by
    one."""
    own: list[AgentMessage | None] = []
    reordered, start = False, 0
    for stop in [*_positions(checks, NOT_A_MESSAGE), len(checks)]:
        run = cast("list[AgentMessage | None]", checks[start:stop])
        own += run
        if None in run:  # unusable messages among them (rare): one by one
            for line, message in zip(lines[start:stop], run):
                if message is None:
                    unusable.append((line, _BAD_MESSAGE))
                elif not reordered:
                    messages.append(message)
        elif not reordered:
            messages += run  # type: ignore[arg-type]  # no None in it
        if stop < len(checks):
            entry = entries[stop]
            reordered = _open_other(entry, lines[stop], entry["type"], context, messages, unusable, reordered)
        start = stop + 1
    return own, reordered


def _positions(items: Sequence[object], value: object) -> list[int]:
    """The indexes of `value` in `items` (found by `index`, at C speed: `value` is rare in them)."""
    found: list[int] = []
    try:
        while True:
            found.append(items.index(value, found[-1] + 1 if found else 0))
    except ValueError:
        return found


def _open_other(entry: SessionEntry, line: int, kind: str, context: SessionContext, messages: list[AgentMessage],
                unusable: Unusable, reordered: bool) -> bool:
    """`open_context`'s step for an entry that is not a message: whether the branch is reordered after it."""
    if (phrase := unusable_entry(entry)) is not None:
        unusable.append((line, phrase))
    if kind in _REORDERING:
        return True
    if kind in _SETTING_KINDS:
        _apply_setting(context, entry, kind)
    elif not reordered:
        messages += entry_messages(entry)
    return reordered


def _checks(entries: list[SessionEntry], own: list[AgentMessage | None]) -> Checked:
    """`Checked` of the `message` entries of `entries`, `own` holding their `context_message`s in order."""
    checked: Checked = {}
    raws = (entry.get("message") for entry in entries if entry["type"] == "message")
    for raw, message in zip(raws, own):
        _record(checked, raw, message)
    return checked


def unusable_entries(entries: list[SessionEntry], lines: Sequence[int], checked: Checked,
                     checks: Sequence[object] | None = None) -> list[tuple[int, Phrase]]:
    """(line, `unusable_entry` phrase) of each unusable entry of `entries` (`lines`: their line numbers),
    recording every `message` entry's check in `checked` (taken from `checks`, as in `open_context`, when
    given). The message case is inlined: it runs once per entry of every session opened."""
    unusable = []
    for entry, line, check in zip(entries, lines, checks or repeat(None)):
        if entry["type"] == "message":
            raw = entry.get("message")
            message = check if checks else context_message(raw)  # type: ignore[assignment]
            _record(checked, raw, message)
            if message is None:
                unusable.append((line, _BAD_MESSAGE))
        elif (phrase := unusable_entry(entry)) is not None:
            unusable.append((line, phrase))
    return unusable
