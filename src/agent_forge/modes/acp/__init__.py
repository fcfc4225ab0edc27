"""Agent Client Protocol mode (`agent-forge --mode acp`): JSON-RPC 2.0 over stdio for editors (docs/acp.md)."""
