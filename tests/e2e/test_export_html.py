"""End to end: a real RPC session (fake LLM) with code, an image, tool calls and `<script>` strings, exported
with `export_html`, then opened in headless Chromium: it renders, no injected script runs, nothing is fetched."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from agent_forge.modes.rpc.client import RpcClient

PROMPT = "Look at this picture <script>document.title='pwned-user'</script> and make greet.py"
FINAL = ("Done. <script>document.title='pwned'</script> "
         "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">")
SCRIPT = [
    {"text": "I'll write it:\n\n```python\ndef greet():\n    return '<b>hi</b>'\n```",
     "tool_calls": [{"name": "write", "arguments": {"path": "greet.py", "content": "print('hi')\n"}}]},
    {"thinking": "The greeting should be longer.",
     "tool_calls": [{"name": "edit", "arguments": {"path": "greet.py",
                                                   "edits": [{"oldText": "'hi'", "newText": "'hello'"}]}}]},
    {"tool_calls": [{"name": "bash", "arguments": {
        "command": "python3 greet.py; echo '<script>document.title=\"pwned-bash\"</script>'"}}]},
    {"tool_calls": [{"name": "read", "arguments": {"path": "greet.py"}}]},
    {"text": FINAL},
]
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def png_base64() -> str:
    """A valid 2x2 PNG, built here."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x40\x00" * 2 for _ in range(2))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    return base64.b64encode(png).decode("ascii")


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        if path := shutil.which(name):
            return path
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


async def run_session(env: dict[str, str], project: Path, fake_llm) -> tuple[dict, dict, list[dict]]:
    """Prompt with an image, let the scripted tool loop run, export; returns (early export response, export
    response, other export responses)."""
    fake_llm.set_script(SCRIPT)
    image = {"type": "image", "data": png_base64(), "mimeType": "image/png"}
    (project / "exports").mkdir()
    async with await RpcClient.start([], cwd=str(project), env=env) as client:
        early = await client.send({"type": "export_html", "id": "early"})
        await client.prompt_and_wait(PROMPT, images=[image])
        exported = await client.send({"type": "export_html", "outputPath": "exports/session.html"})
        others = [await client.send({"type": "export_html"}),
                  await client.send({"type": "export_html", "outputPath": str(project / "missing" / "x.html")})]
    return early, exported, others


class Tags(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def resource_urls(page: str) -> list[str]:
    """src/href of the elements a browser loads on its own (not `<a>` links, which only load when clicked)."""
    loaded = {"img": "src", "script": "src", "link": "href", "iframe": "src", "source": "src", "video": "src",
              "audio": "src", "embed": "src", "object": "data"}
    return [attrs[loaded[tag]] or "" for tag, attrs in Tags(page).tags if tag in loaded and attrs.get(loaded[tag])]


async def test_export_over_rpc_writes_a_self_contained_page(agent_env, fake_llm, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    early, exported, (default, missing) = await run_session(agent_env, project, fake_llm)
    assert early["success"] is False and early["id"] == "early" and "no messages" in early["error"]
    assert exported["success"] is True and exported["data"] == {"path": str(project / "exports" / "session.html")}
    assert default["success"] is True
    default_path = Path(default["data"]["path"])
    assert default_path.parent == project and default_path.name.startswith("agent-forge-session-")
    assert missing["success"] is False and "Cannot write" in missing["error"] and "missing" in missing["error"]
    page = Path(exported["data"]["path"]).read_bytes().decode("utf-8")
    assert page.count("<script") == 1 and "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in page
    assert [url[:22] for url in resource_urls(page)] == ["data:image/png;base64,"]
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page.split("<main>", 1)[0])


async def test_in_memory_session_cannot_be_exported(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "hi"}])
    async with await RpcClient.start(["--no-session"], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("hello")
        reply = await client.send({"type": "export_html", "outputPath": "x.html"})
    assert reply["success"] is False and "in-memory session" in reply["error"]
    assert not (tmp_path / "x.html").exists()


# --- in the browser --------------------------------------------------------------------------------------


@dataclass
class Rendered:
    dom: str
    page_requests: list[str]
    screenshot: Path


def open_in_chromium(chromium: str, page: Path, work: Path) -> Rendered:
    """Load `page` in headless Chromium with every host name unresolvable (nothing can leave the machine),
    recording the DOM after load, a screenshot and a net log."""
    work.mkdir(parents=True, exist_ok=True)
    netlog, shot = work / "netlog.json", work / "page.png"
    argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={work / 'profile'}", "--host-resolver-rules=MAP * ~NOTFOUND",
            f"--log-net-log={netlog}", "--window-size=1100,1400", f"--screenshot={shot}", "--dump-dom",
            page.as_uri()]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work)}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, cwd=work)
    assert done.returncode == 0 and "<html" in done.stdout, done.stderr[-3000:]
    return Rendered(done.stdout, page_requests(netlog), shot)


def page_requests(netlog: Path) -> list[str]:
    """URLs of network requests the page started. Chromium's own background requests (update checks, ...)
    carry the initiator "not an origin"; anything a `file://` page asks for carries its origin ("null")."""
    text = netlog.read_text("utf-8")
    try:
        log = json.loads(text)
    except ValueError:  # a log cut short at exit lacks its closing brackets
        log = json.loads(text.rstrip().rstrip(",") + "]}")
    names = {number: name for name, number in log["constants"]["logEventTypes"].items()}
    return [event["params"]["url"] for event in log["events"]
            if names.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in event.get("params", {})
            and event["params"].get("initiator") != "not an origin"]


def title_of(dom: str) -> str:
    match = re.search(r"<title>(.*?)</title>", dom, re.S)
    return match.group(1) if match else ""


