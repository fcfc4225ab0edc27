"""HTML export rendering: escaping of every field, markdown, highlighting, thinking, tools, images, the branch
tree, unicode, and the exporter's checks and paths (real session stores in tmp_path)."""

from __future__ import annotations

import base64
import os
import socket
import stat
import struct
import subprocess
import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from agent_forge.coding.errors import ExportError
from agent_forge.coding.export_html import (
    SessionSnapshot,
    default_output_name,
    export_session_file,
    export_store,
    render_html,
)
from agent_forge.coding.export_html import entries as entries_module
from agent_forge.coding.export_html.page import render_page
from agent_forge.coding.session.store import SessionStore

EVIL = '<script>document.title="pwned"</script><img src=x onerror=alert(1)>"\'&'


# --- helpers ---------------------------------------------------------------------------------------------


def png_base64() -> str:
    """A valid 1x1 PNG, built here so the test needs no fixture file."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x80\x00")
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode("ascii")


class Page(HTMLParser):
    """The parsed page: every start tag with its attributes, and the text (script/style bodies kept apart)."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text_parts: list[str] = []
        self.scripts: list[str] = []
        self.title = ""
        self._raw: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style", "title"):
            self._raw = tag

    def handle_endtag(self, tag: str) -> None:
        if tag == self._raw:
            self._raw = None

    def handle_data(self, data: str) -> None:
        if self._raw == "script":
            self.scripts.append(data)
        elif self._raw == "title":
            self.title += data
        elif self._raw is None:
            self.text_parts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and all(a.get(k) == v for k, v in attrs.items())]

    def with_class(self, name: str) -> list[tuple[str, dict[str, str | None]]]:
        return [(t, a) for t, a in self.tags if name in (a.get("class") or "").split()]


def assistant(content: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, "api": "openai-completions", "provider": "fake",
               "model": "fake-model", "stopReason": "stop", "timestamp": 2,
               "usage": {"input": 1200, "output": 34, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1234,
                         "cost": {"input": 0.0036, "output": 0.0005, "cacheRead": 0, "cacheWrite": 0,
                                  "total": 0.0041}}}
    message.update(extra)
    return message


def user(text: str, *images: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}, *images], "timestamp": 1}


def tool_result(call_id: str, name: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [{"type": "text", "text": text}], "isError": False, "timestamp": 3, **extra}


def new_store(tmp_path: Path) -> SessionStore:
    return SessionStore.create(tmp_path / "project", tmp_path / "sessions")


def page_of(store: SessionStore) -> Page:
    return Page(render_html(SessionSnapshot.of_store(store)))


def html_of(store: SessionStore) -> str:
    return render_html(SessionSnapshot.of_store(store))


# --- escaping --------------------------------------------------------------------------------------------


def every_field_session(tmp_path: Path) -> SessionStore:
    """A session with EVIL in every string field a page shows."""
    store = new_store(tmp_path)
    store.append_model_change(EVIL, EVIL)
    store.append_thinking_level_change(EVIL)
    first = store.append_message(user(EVIL, {"type": "image", "mimeType": EVIL, "data": "AAAA"}))
    calls = [{"type": "toolCall", "id": EVIL, "name": name, "arguments": args} for name, args in (
        ("bash", {"command": EVIL, "timeout": EVIL}),
        ("read", {"path": EVIL, "offset": EVIL}),
        ("write", {"path": EVIL + ".py", "content": EVIL}),
        ("edit", {"path": EVIL, "edits": [{"oldText": EVIL, "newText": EVIL}]}),
        (EVIL, {EVIL: EVIL}),
    )]
    calls.append({"type": "toolCall", "id": "c9", "name": "bash", "arguments": {}, "argumentsError": EVIL})
    store.append_message(assistant([{"type": "thinking", "thinking": EVIL}, {"type": "text", "text": EVIL}, *calls],
                                   provider=EVIL, model=EVIL, thinkingLevel=EVIL, errorMessage=EVIL,
                                   stopReason="error"))
    for name in ("bash", "read", "edit", EVIL):
        store.append_message(tool_result(EVIL, name, EVIL, details={"diff": EVIL, "fullOutputPath": EVIL}))
    store.append_message({"role": "bashExecution", "command": EVIL, "output": EVIL, "exitCode": EVIL,
                          "cancelled": False, "truncated": True, "fullOutputPath": EVIL, "timestamp": 4})
    store.append_message({"role": "custom", "customType": EVIL, "content": EVIL, "display": False, "timestamp": 5})
    store.append_message({"role": "branchSummary", "summary": EVIL, "fromId": EVIL, "timestamp": 6})
    store.append_message({"role": EVIL, "content": EVIL, "timestamp": 7})
    store.append_session_info(name=EVIL)
    store.append_label(target_id=first["id"], label=EVIL)
    store.append_custom(custom_type=EVIL, data={EVIL: [EVIL]})
    store.append_custom_message(custom_type=EVIL, content=[{"type": "text", "text": EVIL}], display=True)
    store.append_compaction(summary=EVIL, first_kept_entry_id=EVIL, tokens_before=1000)
    store.append_branch_summary(from_id=EVIL, summary=EVIL)
    store._append(EVIL, {EVIL: EVIL})  # an unknown type, as a newer writer or a hand edit leaves it
    return store


