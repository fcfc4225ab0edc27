"""MCP (Model Context Protocol) servers as tool sources: configuration (`config.py`), one connection per server
(`connection.py`), the session's servers and their tools (`manager.py`, `tools.py`). Nothing here imports the
`mcp` SDK at module level: it is imported only once a configured server starts (`docs/mcp.md`)."""
