"""The tool layer's one switch (`coding/tools/environment.py`): a session's file access, terminals and output
directory reach its tools of the start and every tool it gets later: a replaced tool list (a reload, plugins,
SDK code) and a tool appended in place before a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_forge.ai.providers.faux import FauxResponse, set_faux_responses
from agent_forge.coding.factory import SessionOptions, create_session
from agent_forge.coding.tools import create_tools
from agent_forge.coding.tools.file_access import LOCAL, LocalFiles


class EditorFiles(LocalFiles):
    """A front end's buffers: serves every text file from memory and records writes."""

    def __init__(self) -> None:
        self.written: dict[str, str] = {}

    async def read_text(self, path: str) -> str | None:
        return self.written.get(path, "buffer text\n")

    async def write_text(self, path: str, text: str) -> bool:
        self.written[path] = text
        return True


class Terminals:
    async def run(self, *args):  # a CommandRunner; never reached in these tests
        raise AssertionError("not run")


@pytest.fixture
def session(tmp_path, faux):
    project = tmp_path / "project"
    project.mkdir()
    session = create_session(SessionOptions(cwd=str(project), agent_dir=tmp_path / "agent", no_session=True,
                                            tool_names=["read"], stream_fn=faux.stream))
    session.agent.model = faux.model()
    yield session
    session.store.close()


def test_the_switch_reaches_the_tools_of_the_start_and_those_set_later(session):
    files, terminals = EditorFiles(), Terminals()
    [read] = session.agent.tools
    assert read.files is LOCAL
    session.tool_environment.use(files=files, terminals=terminals)
    assert read.files is files
    write, bash = create_tools(session.cwd, ["write", "bash"])
    assert (write.files, bash.terminals, bash.output_dir) == (LOCAL, None, None)
    session.agent.tools = [*session.agent.tools, write, bash]  # a reload, a plugin, SDK code
    assert write.files is files and bash.terminals is terminals
    assert bash.output_dir == session.output_dir  # the session's full outputs, as for a tool of the start


def test_unset_switches_leave_a_tool_as_it_is(session):
    [bash] = create_tools(session.cwd, ["bash"])
    own = lambda: None  # noqa: E731
    bash.output_dir = own
    session.agent.tools = [bash]
    assert bash.terminals is None and bash.output_dir is own  # nothing asked for: the local shell, its own dir


async def test_a_tool_appended_in_place_uses_the_switch_in_the_next_run(session, faux):
    files = EditorFiles()
    session.tool_environment.use(files=files)
    [write] = create_tools(session.cwd, ["write"])
    session.agent.tools.append(write)  # no assignment: the run's start hands the list over
    set_faux_responses([FauxResponse(tool_calls=[("write", {"path": "new.txt", "content": "hi\n"})]),
                        FauxResponse(text="done")], faux.key)
    session.approvals.set_policy("full")
    await session.prompt_and_wait("write it")
    assert files.written == {f"{session.cwd}/new.txt": "hi\n"}
    assert not (Path(session.cwd) / "new.txt").exists()  # the editor's buffer got it, not the disk
