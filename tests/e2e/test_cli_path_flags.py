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
