"""Where a session's tools do their work: the one switch of the tool layer, set for the session and given to
every tool it ever holds: those of the start and any added later (a plugin tool, an MCP server's, a reload, SDK
code replacing `agent.tools`), since the agent hands each new tool list to `apply` (`Agent.prepare_tools`,
also at each run's start).

A tool takes what it has an attribute for: `files` (read, write, edit: `file_access.py`, e.g. an editor's
buffers over ACP), `terminals` (bash: an editor's terminals, `CommandRunner`) and `output_dir` (bash: the
session's directory of full outputs, for a tool that has none of its own). Unset (None) switches leave the
tools as they are: the disk, a local shell.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from .bash import CommandRunner
    from .file_access import FileAccess
    from .output_files import OutputDir


class ToolEnvironment:
    """One session's switches; `tools()` gives its current tools (re-pointed when a switch changes)."""

    def __init__(self, tools: Callable[[], Iterable[Any]], output_dir: Callable[[], OutputDir] | None = None):
        self._tools = tools
        self.files: FileAccess | None = None
        self.terminals: CommandRunner | None = None
        self.output_dir = output_dir

    def use(self, *, files: FileAccess | None = None, terminals: CommandRunner | None = None) -> None:
        """Route file reads and writes through `files` and commands through `terminals` (None: as before),
        for the session's tools now and every tool it gets later."""
        self.files = files if files is not None else self.files
        self.terminals = terminals if terminals is not None else self.terminals
        self.apply(self._tools())

    def apply(self, tools: Iterable[Any]) -> None:
        """Point every tool of `tools` at the switches it has an attribute for."""
        for tool in tools:
            if self.files is not None and hasattr(tool, "files"):
                tool.files = self.files
            if self.terminals is not None and hasattr(tool, "terminals"):
                tool.terminals = self.terminals
            if self.output_dir is not None and hasattr(tool, "output_dir") and tool.output_dir is None:
                tool.output_dir = self.output_dir
