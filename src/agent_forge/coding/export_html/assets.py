"""The page's own stylesheet and script, embedded inline: the export loads nothing from anywhere."""

from __future__ import annotations

CSS = """
:root { --fg: #1f2328; --muted: #656d76; --border: #d0d7de; --bg: #ffffff; --panel: #f6f8fa;
        --user: #eef6ff; --accent: #0969da; --error: #cf222e; --error-bg: #fff0f0; --tool: #fbfaf5; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); line-height: 1.5;
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "Liberation Sans", "DejaVu Sans", sans-serif; }
main { max-width: 980px; margin: 0 auto; padding: 24px 20px 64px; }
h1 { font-size: 1.5rem; margin: 0 0 6px; overflow-wrap: anywhere; }
.session-head { border-bottom: 1px solid var(--border); padding-bottom: 14px; margin-bottom: 18px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 10px 0;
         color: var(--muted); font-size: 0.88rem; }
.facts dt { font-weight: 600; } .facts dd { margin: 0; overflow-wrap: anywhere; }
.toolbar button { font: inherit; font-size: 0.85rem; padding: 3px 10px; margin-right: 6px; cursor: pointer;
                  border: 1px solid var(--border); border-radius: 6px; background: var(--panel); }
.entry { border: 1px solid var(--border); border-radius: 8px; margin: 12px 0; background: var(--bg); }
.entry.user { background: var(--user); }
.entry.tool-result, .entry.bash-execution { background: var(--tool); }
.entry.error-result { border-color: var(--error); }
.entry.leaf { box-shadow: 0 0 0 2px var(--accent); }
.entry-head { display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: baseline; padding: 6px 12px;
              border-bottom: 1px solid var(--border); font-size: 0.85rem; color: var(--muted); }
.entry-title { font-weight: 700; color: var(--fg); }
.entry-id, time { margin-left: auto; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.78rem; }
time { margin-left: 0; }
.entry-id { color: var(--muted); text-decoration: none; }
.meta { background: var(--panel); border: 1px solid var(--border); border-radius: 10px; padding: 0 7px; }
.badge, .label { border-radius: 10px; padding: 0 7px; color: #fff; background: var(--accent); }
.label { background: #8250df; }
.entry-body { padding: 4px 12px 8px; overflow-wrap: anywhere; }
.entry.event { display: flex; flex-wrap: wrap; gap: 10px; align-items: baseline; border-style: dashed;
               padding: 3px 12px; color: var(--muted); font-size: 0.85rem; }
.md p, .md ul, .md ol, .md table, .md blockquote { margin: 8px 0; }
.md table { border-collapse: collapse; } .md th, .md td { border: 1px solid var(--border); padding: 3px 8px; }
.md blockquote { border-left: 3px solid var(--border); padding-left: 10px; color: var(--muted); }
.md code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.88em; background: var(--panel);
           border-radius: 4px; padding: 1px 4px; }
pre.code { font: 0.84rem/1.45 ui-monospace, "DejaVu Sans Mono", monospace; background: var(--panel);
           border: 1px solid var(--border); border-radius: 6px; padding: 8px 10px; margin: 8px 0;
           overflow: auto; max-height: 36em; white-space: pre; }
.tool-call { border-left: 3px solid var(--accent); padding: 2px 0 2px 10px; margin: 10px 0; }
.tool-head { font-size: 0.85rem; } .tool-name { font-weight: 700; }
.tool-id { color: var(--muted); margin-left: 8px; font-family: ui-monospace, monospace; font-size: 0.75rem; }
.tool-path { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.85rem; }
details.thinking { margin: 8px 0; color: var(--muted); }
details.thinking > summary, details.more > summary { cursor: pointer; font-style: italic; }
.thinking-text { white-space: pre-wrap; border-left: 3px solid var(--border); padding-left: 10px; margin: 6px 0; }
figure.image { margin: 8px 0; }
figure.image img { max-width: 100%; max-height: 480px; border: 1px solid var(--border); }
.note { color: var(--muted); font-size: 0.85rem; margin: 4px 0; }
.error { color: var(--error); background: var(--error-bg); border-radius: 6px; padding: 4px 8px; margin: 6px 0; }
details.branch { border: 1px dashed var(--accent); border-radius: 8px; margin: 12px 0 12px 18px; padding: 4px 10px; }
details.branch > summary { cursor: pointer; color: var(--accent); font-size: 0.9rem; overflow-wrap: anywhere; }
details.unreachable { border-color: var(--error); }
.branch-body { margin-top: 6px; }
"""

SCRIPT = """
(function () {
  function setAll(open) {
    document.querySelectorAll("details").forEach(function (d) { d.open = open; });
  }
  function reveal() {
    var target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    if (target) { target.scrollIntoView(); }
  }
  document.getElementById("expand-all").addEventListener("click", function () { setAll(true); });
  document.getElementById("collapse-all").addEventListener("click", function () { setAll(false); });
  window.addEventListener("hashchange", reveal);
  reveal();
})();
"""
"""Expand/collapse all sections; following a link to an entry opens the branches that hold it."""