def test_every_field_is_escaped(tmp_path):
    store = every_field_session(tmp_path)
    page = Page(html_of(store))
    assert len(page.find("script")) == 1 and "pwned" not in page.scripts[0]  # only the page's own script
    assert not [t for t, a in page.tags if any(name.startswith("on") for name in a)]
    assert [a["src"] for a in page.find("img")] == []  # the one image has a bad media type: not shown
    assert page.text.count(EVIL) >= 25  # shown as text (highlighted code splits some copies into spans)
    assert "document.title=" in page.text
    assert page.title == EVIL  # the session name, as text


def test_text_is_escaped_even_inside_highlighted_code(tmp_path):
    store = new_store(tmp_path)
    store.append_message(user("x"))
    store.append_message(assistant([{"type": "text", "text": f"```html\n{EVIL}\n```"},
                                    {"type": "toolCall", "id": "c1", "name": "write",
                                     "arguments": {"path": "a.html", "content": EVIL}}]))
    html = html_of(store)
    assert html.count("<script") == 1 and "<img" not in html
    assert "&lt;" in html and "script" in Page(html).text


def test_entry_ids_and_timestamps_cannot_break_attributes():
    header = {"type": "session", "version": 3, "id": EVIL, "timestamp": EVIL, "cwd": EVIL}
    odd = {"type": "message", "id": EVIL, "parentId": None, "timestamp": EVIL, "message": user("hi")}
    page = Page(render_page(header, [odd], leaf_id=EVIL))
    sections = page.find("section")
    assert len(sections) == 1 and sections[0]["id"].startswith("e-x") and '"' not in sections[0]["id"]
    assert EVIL in page.text


# --- markdown and code -----------------------------------------------------------------------------------


def test_markdown_renders_and_raw_html_stays_text(tmp_path):
    store = new_store(tmp_path)
    store.append_message(user("Make a **table**\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<b>raw</b>"))
    store.append_message(assistant([{"type": "text", "text": "[ok](https://example.org) [bad](javascript:alert(1))"
                                                             " ![chart](https://example.org/c.png) ~~old~~"}]))
    page = page_of(store)
    assert page.find("strong") and len(page.find("li")) == 2 and page.find("td")
    assert not page.find("b") and "<b>raw</b>" in page.text
    assert page.find("a", href="https://example.org")
    assert not page.find("a", href="javascript:alert(1)") and "[bad](javascript:alert(1))" in page.text
    assert page.find("a", href="https://example.org/c.png") and not page.find("img")  # no fetch on open
    assert page.find("s")


def test_fenced_code_is_highlighted_with_an_embedded_stylesheet(tmp_path):
    store = new_store(tmp_path)
    store.append_message(user("code please"))
    store.append_message(assistant([{"type": "text", "text": "```python\ndef f():\n    return 1\n```\n\n"
                                                             "```nosuchlang\nplain <text>\n```"}]))
    html = html_of(store)
    page = Page(html)
    keywords = [a for t, a in page.tags if t == "span" and a.get("class") == "k"]
    assert keywords, "python keywords are wrapped in pygments spans"
    assert page.find("pre", **{"data-lang": "Python"})
    assert ".hl .k" in html  # the pygments stylesheet is in the page
    assert "plain <text>" in page.text


