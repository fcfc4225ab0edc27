"""Size limits for the text an MCP server supplies, wherever it reaches the model or the user (`docs/mcp.md`,
"Limits"). A server is code of someone else's: a 10 MB error message or a 5 MB tool description would otherwise go
into every request (tool results are cut like `bash` output in `tools.py`; tool schemas are checked, size
included, by `ai/tool_schema.py`). Limits count characters (Python `str` length), not bytes.
"""

from __future__ import annotations

from ..tools.sanitize import terminal_text

MAX_ERROR_CHARS = 2_000
"""An error the server caused, as a tool result or `lastError`: a JSON-RPC `error.message`, a malformed answer."""
MAX_DESCRIPTION_CHARS = 4_000
"""A tool's description (sent with the tool definitions; its first line is also in the system prompt), and a
prompt's description and those of its arguments (`get_commands`)."""
MAX_INSTRUCTIONS_CHARS = 500
"""The first line of the server's `instructions`, which the system prompt lists when the entry has no
`description`."""
MAX_NAME_CHARS = 100
"""A server-supplied name or title as shown in a tool's label and in messages (agent tool names are cut to 64
characters by the naming rule, `tools.py`)."""
MAX_URI_CHARS = 500
"""A resource's URI or URI template in the `read_mcp_resource` tool's description."""
MAX_PROGRESS_CHARS = 500
"""The message of one progress notification (a `tool_execution_update`)."""


def cut(text: str, limit: int, what: str) -> str:
    """`text` when it has at most `limit` characters, else its first `limit` characters followed by a notice:
    `[... cut: <what> has <n> characters, the first <limit> are shown]`."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... cut: {what} has {len(text):,} characters, the first {limit:,} are shown]"


def one_line(text: str, limit: int) -> str:
    """`text` for one line of a label or a message: whitespace runs (newlines included) become one space, control
    and invisible characters are shown as escapes (`\\x1b`), cut to `limit` characters with `…`."""
    longer = len(text) > limit * 4
    text = terminal_text(" ".join(text[: limit * 4].split()))  # what is past 4 x the limit cannot be shown anyway
    return text[:limit] + "…" if longer or len(text) > limit else text


def shown_name(name: str) -> str:
    """A server-supplied name quoted for a message (`repr`, so escapes show), at most `MAX_NAME_CHARS` of it."""
    return repr(name) if len(name) <= MAX_NAME_CHARS else repr(name[:MAX_NAME_CHARS]) + "…"
