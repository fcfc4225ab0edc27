"""End to end: `agent-forge --export SESSION [OUT]` takes what `--session` takes (a file, a full or partial id of
this directory) and `-` as OUT writes the page to stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "agent_forge"]


def one_session(agent_env, fake_llm, project):
    """Run one `-p` prompt in `project`; the session's id from `--list-sessions --json`."""
    fake_llm.set_script([{"text": "the answer is 42"}])
    done = subprocess.run([*CLI, "-p", "question"], cwd=project, env=agent_env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    listed = subprocess.run([*CLI, "--list-sessions", "--json"], cwd=project, env=agent_env, capture_output=True,
                            timeout=60)
    (info,) = json.loads(listed.stdout)
    return info


def test_export_by_full_and_partial_id(agent_env, fake_llm, tmp_path):
    info = one_session(agent_env, fake_llm, tmp_path)
    for reference, out in ((info["id"], "full.html"), (info["id"][:8], "partial.html")):
        done = subprocess.run([*CLI, "--export", reference, out], cwd=tmp_path, env=agent_env, capture_output=True,
                              text=True, timeout=60)
        assert (done.returncode, done.stdout, done.stderr) == (0, f"{tmp_path / out}\n", "")
        assert "the answer is 42" in (tmp_path / out).read_text()


def test_export_to_stdout_with_a_dash(agent_env, fake_llm, tmp_path):
    info = one_session(agent_env, fake_llm, tmp_path)
    done = subprocess.run([*CLI, "--export", info["path"], "-"], cwd=tmp_path, env=agent_env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("<!DOCTYPE html>") and "the answer is 42" in done.stdout
    assert not (tmp_path / "-").exists()


def test_export_of_an_unknown_id_says_so(agent_env, fake_llm, tmp_path):
    one_session(agent_env, fake_llm, tmp_path)
    done = subprocess.run([*CLI, "--export", "zzzz-no-such", "-"], cwd=tmp_path, env=agent_env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("agent-forge: No session found matching 'zzzz-no-such'")


def test_export_finds_an_id_of_another_directory(agent_env, fake_llm, tmp_path):
    """`--export` only reads: an id (or unique prefix) stored for another directory is found too, and stderr says
    where it is; `--session` with the same id still refuses to resume it here (README, Sessions)."""
    made, elsewhere = tmp_path / "made", tmp_path / "elsewhere"
    made.mkdir(), elsewhere.mkdir()
    info = one_session(agent_env, fake_llm, made)
    for reference in (info["id"], info["id"][:8].upper()):
        done = subprocess.run([*CLI, "--export", reference, "-"], cwd=elsewhere, env=agent_env, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "the answer is 42" in done.stdout
        assert done.stderr == f"agent-forge: session {info['id']} is stored for another directory: {info['path']}\n"
    resumed = subprocess.run([*CLI, "--session", info["id"], "-p", "again"], cwd=elsewhere, env=agent_env,
                             capture_output=True, text=True, timeout=60)
    assert resumed.returncode == 1 and "No session found matching" in resumed.stderr


def test_export_of_a_prefix_two_directories_share_lists_both(agent_env, fake_llm, tmp_path):
    first, second, third = (tmp_path / name for name in ("first", "second", "third"))
    for directory in (first, second, third):
        directory.mkdir()
    paths = [one_session(agent_env, fake_llm, directory)["path"] for directory in (first, second)]
    for path, new_id in zip(paths, ("abcd0001-0000-4000-8000-000000000000", "abcd0002-0000-4000-8000-000000000000")):
        lines = Path(path).read_text().splitlines(keepends=True)  # one prefix for both: `abcd000`
        Path(path).write_text(json.dumps({**json.loads(lines[0]), "id": new_id}) + "\n" + "".join(lines[1:]))
    done = subprocess.run([*CLI, "--export", "abcd000", "-"], cwd=third, env=agent_env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert "is ambiguous; it matches 2 sessions" in done.stderr
    assert all(path in done.stderr for path in paths)
    exact = subprocess.run([*CLI, "--export", "abcd0002", "-"], cwd=third, env=agent_env, capture_output=True,
                           text=True, timeout=60)
    assert exact.returncode == 0 and paths[1] in exact.stderr
    unknown = subprocess.run([*CLI, "--export", "zzzz-no-such", "-"], cwd=third, env=agent_env, capture_output=True,
                             text=True, timeout=60)
    assert unknown.returncode == 1 and "nor in any other directory's sessions" in unknown.stderr


def test_the_written_path_is_printed_on_one_line_with_its_escapes(agent_env, fake_llm, tmp_path):
    info = one_session(agent_env, fake_llm, tmp_path)
    name = "e\x1b]0;pwned\x07\u202e\nx.html"
    done = subprocess.run([*CLI, "--export", info["path"], name], cwd=tmp_path, env=agent_env, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{tmp_path}/e\\x1b]0;pwned\\x07\\u202e\\nx.html\n"
    assert "the answer is 42" in (tmp_path / name).read_text()  # the file keeps its real name


@pytest.mark.real_process  # real descriptors 1 and 2: the in-process run captures sys.stdout and sys.stderr
def test_a_path_naming_stdout_gets_clean_html_and_stderr_gets_the_page_with_its_name(agent_env, fake_llm, tmp_path):
    """`/dev/stdout`, `/proc/self/fd/1`, `/dev/fd/1` (a pipe) and `/dev/stdout` onto a file opened for appending
    get the page alone, as `-` does; `/dev/stderr` gets the page and stdout names it as given, never as the
    resolved `/proc/<pid>/fd/pipe:[N]`."""
    info = one_session(agent_env, fake_llm, tmp_path)
    for out in ("/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"):
        done = subprocess.run([*CLI, "--export", info["path"], out], cwd=tmp_path, env=agent_env,
                              capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.startswith("<!DOCTYPE html>") and done.stdout.endswith("</html>\n")
    appended = tmp_path / "log.txt"
    appended.write_text("before\n")
    with open(appended, "ab") as log:
        done = subprocess.run([*CLI, "--export", info["path"], "/dev/stdout"], cwd=tmp_path, env=agent_env,
                              stdout=log, stderr=subprocess.PIPE, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert appended.read_text().startswith("before\n<!DOCTYPE html>") and "the answer is 42" in appended.read_text()
    done = subprocess.run([*CLI, "--export", info["path"], "/dev/stderr"], cwd=tmp_path, env=agent_env,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "/dev/stderr\n")
    assert done.stderr.startswith("<!DOCTYPE html>") and "the answer is 42" in done.stderr


def test_a_call_without_a_result_says_none_was_recorded(agent_env, tmp_path):
    """A session killed mid-call: the page showed the call and nothing more (the terminal UI and ACP say the
    call was interrupted); a call with its result gets no such note."""
    from agent_forge.coding.session.store import SessionStore

    store = SessionStore.create(tmp_path, Path(agent_env["AGENT_FORGE_DIR"]) / "sessions")
    store.append_message({"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 1})
    store.append_message({"role": "assistant", "stopReason": "toolUse", "timestamp": 2, "content": [
        {"type": "toolCall", "id": "call-done", "name": "write", "arguments": {"path": "a", "content": "x"}},
        {"type": "toolCall", "id": "call-cut", "name": "bash", "arguments": {"command": "sleep 60"}}]})
    store.append_message({"role": "toolResult", "toolCallId": "call-done", "toolName": "write", "isError": False,
                          "content": [{"type": "text", "text": "Successfully wrote 1 bytes to a"}], "timestamp": 3})
    store.close()
    done = subprocess.run([*CLI, "--export", str(store.path), "-"], cwd=tmp_path, env=agent_env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("no result recorded") == 1
    assert "bash call-cut: no result recorded (the call was still running, or the agent stopped" in done.stdout


def test_an_unreadable_directory_is_said_skipped_as_other_commands_say_it(nobody_dir, nobody_env):
    from support.doubles import run_as_nobody

    root = nobody_dir / "sessions"
    locked = root / "--elsewhere--"
    locked.mkdir(parents=True)
    locked.chmod(0o000)
    root.chmod(0o755)
    done = run_as_nobody(["--export", "zzzz", "-", "--session-dir", str(root)], nobody_env, nobody_dir)
    assert done.returncode == 1
    assert f"agent-forge: skipped the session directory {locked}: Permission denied\n" in done.stderr
    assert "No session found matching 'zzzz'" in done.stderr


def test_an_export_says_what_a_damaged_file_lost_as_a_resume_does(agent_env, tmp_path):
    """A garbage line and a torn last line were left out of the page without a word (round 33)."""
    from agent_forge.coding.session.store import SessionStore

    store = SessionStore.create(tmp_path, Path(agent_env["AGENT_FORGE_DIR"]) / "sessions")
    store.append_message({"role": "user", "content": [{"type": "text", "text": "kept"}], "timestamp": 1})
    store.close()
    lines = store.path.read_bytes().splitlines(keepends=True)
    store.path.write_bytes(b"".join([*lines[:2], b"garbage that is no JSON\n", *lines[2:], b'{"type": "mess']))
    for output in ("-", str(tmp_path / "page.html"), None):  # stdout, a file, the default file (round 35)
        done = subprocess.run([*CLI, "--export", str(store.path), *([output] if output else [])], cwd=tmp_path,
                              env=agent_env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and ("kept" in done.stdout if output == "-" else done.stdout.endswith(".html\n"))
        said = [line for line in done.stderr.splitlines() if line.startswith("Warning: session file ")]
        assert len(said) == 2 and "damaged line" in said[0] + said[1] and "cut off mid-write" in said[0] + said[1], \
            (output, done.stderr)