# --- message parts ---------------------------------------------------------------------------------------


def test_thinking_is_collapsible_and_closed(tmp_path):
    store = new_store(tmp_path)
    store.append_message(user("think"))
    store.append_message(assistant([{"type": "thinking", "thinking": "Step one, then two."},
                                    {"type": "thinking", "thinking": "", "redacted": True},
                                    {"type": "text", "text": "Answer."}]))
    page = page_of(store)
    thinking = [a for t, a in page.with_class("thinking") if t == "details"]
    assert len(thinking) == 2 and all("open" not in a for a in thinking)
    assert "Step one, then two." in page.text and "Thinking (redacted)" in page.text


def test_assistant_shows_model_usage_and_errors(tmp_path):
    store = new_store(tmp_path)
    store.append_message(user("hi"))
    store.append_message(assistant([{"type": "text", "text": "partial"}], stopReason="error",
                                   errorMessage="Provider returned 529", durationMs=1500))
    store.append_message(assistant([{"type": "text", "text": "cut"}], stopReason="aborted"))
    text = page_of(store).text
    for part in ("fake/fake-model", "in 1,200", "out 34", "$0.0041", "1.5 s", "Error: Provider returned 529",
                 "Aborted."):
        assert part in text
    assert "Usage (all branches)" in text and "2,400 in, 68 out, $0.0082" in text


