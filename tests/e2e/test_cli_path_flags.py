"""End to end: flags that take "text or a file" or a resource path, given something that exists but is not what
they read (a directory, `/dev/zero`, a FIFO): one usage line naming what it is, exit code 2, before anything
starts (`--system-prompt DIR` was silently the prompt text `DIR`; `--prompt-template /dev/zero` "did not
exist"). Plugin paths and the SDK's resource loader say what the path is too."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CLI = [sys.executable, "-m", "agent_forge"]


@pytest.fixture
def specials(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    return {"dir": (str(tmp_path / "dir"), "a directory"), "zero": ("/dev/zero", "a character device"),
            "fifo": (str(tmp_path / "fifo"), "a FIFO (named pipe)")}


def run(args, env, cwd):
    return subprocess.run([*CLI, *args, "-p", "hi"], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("flag", ["--system-prompt", "--append-system-prompt"])
@pytest.mark.parametrize("special", ["dir", "zero", "fifo"])
def test_text_or_file_flags_refuse_what_is_no_regular_file(flag, special, specials, agent_env, fake_llm, tmp_path):
    path, kind = specials[special]
    done = run([flag, path], agent_env, tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"agent-forge: {flag} {path}: it is {kind}, not a regular file (give the text itself, "
                           "or the path of a text file)\n")
    assert fake_llm.requests == []


@pytest.mark.parametrize("flag", ["--skill", "--prompt-template"])
@pytest.mark.parametrize("special", ["zero", "fifo"])
def test_resource_path_flags_refuse_what_is_no_file_or_directory(flag, special, specials, agent_env, fake_llm,
                                                                  tmp_path):
    path, kind = specials[special]
    done = run([flag, path], agent_env, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", f"agent-forge: {flag} {path}: it is {kind}, not a file or a directory\n")


def test_a_system_prompt_file_over_the_limit_is_refused(agent_env, fake_llm, tmp_path):
    (tmp_path / "huge.md").write_bytes(b"x" * (1024 * 1024 + 1))
    done = run(["--system-prompt", "huge.md"], agent_env, tmp_path)
    assert (done.returncode, done.stderr) == (
        2, "agent-forge: --system-prompt huge.md: the file is larger than 1 MB (the limit for it)\n")


def test_text_and_files_still_work(agent_env, fake_llm, tmp_path):
    (tmp_path / "sys.md").write_text("from the file")
    fake_llm.set_script([{"text": "a"}, {"text": "b"}])
    for value, expected in (("sys.md", "from the file"), ("plain words", "plain words")):
        done = run(["--system-prompt", value], agent_env, tmp_path)
        assert done.returncode == 0, done.stderr
        system = fake_llm.requests[-1]["body"]["messages"][0]
        assert system["role"] == "system" and system["content"].startswith(expected)


def test_a_plugin_path_that_is_a_device_says_what_it_is(specials, agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "ok"}])
    done = run(["-e", "/dev/zero"], agent_env, tmp_path)
    assert done.returncode == 0
    assert ("Warning: Plugin not loaded: /dev/zero: it is a character device (expected a .py file or a package "
            "directory)") in done.stderr.splitlines()


def test_the_sdk_loader_names_what_a_path_is(specials, tmp_path):
    from agent_forge.coding.resources.loader import ResourceOptions, load_resources
    from agent_forge.coding.resources.trust import project_policy
    from agent_forge.coding.settings import load_settings

    agent = tmp_path / "agent"
    agent.mkdir()
    policy = project_policy(str(tmp_path), agent, approve=False)
    resources = load_resources(ResourceOptions(cwd=str(tmp_path), agent_dir=agent, skill_paths=("/dev/zero",),
                                               prompt_template_paths=(specials["fifo"][0],),
                                               system_prompt=specials["dir"][0]),
                               load_settings(str(tmp_path), agent), policy)
    assert "/dev/zero: skill path is a character device, not a file or a directory" in resources.warnings
    assert f"{specials['fifo'][0]}: prompt template path is a FIFO (named pipe), not a file or a directory" \
        in resources.warnings
    assert f"{specials['dir'][0]}: it is a directory, not a regular file; taken as the text itself" \
        in resources.warnings


def test_a_session_dir_that_is_no_directory_is_refused_before_the_run(agent_env, fake_llm, tmp_path):
    (tmp_path / "file").write_text("x")
    for path, kind in (("/dev/null", "a character device"), (str(tmp_path / "file"), "a regular file")):
        done = run(["--session-dir", path], agent_env, tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (
            2, "", f"agent-forge: --session-dir {path}: it is {kind}, not a directory\n")
    assert fake_llm.requests == []


LOOP_REASON = "cannot be examined: Too many levels of symbolic links"


@pytest.mark.parametrize("flag", ["--system-prompt", "--append-system-prompt"])
@pytest.mark.parametrize("value", ["loop", "loop/prompt.md"])
def test_a_text_or_file_path_that_cannot_be_examined_is_refused(flag, value, agent_env, fake_llm, tmp_path):
    """A symbolic link loop was silently the prompt text `loop`: it is a path, and the OS says why it is unusable."""
    os.symlink("loop", tmp_path / "loop")
    done = run([flag, value], agent_env, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"agent-forge: {flag} {value}: {LOOP_REASON}\n")
    assert fake_llm.requests == []


def test_text_that_only_looks_like_a_path_stays_text(agent_env, fake_llm, tmp_path):
    (tmp_path / "notes").write_text("x")
    fake_llm.set_script([{"text": "a"}])
    text = "notes/answer in Y/N " + "x" * 300  # under a regular file, and a component over 255 bytes
    done = run(["--system-prompt", text], agent_env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert fake_llm.requests[-1]["body"]["messages"][0]["content"].startswith(text)


def test_a_prompt_file_without_permission_is_refused_with_the_reason(nobody_dir, nobody_env):
    from support.doubles import run_as_nobody

    locked = nobody_dir / "locked"
    locked.mkdir(mode=0o000)
    (nobody_dir / "secret.md").write_text("x")
    (nobody_dir / "secret.md").chmod(0o000)
    for value, reason in ((f"{locked}/p.md", "cannot be examined: Permission denied"),
                          ("secret.md", "cannot read: Permission denied")):
        done = run_as_nobody(["--system-prompt", value, "-p", "hi"], nobody_env, nobody_dir)
        assert (done.returncode, done.stderr) == (2, f"agent-forge: --system-prompt {value}: {reason}\n")


@pytest.mark.parametrize("kind", ["fifo", "file", "loop", "under-a-file"])
def test_an_unusable_session_dir_from_the_environment_is_refused_before_the_run(kind, agent_env, fake_llm, tmp_path):
    """`AGENT_FORGE_SESSION_DIR` naming a FIFO, a file or a link loop failed only after the paid answer."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "file").write_text("x")
    os.symlink("loop", tmp_path / "loop")
    path = str(tmp_path / ("file/sub" if kind == "under-a-file" else kind))
    reason = {"fifo": "it is a FIFO (named pipe), not a directory", "file": "it is a regular file, not a directory",
              "loop": LOOP_REASON, "under-a-file": "cannot be examined: Not a directory"}[kind]
    for args, env in ((["--session-dir", path], agent_env),
                      ([], dict(agent_env, AGENT_FORGE_SESSION_DIR=path))):
        flag = args[0] if args else "AGENT_FORGE_SESSION_DIR"
        done = run(args, env, tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", f"agent-forge: {flag} {path}: {reason}\n")
    assert fake_llm.requests == []


def test_a_session_dir_without_permission_is_refused(nobody_dir, nobody_env):
    from support.doubles import run_as_nobody

    (nobody_dir / "locked").mkdir(mode=0o000)
    path = f"{nobody_dir}/locked/sessions"
    done = run_as_nobody(["-p", "hi"], dict(nobody_env, AGENT_FORGE_SESSION_DIR=path), nobody_dir)
    assert (done.returncode, done.stderr) == (
        2, f"agent-forge: AGENT_FORGE_SESSION_DIR {path}: cannot be examined: Permission denied\n")


@pytest.mark.parametrize("where", ["--session-dir", "AGENT_FORGE_SESSION_DIR"])
@pytest.mark.parametrize("name", ["readonly", "readonly/sessions"])
def test_a_session_dir_nobody_may_write_in_is_refused_before_the_run(where, name, nobody_dir, nobody_env, fake_llm):
    """A directory that exists but cannot be written in (or made, under one) failed only after the paid answer."""
    from support.doubles import run_as_nobody

    env = nobody_env
    (nobody_dir / "readonly").mkdir(mode=0o755)  # root's: nobody may enter and read it, not write in it
    path = str(nobody_dir / name)
    args = ["--session-dir", path] if where == "--session-dir" else []
    if where != "--session-dir":
        env["AGENT_FORGE_SESSION_DIR"] = path
    fake_llm.set_script([{"text": "a"}])
    done = run_as_nobody([*args, "-p", "hi"], env, nobody_dir)
    verb = "write in it" if name == "readonly" else f"make it in {nobody_dir}/readonly"
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", f"agent-forge: {where} {path}: cannot {verb}: Permission denied\n")
    assert fake_llm.requests == []
    done = run_as_nobody([*args, "--no-session", "-p", "hi"], env, nobody_dir)
    assert (done.returncode, done.stdout) == (0, "a\n"), done.stderr


def test_no_session_ignores_the_environment_session_dir(agent_env, fake_llm, tmp_path):
    (tmp_path / "file").write_text("x")
    fake_llm.set_script([{"text": "a"}])
    done = run(["--no-session"], dict(agent_env, AGENT_FORGE_SESSION_DIR=str(tmp_path / "file")), tmp_path)
    assert (done.returncode, done.stdout) == (0, "a\n"), done.stderr


def test_the_sdk_loader_names_a_system_prompt_path_that_cannot_be_examined(tmp_path):
    from agent_forge.coding.resources.loader import ResourceOptions, load_resources
    from agent_forge.coding.resources.trust import project_policy
    from agent_forge.coding.settings import load_settings

    agent = tmp_path / "agent"
    agent.mkdir()
    os.symlink("loop", tmp_path / "loop")
    resources = load_resources(ResourceOptions(cwd=str(tmp_path), agent_dir=agent, system_prompt="loop",
                                               append_system_prompt=["plain text"]),
                               load_settings(str(tmp_path), agent), project_policy(str(tmp_path), agent, approve=False))
    assert f"loop: {LOOP_REASON}; taken as the text itself" in resources.warnings
    assert (resources.custom_prompt, resources.append_prompt) == ("loop", "plain text")
