"""Command line: parse arguments, build the session, run the chosen mode (imported lazily)."""

from __future__ import annotations

import argparse
import os
import sys

from . import __version__

_DESCRIPTION = "agent-forge: a coding agent for the terminal and for other programs."
_EPILOG = """modes:
  --mode rpc     JSON commands on stdin, responses and events on stdout (for editors, IDEs, bots)
  --mode json    run the prompt and print every event as a JSON line
  -p, --print    run the prompt and print the final answer

examples:
  agent-forge --mode rpc --no-session
  agent-forge -p "explain src/main.py" --model anthropic/claude-sonnet-4-5:high
  git diff | agent-forge -p "review this diff"

environment:
  ANTHROPIC_API_KEY, OPENAI_API_KEY, ...  provider keys
  AGENT_FORGE_DIR                         agent dir (default ~/.agent-forge/agent)
  AGENT_FORGE_SESSION_DIR                 session dir (default <agent dir>/sessions)
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-forge", description=_DESCRIPTION, epilog=_EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"agent-forge {__version__}")
    parser.add_argument("--mode", choices=("text", "json", "rpc"), default=None, help="output mode")
    parser.add_argument("-p", "--print", dest="print_mode", action="store_true", help="non-interactive: print answer")
    parser.add_argument("--provider", help="provider name (anthropic, openai, or one from models.json)")
    parser.add_argument("--model", help="model id or pattern; 'provider/id' and ':<thinking>' suffix accepted")
    parser.add_argument("--api-key", help="API key for the selected provider (overrides env and auth.json)")
    parser.add_argument("--thinking", help="thinking level: off, minimal, low, medium, high, xhigh, max")
    parser.add_argument("--session", help="resume this session file")
    parser.add_argument("--session-dir", help="directory for session files")
    parser.add_argument("--no-session", action="store_true", help="do not save the session")
    parser.add_argument("-n", "--name", help="session display name")
    parser.add_argument("--system-prompt", help="replace the default system prompt")
    parser.add_argument("--append-system-prompt", help="text appended to the system prompt")
    parser.add_argument("messages", nargs="*", help="prompt text; @file arguments include a file")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    mode = "rpc" if args.mode == "rpc" else ("json" if args.mode == "json" else "print")
    if mode == "print" and not args.print_mode and not args.messages and sys.stdin.isatty():
        print("agent-forge: the interactive terminal UI is not available yet; use -p, --mode json or --mode rpc.",
              file=sys.stderr)
        return 2
    import asyncio

    try:
        return asyncio.run(_run(mode, args))
    except KeyboardInterrupt:
        return 130


async def _run(mode: str, args: argparse.Namespace) -> int:
    from .coding.agent_session import CommandError, SessionOptions, create_session

    options = SessionOptions(
        cwd=os.getcwd(), provider=args.provider, model=args.model, api_key=args.api_key, thinking=args.thinking,
        session_file=args.session, session_dir=args.session_dir, no_session=args.no_session, name=args.name,
        system_prompt=args.system_prompt, append_system_prompt=args.append_system_prompt,
    )
    try:
        session = create_session(options)
    except CommandError as exc:
        print(f"agent-forge: {exc}", file=sys.stderr)
        return 1
    if mode == "rpc":
        from .modes.rpc.server import run_rpc_mode

        return await run_rpc_mode(session)
    from .modes.print_mode import run_print_mode

    return await run_print_mode(session, args.messages, json_events=(mode == "json"))