@pytest.fixture
def chromium() -> str:
    path = find_chromium()
    if path is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
    return path


def test_the_browser_checks_can_see_a_fetch_and_a_script(chromium, tmp_path):
    """Control: the same checks flag a page that does fetch and does run an injected script."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><head><title>t</title></head><body>'
                   '<img src="http://blocked.invalid/pixel.png"><script>document.title="ran"</script></body></html>')
    rendered = open_in_chromium(chromium, bad, tmp_path / "chromium")
    assert rendered.page_requests == ["http://blocked.invalid/pixel.png"]
    assert title_of(rendered.dom) == "ran"


async def test_exported_page_renders_in_chromium_without_scripts_or_fetches(chromium, agent_env, fake_llm,
                                                                            tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    _, exported, _ = await run_session(agent_env, project, fake_llm)
    rendered = open_in_chromium(chromium, Path(exported["data"]["path"]), tmp_path / "chromium")
    dom = rendered.dom
    for text in ("Look at this picture", "greet.py", "Tool result: bash", "Tool result: read", "hello",
                 "The greeting should be longer.", "Done.", "fake/fake-model"):
        assert text in dom, text
    assert title_of(dom).startswith("Look at this picture")  # an injected script would have replaced it
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom  # shown as text
    assert dom.count("<script") == 1  # the page's own expand/collapse script only
    assert 'class="k">def</span>' in dom  # highlighted code block
    assert re.search(r'<img [^>]*src="data:image/png;base64,', dom)
    assert rendered.page_requests == []
    assert rendered.screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


async def test_export_over_rpc_follows_symlinks_and_refuses_special_files(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "hi"}])
    project = tmp_path / "project"
    (project / "real").mkdir(parents=True)
    (project / "real" / "page.html").write_text("old")
    (project / "real" / "page.html").chmod(0o644)
    (project / "link.html").symlink_to(project / "real" / "page.html")
    os.mkfifo(project / "pipe.html")
    async with await RpcClient.start([], cwd=str(project), env=agent_env) as client:
        await client.prompt_and_wait("hello")
        linked = await client.send({"type": "export_html", "outputPath": "link.html"})
        piped = await client.send({"type": "export_html", "id": "p", "outputPath": "pipe.html"})
    assert linked["data"] == {"path": str(project / "real" / "page.html")}
    assert (project / "link.html").is_symlink() and "hello" in (project / "real" / "page.html").read_text()
    assert (project / "real" / "page.html").stat().st_mode & 0o777 == 0o644
    assert piped["success"] is False and piped["id"] == "p" and "is a FIFO, not a regular file" in piped["error"]
    assert (project / "pipe.html").is_fifo()


async def test_export_over_rpc_never_replaces_what_is_not_an_earlier_export(agent_env, fake_llm, tmp_path):
    fake_llm.set_script([{"text": "hi"}])
    project = tmp_path / "outer" / "project"
    project.mkdir(parents=True)
    victim = tmp_path / "passwd"  # outside the cwd, like ../../etc/passwd; only ever inside tmp_path
    victim.write_text("root:x:0:0\n")
    (project / "notes").write_text("keep me")
    (project / "old.html").write_text("old page")
    async with await RpcClient.start([], cwd=str(project), env=agent_env) as client:
        await client.prompt_and_wait("hello")
        outside = await client.send({"type": "export_html", "outputPath": "../../passwd"})
        absolute = await client.send({"type": "export_html", "outputPath": str(victim)})
        notes = await client.send({"type": "export_html", "outputPath": "notes"})
        nul = await client.send({"type": "export_html", "outputPath": "x\u0000.html"})
        again = await client.send({"type": "export_html", "outputPath": "old.html"})
        fresh = await client.send({"type": "export_html", "outputPath": "../new-page"})
    assert outside["success"] is False and "must stay inside the working directory" in outside["error"]
    assert absolute["success"] is False and "not an earlier HTML export" in absolute["error"]
    assert notes["success"] is False and "not an earlier HTML export" in notes["error"]
    assert victim.read_text() == "root:x:0:0\n" and (project / "notes").read_text() == "keep me"
    assert nul["success"] is False and nul["error"] == "Field 'outputPath' must not contain NUL characters"
    assert again["success"] is True and "hello" in (project / "old.html").read_text()
    assert fresh["success"] is False and not (tmp_path / "outer" / "new-page").exists()


async def test_export_over_rpc_refuses_a_path_naming_a_descriptor_by_its_given_name(agent_env, fake_llm, tmp_path):
    """In RPC mode stdout is the protocol channel: `/dev/stdout`, `/proc/self/fd/1`, `/dev/fd/2` and a symlink to
    `/dev/stdout` are refused, quoted as given (not as `/proc/<pid>/fd/pipe:[N]`), and the channel stays clean."""
    fake_llm.set_script([{"text": "hi"}])
    (tmp_path / "out.html").symlink_to("/dev/stdout")
    paths = ("/dev/stdout", "/proc/self/fd/1", "/dev/fd/2", "out.html")
    async with await RpcClient.start([], cwd=str(tmp_path), env=agent_env) as client:
        await client.prompt_and_wait("hello")
        replies = [await client.send({"type": "export_html", "outputPath": path}) for path in paths]
        state = await client.send({"type": "get_state"})
    for path, reply in zip(paths, replies):
        assert reply["success"] is False
        assert reply["error"] == (f"Cannot write {path}: it names an open descriptor (standard output, a pipe or "
                                  "a terminal), not a file; give a file path")
    assert state["success"] is True and (tmp_path / "out.html").is_symlink()