def test_tool_calls_and_results_per_tool(tmp_path):
    store = new_store(tmp_path)
    store.append_message(user("work"))
    diff = "--- a.py\n+++ a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2"
    store.append_message(assistant([
        {"type": "toolCall", "id": "b1", "name": "bash", "arguments": {"command": "ls -la | wc -l"}},
        {"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "src/app.py", "offset": 3}},
        {"type": "toolCall", "id": "e1", "name": "edit", "arguments": {
            "path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}},
        {"type": "toolCall", "id": "g1", "name": "grep", "arguments": {"pattern": "needle"}},
    ], stopReason="toolUse"))
    store.append_message(tool_result("b1", "bash", "\x1b[32mgreen\x1b[0m 42"))
    store.append_message(tool_result("r1", "read", "import os\nprint(os.getcwd())\n"))
    store.append_message(tool_result("e1", "edit", "Successfully replaced 1 block in a.py.",
                                     details={"diff": diff, "firstChangedLine": 1}))
    store.append_message(tool_result("g1", "grep", "", isError=True))
    page = page_of(store)
    text = page.text
    assert "green 42" in text and "\x1b" not in text  # terminal colours removed
    assert "src/app.py (offset 3)" in text and '"pattern": "needle"' in text
    assert page.find("pre", **{"data-lang": "Python"})  # read result highlighted by the file's extension
    assert len(page.find("pre", **{"data-lang": "Diff"})) == 2  # the edit call and the result's details.diff
    assert [t for t, a in page.with_class("gi")] and "+x = 2" in text
    assert "Tool result: grep (error)" in text and "(no output)" in text
    assert page.with_class("error-result")


def test_images_become_data_urls_and_bad_ones_notes(tmp_path):
    store = new_store(tmp_path)
    png = png_base64()
    store.append_message(user("look", {"type": "image", "mimeType": "image/png", "data": png},
                              {"type": "image", "mimeType": "text/html", "data": png},
                              {"type": "image", "mimeType": "image/png", "data": "not base64!"}))
    store.append_message(assistant([{"type": "toolCall", "id": "r", "name": "read", "arguments": {"path": "a.png"}}]))
    store.append_message({"role": "toolResult", "toolCallId": "r", "toolName": "read", "isError": False,
                          "timestamp": 3, "content": [{"type": "text", "text": "Read image file [image/png]"},
                                                      {"type": "image", "mimeType": "image/png", "data": png}]})
    page = page_of(store)
    assert [a["src"] for a in page.find("img")] == [f"data:image/png;base64,{png}"] * 2
    assert "media type 'text/html'" in page.text and "its data is not base64" in page.text


def test_other_roles_and_entry_types(tmp_path):
    store = new_store(tmp_path)
    first = store.append_message(user("start"))
    store.append_message({"role": "bashExecution", "command": "make test", "output": "FAILED", "exitCode": 2,
                          "cancelled": False, "truncated": False, "timestamp": 4})
    store.append_label(target_id=first["id"], label="checkpoint")
    store.append_session_info(name="Fix the build")
    store.append_compaction(summary="Earlier: *setup*", first_kept_entry_id=first["id"], tokens_before=51234)
    store._append("future_kind", {"payload": {"x": 1}})  # a type from a newer writer
    text = page_of(store).text
    for part in ("Shell command (user)", "make test", "Exit code 2", "checkpoint", "Session name: Fix the build",
                 "Compaction", "51,234 tokens before", "Entry: future_kind", '"payload"'):
        assert part in text, part
    assert page_of(store).title == "Fix the build"


def test_a_failing_renderer_still_shows_the_entry(tmp_path, monkeypatch):
    store = new_store(tmp_path)
    store.append_message(user("keep me visible"))

    def broken(message, context):
        raise KeyError("boom")

    monkeypatch.setattr(entries_module, "message_card", broken)
    text = page_of(store).text
    assert "Entry that could not be rendered (KeyError)" in text and "keep me visible" in text


# --- the tree --------------------------------------------------------------------------------------------


def branched_session(tmp_path: Path) -> tuple[SessionStore, dict[str, str]]:
    """root user → a1 (abandoned: a1 → u2 → a2, and a nested fork at u2 → a2b) ; root → b1 (active leaf)."""
    store = new_store(tmp_path)
    ids = {"root": store.append_message(user("root question"))["id"]}
    ids["a1"] = store.append_message(assistant([{"type": "text", "text": "first try"}]))["id"]
    ids["u2"] = store.append_message(user("follow-up on the first try"))["id"]
    ids["a2"] = store.append_message(assistant([{"type": "text", "text": "deep answer"}]))["id"]
    store.set_leaf(ids["u2"])
    ids["a2b"] = store.append_message(assistant([{"type": "text", "text": "nested alternative"}]))["id"]
    store.set_leaf(ids["root"])
    ids["b1"] = store.append_message(assistant([{"type": "text", "text": "second try"}]))["id"]
    return store, ids


def test_every_branch_appears_with_the_active_one_as_main_line(tmp_path):
    store, ids = branched_session(tmp_path)
    html = html_of(store)
    page = Page(html)
    anchors = [a["id"] for t, a in page.tags if t == "section"]
    assert sorted(anchors) == sorted(f"e-{i}" for i in ids.values())  # every entry, exactly once
    main = html.split('<details class="branch">')[0] + html.rsplit("</details>", 1)[1]
    assert f'id="e-{ids["b1"]}"' in main and f'id="e-{ids["a1"]}"' not in main
    assert html.index(f'id="e-{ids["root"]}"') < html.index("Other branch") < html.index(f'id="e-{ids["b1"]}"')
    assert "Other branch: 4 entries · “first try”" in page.text and "Other branch: 1 entry" in page.text
    assert html.count('<details class="branch">') == 2
    leaf = [a for t, a in page.with_class("leaf")]
    assert [a["id"] for a in leaf] == [f"e-{ids['b1']}"]
    assert "2 other branches" in page.text


def test_orphans_extra_roots_and_cycles_all_appear():
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/p"}

    def entry(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
        return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "t", "message": user(text)}

    items = [entry("r1", None, "first root"), entry("o1", "missing", "orphan"), entry("c1", "c2", "cycle one"),
             entry("c2", "c1", "cycle two"), entry("k1", "r1", "child")]
    page = Page(render_page(header, items, leaf_id="k1"))
    assert sorted(a["id"] for t, a in page.tags if t == "section") == ["e-c1", "e-c2", "e-k1", "e-o1", "e-r1"]
    assert "Entries outside the tree" in page.text


def test_a_long_session_and_deep_nesting_render_without_recursion(tmp_path):
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/p"}
    items, parent = [], None
    for number in range(3000):  # a fork at every step: branches nested 1500 deep
        items.append({"type": "message", "id": f"n{number}", "parentId": parent, "timestamp": "t",
                      "message": user(f"m{number}")})
        parent = f"n{number - 1}" if number % 2 else f"n{number}"
    html = render_page(header, items, leaf_id="n2999")
    assert html.count("<section") == 3000


# --- unicode and the written file ------------------------------------------------------------------------


def test_unicode_survives_and_the_file_is_valid_utf8(tmp_path):
    store = new_store(tmp_path)
    text = "naïve café — 日本語 — עברית — 🚀🇫🇷 — line\u2028sep"
    store.append_message(user(text + " bad\ud800surrogate and \x00\x07 controls"))
    store.append_message(assistant([{"type": "text", "text": "```python\nprint('🚀')\n```"}]))
    path = export_store(store, "out.html", cwd=tmp_path)
    data = path.read_bytes()
    decoded = data.decode("utf-8")  # strict: raises on invalid UTF-8
    assert text in Page(decoded).text and "🚀" in decoded
    assert "bad\ufffdsurrogate" in decoded and "\x00" not in decoded and "\x07" not in decoded
    assert decoded.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in decoded


def test_no_external_resources_and_a_strict_csp(tmp_path):
    store = every_field_session(tmp_path)
    store.append_message(assistant([{"type": "text", "text": "![x](https://example.org/t.png) <https://a.b/c>"}]))
    page = Page(html_of(store))
    for tag, attr in (("img", "src"), ("script", "src"), ("link", "href"), ("iframe", "src"), ("source", "src")):
        for attrs in page.find(tag):
            value = attrs.get(attr) or ""
            assert not value.startswith(("http:", "https:", "//")), (tag, value)
    assert not page.find("link") and not page.find("iframe")
    csp = page.find("meta", **{"http-equiv": "Content-Security-Policy"})[0]["content"]
    assert "default-src 'none'" in csp and "img-src data:" in csp and "'sha256-" in csp


# --- exporter: checks and paths --------------------------------------------------------------------------


def test_export_writes_default_name_relative_and_directory_targets(tmp_path):
    store = new_store(tmp_path)
    store.append_message(user("hi"))
    default = export_store(store, cwd=tmp_path)
    assert default == tmp_path / f"agent-forge-session-{store.path.stem}.html" and default.is_file()
    assert default.name == default_output_name(SessionSnapshot.of_store(store))
    (tmp_path / "sub").mkdir()
    relative = export_store(store, "sub/page.html", cwd=tmp_path)
    assert relative == tmp_path / "sub" / "page.html" and relative.is_file()
    (tmp_path / "dir").mkdir()
    into_dir = export_store(store, tmp_path / "dir", cwd=tmp_path)
    assert into_dir.parent == tmp_path / "dir" and into_dir.name.startswith("agent-forge-session-")
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary files left behind


def test_export_errors(tmp_path):
    empty = new_store(tmp_path)
    empty.append_model_change("fake", "m")  # entries, but no message
    with pytest.raises(ExportError, match="no messages"):
        export_store(empty, cwd=tmp_path)
    memory = SessionStore.in_memory(tmp_path)
    memory.append_message(user("hi"))
    with pytest.raises(ExportError, match="in-memory session"):
        export_store(memory, cwd=tmp_path)
    live = new_store(tmp_path)
    live.append_message(user("hi"))
    with pytest.raises(ExportError, match=r"Cannot write .*missing-dir.*No such file or directory"):
        export_store(live, tmp_path / "missing-dir" / "x.html", cwd=tmp_path)
    with pytest.raises(ExportError, match="not found"):
        export_session_file(tmp_path / "nope.jsonl", cwd=tmp_path)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not a session\n")
    with pytest.raises(ExportError, match="no valid session header"):
        export_session_file(garbage, cwd=tmp_path)


def test_export_session_file_matches_the_live_export(tmp_path):
    store, ids = branched_session(tmp_path)
    live = Page(export_store(store, "live.html", cwd=tmp_path).read_text("utf-8"))
    from_file = Page(export_session_file(store.path, "file.html", cwd=tmp_path).read_text("utf-8"))
    sections = sorted(a["id"] for t, a in live.tags if t == "section")
    assert sections == sorted(a["id"] for t, a in from_file.tags if t == "section") and len(sections) == len(ids)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent_forge", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "AGENT_FORGE_DIR": str(cwd)})


def test_cli_export_writes_and_exits(tmp_path):
    store = new_store(tmp_path)
    store.append_message(user("from the command line"))
    done = run_cli("--export", str(store.path), "cli.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == tmp_path / "cli.html"
    assert "from the command line" in Page((tmp_path / "cli.html").read_text("utf-8")).text
    default = run_cli("--export", str(store.path), cwd=tmp_path)
    assert default.returncode == 0 and Path(default.stdout.strip()).parent == tmp_path
    missing = run_cli("--export", str(tmp_path / "gone.jsonl"), cwd=tmp_path)
    assert missing.returncode == 1 and "session file not found" in missing.stderr and not missing.stdout
    extra = run_cli("--export", "a", "b", "c", cwd=tmp_path)
    assert extra.returncode == 2 and "at most one output path" in extra.stderr


# --- exporter: what is at the output path ----------------------------------------------------------------


def exportable(tmp_path: Path) -> SessionStore:
    store = new_store(tmp_path)
    store.append_message(user("the page"))
    return store


def test_a_symlinked_output_writes_the_links_target_and_keeps_the_link(tmp_path):
    store = exportable(tmp_path)
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "page.html"
    target.write_text("old")
    (tmp_path / "link.html").symlink_to(target)
    (tmp_path / "dangling.html").symlink_to(tmp_path / "real" / "new.html")
    written = export_store(store, "link.html", cwd=tmp_path)
    assert written == target and (tmp_path / "link.html").is_symlink()
    assert "the page" in Page(target.read_text("utf-8")).text
    assert export_store(store, "dangling.html", cwd=tmp_path) == tmp_path / "real" / "new.html"
    assert (tmp_path / "dangling.html").is_symlink() and (tmp_path / "real" / "new.html").is_file()
    assert not list(tmp_path.rglob(".*.tmp"))


def special_file(tmp_path: Path, kind: str) -> Path:
    """A FIFO, a socket, a character device (root only: mknod) or a symlink loop named `out.html`."""
    path = tmp_path / "out.html"
    if kind == "FIFO":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    elif kind == "character device":
        if os.geteuid() != 0:
            pytest.skip("creating a device node needs root")
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    else:
        path.symlink_to(tmp_path / "loop.html")
        (tmp_path / "loop.html").symlink_to(path)
    return path


@pytest.mark.parametrize("kind", ["FIFO", "socket", "character device", "symbolic link"])
def test_an_output_that_is_not_a_regular_file_is_refused_and_left_alone(tmp_path, kind):
    store = exportable(tmp_path)
    path = special_file(tmp_path, kind)
    before = os.lstat(path)
    with pytest.raises(ExportError, match=f"is a {kind}.*not a regular file"):
        export_store(store, path, cwd=tmp_path)
    after = os.lstat(path)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert not list(tmp_path.glob(".*.tmp"))


def test_an_existing_file_keeps_its_permissions_and_a_new_one_is_private(tmp_path):
    store = exportable(tmp_path)
    shared = tmp_path / "shared.html"
    shared.write_text("old")
    shared.chmod(0o644)
    export_store(store, shared, cwd=tmp_path)
    assert shared.stat().st_mode & 0o7777 == 0o644 and "the page" in shared.read_text("utf-8")
    fresh = export_store(store, "fresh.html", cwd=tmp_path)
    assert fresh.stat().st_mode & 0o7777 == 0o600


def test_the_session_file_itself_is_never_overwritten(tmp_path):
    store = exportable(tmp_path)
    before = store.path.read_bytes()
    (tmp_path / "to-session.html").symlink_to(store.path)
    for output in (store.path, tmp_path / "to-session.html"):
        with pytest.raises(ExportError, match="is the session file being exported"):
            export_store(store, output, cwd=tmp_path)
        with pytest.raises(ExportError, match="is the session file being exported"):
            export_session_file(store.path, output, cwd=tmp_path)
    assert store.path.read_bytes() == before


def test_cli_export_refuses_a_fifo(tmp_path):
    store = exportable(tmp_path)
    os.mkfifo(tmp_path / "pipe.html")
    done = run_cli("--export", str(store.path), "pipe.html", cwd=tmp_path)
    assert done.returncode == 1 and "is a FIFO, not a regular file" in done.stderr and not done.stdout
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe.html").st_mode)
