"""HTML export of a session: one self-contained file (inline CSS and script, images as `data:` URLs, nothing
fetched) showing every entry of the session tree, with the active branch as the main line.

Example::

    from agent_forge.coding.export_html import export_session_file
    path = export_session_file("~/.agent-forge/agent/sessions/--home-me-proj--/<file>.jsonl", "out.html")

Importing this package costs only the standard library; markdown-it-py and pygments load when a page is built
(`exporter.render_html`). Layout: `exporter` (checks, paths, writing) → `page` (document) → `tree` (branch
layout) → `entries` / `messages` / `tools` / `blocks` (cards) → `markdown`, `highlight`, `text` (escaping).
"""

from __future__ import annotations

from ..errors import ExportError
from .exporter import (
    SessionSnapshot,
    default_output_name,
    export_session_file,
    export_store,
    render_html,
    resolve_output_path,
    write_export,
)

__all__ = [
    "ExportError",
    "SessionSnapshot",
    "default_output_name",
    "export_session_file",
    "export_store",
    "render_html",
    "resolve_output_path",
    "write_export",
]
