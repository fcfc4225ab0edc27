"""Unified streaming LLM layer: wire types, one module per provider API, model catalogue and cost.

Imports nothing above it. Provider modules are imported lazily by `ai.registry.get_stream_function`, so
importing `agent_forge.ai` costs nothing until a request is made.
"""
