"""Test support code: the loopback fake LLM server (`support.fake_llm`) and its own tests."""
