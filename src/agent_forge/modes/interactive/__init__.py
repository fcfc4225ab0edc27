"""Interactive mode: the terminal UI a person works in (prompt_toolkit live region + rich scrollback).

Imported only when stdin and stdout are terminals (`cli.py`); RPC, print and JSON mode never import
prompt_toolkit or rich (`tests/e2e/test_startup_imports.py`). Modules, one concern each:
`app` (the whole mode: `app.InteractiveMode`; start-up and output), `layout` (the live region's
windows and row counts), `input_actions` (what the keys do), `terminal` (the claimed tty, stray output, OSC 52),
`render` (rich to ANSI, cleaning), `theme`, `blocks` and `tool_blocks` (scrollback renderables), `replay`
(a session's messages as blocks), `stream` and `live` (the live region), `footer`, `editor` (buffer, history,
pastes), `completion` (`/` menu, `@` files, paths), `keymap` and `keys`, `dialogs` (plugin and own
pickers), `view` (session events to the screen), `commands`, `session_commands`, `config_commands`,
`extras` (external editor, `/copy`), `trust_prompt` (the start-up question; no prompt_toolkit).
The package imports nothing itself, so its modules can import each other without a cycle.
"""
