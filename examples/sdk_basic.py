"""Drive an agent-forge session from Python, offline: the scripted `faux` model stands in for a provider.

Run it with `python examples/sdk_basic.py`. The model asks for the `read` tool, gets the file's content back,
and answers; the script streams the answer, lists the tool calls and prints the session's statistics.
To use a real model, drop `set_faux_responses` and pass e.g. `model="anthropic/claude-sonnet-4-5"`.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from agent_forge.sdk import FauxResponse, create_agent_session, faux_model, set_faux_responses


def on_event(event: dict) -> None:
    """Stream text as it arrives and report tool calls (the same events RPC mode writes)."""
    if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
        print(event["assistantMessageEvent"]["delta"], end="", flush=True)
    elif event["type"] == "message_end" and event["message"]["role"] == "assistant":
        print()
    elif event["type"] == "tool_execution_start":
        print(f"[tool {event['toolName']} {event['args']}]")
    elif event["type"] == "tool_execution_end":
        print(f"[tool {event['toolName']} {'failed' if event['isError'] else 'done'}]")


async def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        Path(workdir, "notes.txt").write_text("Buy milk\nCall Ada\n")
        set_faux_responses([
            FauxResponse(text="Let me read your notes.", tool_calls=[("read", {"path": "notes.txt"})],
                         input_tokens=120, output_tokens=15),
            FauxResponse(text="Your notes say: buy milk, call Ada.", input_tokens=180, output_tokens=12),
        ])
        session = create_agent_session(cwd=workdir, model=faux_model(), no_session=True)
        unsubscribe = session.subscribe(on_event)
        await session.prompt_and_wait("What do my notes say?")
        unsubscribe()
        stats = session.get_session_stats()
        print(f"answer: {session.last_assistant_text()}")
        print(f"messages: {stats['totalMessages']}, tool calls: {stats['toolCalls']}, "
              f"tokens: {stats['tokens']['total']}")
        await session.close()


if __name__ == "__main__":
    asyncio.run(main())
