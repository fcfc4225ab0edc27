"""Test helpers for agent-forge and its plugins; nothing here is imported when the agent starts.

- `agent_forge.testing.rpc`: RPC mode in this process (`start_in_process`), driven through `RpcClient`.
- `agent_forge.testing.cli`: the command line in this process (`run_cli`), as `subprocess.run` would run it.
- `agent_forge.testing.providers`: the provider contract every wire API implementation keeps, as checks a
  provider's test suite can run against its own fake server.
"""
