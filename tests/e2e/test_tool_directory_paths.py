"""End to end: a tool path ending in `/` names a directory, as it does for the shell (tester finding, session 9:
`write x.txt/` overwrote the file `x.txt`, `write dir/` created a regular file `dir`, `read`/`edit x.txt/`
worked on `x.txt`; normalising the path dropped the mark)."""

from __future__ import annotations

import pytest

from e2e.test_print_mode import run
from e2e.test_tool_special_files import tool_result_texts

CALLS = [("write", {"path": "x.txt/", "content": "new"}), ("write", {"path": "fresh/", "content": "new"}),
         ("write", {"path": "x.txt/.", "content": "new"}), ("read", {"path": "x.txt/"}),
         ("edit", {"path": "x.txt/", "oldText": "orig", "newText": "EDITED"}), ("ls", {"path": "x.txt/"}),
         ("grep", {"pattern": "orig", "path": "x.txt/"}), ("find", {"pattern": "*", "path": "x.txt/.."})]


@pytest.mark.parametrize("name,arguments", CALLS, ids=[f"{n}:{a['path']}" for n, a in CALLS])
def test_a_path_ending_in_a_slash_never_reaches_a_file(agent_env, fake_llm, tmp_path, name, arguments):
    (tmp_path / "x.txt").write_text("orig\n")
    fake_llm.set_script([{"tool_calls": [{"name": name, "arguments": arguments}]}, {"text": "fin"}])
    result = run(agent_env, tmp_path, "-p", "--tools", name, "go", timeout=60)
    assert result.returncode == 0, result.stderr
    [text] = tool_result_texts(fake_llm)
    assert "directory" in text and arguments["path"] in text, text
    assert (tmp_path / "x.txt").read_text() == "orig\n" and not (tmp_path / "fresh").exists()


def test_a_directory_named_with_a_slash_is_still_listed(agent_env, fake_llm, tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner.txt").write_text("hi\n")
    fake_llm.set_script([{"tool_calls": [{"name": "ls", "arguments": {"path": "sub/"}}]}, {"text": "fin"}])
    result = run(agent_env, tmp_path, "-p", "--tools", "ls", "go", timeout=60)
    assert result.returncode == 0, result.stderr
    assert "inner.txt" in tool_result_texts(fake_llm)[0]
