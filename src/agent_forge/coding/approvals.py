"""The approval policy: which tool calls run without asking, in every mode (docs/rpc.md, "Approvals").

Policies (`POLICIES`): `full` runs every call (the default: today's behaviour); `ask` runs read-only tools and
asks the session's `approver` before any other call (write, edit, bash, MCP and plugin tools that do not declare
themselves read-only); `read-only` refuses those calls. A tool is read-only when it says so (`read_only = True`:
the built-in read, grep, find, ls and read_mcp_resource; an MCP tool annotated `readOnlyHint`; a plugin tool
registered with `read_only=True`).

The session's one tool gate (`ToolGate`, the agent's `before_tool_call`) runs the plugins' `tool_call` handlers
first (they may change the arguments or block the call), then asks about the call as it will run. A refused or
rejected call fails with a reason the model sees, and the turn goes on. Abort cancels a pending question with
its tool call (the question is awaited inside the call's task).

"Allow always" is remembered for the rest of the conversation (a new, switched, forked or cloned session forgets
it): for a tool, every later call of that tool; for `bash`, later commands starting with the same first two
words (`git status`, `npm test`), and only for simple commands (`bash_prefix`): a command holding shell
operators, substitutions or redirections (`;`, `&`, `|`, `<`, `>`, `(`, `)`, `$`, a backquote, a backslash or a
line break) is asked about every time, and "always" is not offered for it. Nor is it for a command whose
first word runs other commands or code (`WRAPPERS`: shells, `env`, `sudo`, `xargs`, `timeout`, ...; an
interpreter such as `python` or `node` followed by an option, as in `python -c`, `node -e`), nor for one that
starts with a variable assignment (`FOO=1 cmd`): its first two words would cover any command. A command
longer than `MAX_SIMPLE_COMMAND` characters is not simple either (splitting words with `shlex` takes time
quadratic in a word's length, on the event loop: a 5 MB one-word command froze the agent).
"""

from __future__ import annotations

import copy
import os
import re
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable, Mapping, NamedTuple, Protocol, TypedDict

from .paths import path_text
from .settings import APPROVAL_POLICIES as POLICIES

# asyncio is imported once a call is asked about, not with the command line's `--approvals` (`POLICIES`): ACP
# mode answers `initialize` before the event loop is imported (start-up budget, docs/acp.md).
if TYPE_CHECKING:
    import asyncio

    from ..agent.agent import Agent
    from ..agent.types import AgentTool
    from ..ai.types import JsonValue, ToolCall
    from .hooks import SessionHooks

REJECTED = "The user rejected this"
"""How the result of a call the user rejected begins (the terminal UI shows such a call as `rejected`)."""
_SAID, _UNCHANGED = " The user said: ", " Do not retry it unchanged; ask or try another way."


def rejection_reason(result_text: str) -> str | None:
    """What the user said when rejecting the call whose result is `result_text` (None when nothing): the
    terminal UI shows it beside `rejected`, a resumed session's call included."""
    if not result_text.startswith(REJECTED) or _SAID not in result_text:
        return None
    return result_text.split(_SAID, 1)[1].removesuffix(_UNCHANGED).strip() or None

ALLOW_ONCE, ALLOW_ALWAYS, REJECT = "allow_once", "allow_always", "reject"
CHOICES = (ALLOW_ONCE, ALLOW_ALWAYS, REJECT)
READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls", "read_mcp_resource"})
"""The built-in read-only tools: what a bare `Approvals` (no `tools`) lets run; a session asks its tools."""
KINDS = {"read": "read", "ls": "read", "read_mcp_resource": "read", "write": "edit", "edit": "edit",
         "bash": "execute", "grep": "search", "find": "search"}
"""Tool name → kind (the ACP `ToolKind` values); tools not listed are `fetch` when named so, else `other`."""
MAX_TITLE = 120
MAX_SIMPLE_COMMAND = 1000
"""Characters: a longer bash command is never covered by "always" (nor offered it), and is split into no words."""
_SHELL_SPECIAL = set(";&|<>()$`\\\n\r")
NO_APPROVER = "no one can answer the question here"
WRAPPERS = frozenset({
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "env", "sudo", "doas", "su",
    "run0", "pkexec", "xargs", "parallel", "nice", "ionice", "renice", "timeout", "nohup", "command", "builtin",
    "exec", "eval", "source", ".", "time", "stdbuf", "setsid", "chroot", "nsenter", "unshare", "flock",
    "watch", "strace", "ltrace", "script", "taskset", "chrt", "systemd-run", "firejail", "fakeroot", "xvfb-run",
    "caffeinate", "unbuffer", "expect", "ssh", "docker", "podman", "kubectl", "npx", "uvx", "pipx", "bunx"})
"""First words that run another command (or code) given as their arguments: "always" is never offered."""
_INTERPRETER = (r"(python|pypy|node|nodejs|deno|bun|perl|ruby|php|lua|luajit|tclsh|wish|osascript|"
                r"pwsh|powershell|awk|gawk|mawk|nawk|sed|R|Rscript|julia|groovy|scala|java|jshell|"
                r"erl|elixir|iex|ghc|runghc|guile|racket|sbcl|clisp|swift|kotlin)[0-9.]*(\.exe)?")
_ASSIGNMENT = r"[A-Za-z_][A-Za-z0-9_]*="
# Patterns, compiled (and cached by `re`) at their first use: start-up imports this module for its names.


class ApprovalRequest(TypedDict):
    """One question: the call (`id`, `name`, `arguments` as the tool will run them), a one-line `title`
    (`bash: git status`, `write src/a.py`), its `kind` (read, edit, execute, search, fetch, other) and `always`:
    what "allow always" would remember, in words (`the write tool`, `bash commands starting with "git
    status"`), or None when it is not offered (a bash command that is not simple)."""

    id: str
    name: str
    arguments: dict[str, JsonValue]
    title: str
    kind: str
    always: str | None


class Decision(NamedTuple):  # not a dataclass: `dataclasses` (with `inspect`) would load with the CLI's flags
    """An approver's answer: `choice` is one of `CHOICES`; `reason` (with REJECT) is shown to the model."""

    choice: str
    reason: str | None = None
    answered: bool = True
    """False: nobody answered (the question was cancelled, timed out, or the client went away): `reason` says
    which, and the refusal tells the model no one approved the call, rather than that the user rejected it."""


MAX_REASON_CHARS = 2_000
"""A rejection's reason goes into the model's context: a pasted 200 KB log must not (any mode, any approver)."""


def _capped(reason: str) -> str:
    if len(reason) <= MAX_REASON_CHARS:
        return reason
    return f"{reason[:MAX_REASON_CHARS]} [... cut: the reason has {len(reason):,} characters, the first " \
           f"{MAX_REASON_CHARS:,} are shown]"


class Approver(Protocol):
    """Asks a person about one call. Any async function of an `ApprovalRequest` returning a `Decision` (or
    just its `choice` string) will do. Cancellation (abort) must propagate; anything else it raises rejects."""

    def __call__(self, request: ApprovalRequest) -> Awaitable[Decision | str]: ...


def check_policy(policy: object) -> str:
    """`policy` when it is one of POLICIES; else ValueError naming them."""
    if policy not in POLICIES:
        raise ValueError(f"Unknown approval policy {policy!r}; use one of {', '.join(POLICIES)}")
    return str(policy)


def tool_kind(name: str) -> str:
    return KINDS.get(name) or ("fetch" if "fetch" in name.lower() else "other")


def tool_title(name: str, args: Mapping[str, object]) -> str:
    """One line naming the call: `bash: <first line of the command>`, `write <path>`, else the tool name; each
    outside part through `path_text` (a path's newline would split the line, its escape drive a terminal)."""
    if name == "bash":
        lines = str(args.get("command") or "").strip().splitlines() or [""]
        title = f"bash: {path_text(lines[0])}" + (" …" if len(lines) > 1 else "")
    elif isinstance(args.get("path"), str):
        title = f"{path_text(name)} {path_text(args['path'])}"
    else:
        title = path_text(name)
    return title if len(title) <= MAX_TITLE else title[:MAX_TITLE - 1] + "…"


def bash_prefix(command: object) -> tuple[str, ...] | None:
    """The words "allow always" remembers for a bash command (its first two), or None when the command is not
    simple (shell operators, substitutions, redirections, line breaks; unbalanced quotes; no words) or its
    first words would cover any command (`runs_others`)."""
    words = _simple_words(command)
    return None if not words or runs_others(words) else tuple(words[:2])


def _simple_words(command: object) -> list[str] | None:
    """The words of a simple command, None when it is not one (or is over `MAX_SIMPLE_COMMAND` characters,
    checked first: the rest costs time linear in that bound)."""
    if not isinstance(command, str) or len(command) > MAX_SIMPLE_COMMAND or _SHELL_SPECIAL & set(command):
        return None
    import shlex  # not at import: RPC's first answer reads the approval policy setting (rpc/early.py)

    try:
        return shlex.split(command)
    except ValueError:
        return None


def runs_others(words: list[str]) -> bool:
    """True when a command's first words run whatever follows: a wrapper (`WRAPPERS`, by the program's base
    name), an interpreter followed by an option (`python -c`, `node -e`, `perl -e`, `awk -f`), or a leading
    variable assignment (`FOO=1 bash ...`)."""
    program = os.path.basename(words[0])
    if program in WRAPPERS or re.match(_ASSIGNMENT, words[0]):
        return True
    return bool(re.fullmatch(_INTERPRETER, program)) and (len(words) < 2 or words[1].startswith("-"))


def is_read_only(tool: object) -> bool:
    return getattr(tool, "read_only", False) is True


class Approvals:
    """One session's policy (`policy`, changed with `set_policy`), its `approver` (None: nobody can answer, and
    `no_approver` says why in the refusal) and what "allow always" remembered (`forget` clears it: the session
    calls it on every change of its store). `tools()` gives the session's tools (to find which are read-only).
    `on_refused(request, why)` hears of each call the policy refused without asking anyone (`read-only`, or `ask`
    with no approver), `why` being the refusal the model gets: a front end with no one to ask tells its user."""

    def __init__(self, policy: str = "full", approver: Approver | None = None, *,
                 tools: Callable[[], Iterable[AgentTool]] = lambda: ()):
        self.policy = check_policy(policy)
        self.approver = approver
        self.no_approver = NO_APPROVER
        self._tools = tools
        self.on_refused: Callable[[ApprovalRequest, str], None] = lambda request, why: None
        self._always: set[object] = set()
        self._pending: set[asyncio.Future[Any]] = set()
        self._withdrawn: set[asyncio.Future[Any]] = set()

    @classmethod
    def for_session(cls, agent: Agent, hooks: Callable[[], SessionHooks]) -> Approvals:
        """The approvals of a session whose agent is `agent`: policy `full`, no approver; made the agent's tool
        gate (`ToolGate`, with `hooks()` read at each call since plugins replace them)."""
        approvals = cls(tools=lambda: agent.tools)
        agent.before_tool_call = ToolGate(hooks, approvals)
        return approvals

    def set_policy(self, policy: object) -> None:
        """Raises ValueError for a policy not in POLICIES. What "always" remembered is kept. Leaving `ask`
        withdraws the questions still waiting: the new policy decides their calls (an answer that comes later
        is ignored)."""
        self.policy = check_policy(policy)
        if self.policy != "ask":
            for question in list(self._pending):
                self._withdrawn.add(question)
                question.cancel()

    def remembered(self) -> list[str]:
        """What "allow always" remembered in this conversation: tool names and `bash: <prefix>` entries."""
        return sorted(k if isinstance(k, str) else "bash: " + " ".join(k[1]) for k in self._always)

    def would_ask(self, name: str, args: Mapping[str, object]) -> bool:
        """Whether `check` would ask the approver about a call of `name` with `args` now (a client shows such a
        call as waiting for approval, not as running)."""
        return (self.policy == "ask" and self.approver is not None and not self._read_only(name)
                and not self._allowed(name, args))

    async def check(self, call: ToolCall) -> str | None:
        """None when `call` (`{id, name, arguments}`) may run, else why not (its error result). Under `ask`,
        `call["arguments"]` is replaced by a deep copy taken before the question: what runs is what was shown."""
        name = str(call.get("name"))
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        if self.policy == "full" or self._read_only(name):
            return None
        if self.policy == "read-only":
            return self._refused(call, name, args, (
                f"Not run: the session is read-only (approvals: read-only), so the {name} tool may not run. "
                "Only tools that read run now."))
        if isinstance(call.get("arguments"), dict):  # the call runs exactly what is checked and shown: a plugin
            args = call["arguments"] = copy.deepcopy(args)  # (its thread) may still hold and change the old dict
        key = self._key(name, args)
        if self._allowed(name, args):
            return None
        if self.approver is None:
            return self._refused(call, name, args, (
                f"Not run: the {name} call needs approval (approvals: ask), and {self.no_approver}. "
                "Do not retry it."))
        decision = await self._ask(call, name, args, key)
        if self.policy != "ask":  # changed while the question waited: the policy in force now decides
            return await self.check(call)
        if decision.choice == ALLOW_ALWAYS and key is not None:
            self._always.add(key)
        if decision.choice in (ALLOW_ONCE, ALLOW_ALWAYS):
            return None
        if not decision.answered:
            return (f"Not run: the {name} call needs approval (approvals: ask), and the question got no "
                    f"answer{f' ({decision.reason})' if decision.reason else ''}.")
        why = f"{_SAID}{_sentence(_capped(decision.reason.strip()))}" if decision.reason and \
            decision.reason.strip() else ""
        return f"{REJECTED} {name} call.{why}{_UNCHANGED}"

    def install(self, agent: Agent) -> None:
        """Check every call of a bare `agent` after its current `before_tool_call` (a session has its own gate,
        `ToolGate`, which uses `session.approvals`: set its policy and approver instead)."""
        before = agent.before_tool_call
        self._tools = lambda: getattr(agent, "tools", ())

        async def checked(call: ToolCall) -> str | None:
            if before is not None and (blocked := await before(call)) is not None:
                return blocked
            return await self.check(call)

        agent.before_tool_call = checked

    def _refused(self, call: ToolCall, name: str, args: dict[str, Any], why: str) -> str:
        self.on_refused(_request(call, name, args, None), why)
        return why

    async def _ask(self, call: ToolCall, name: str, args: dict[str, JsonValue], key: object) -> Decision:
        request = _request(call, name, args, key)
        import asyncio

        assert self.approver is not None
        question = asyncio.ensure_future(self.approver(request))
        self._pending.add(question)
        try:
            answer = await question
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if question in self._withdrawn and not (current and current.cancelling()):
                return Decision(REJECT, "withdrawn: the approval policy changed", answered=False)
            raise
        except Exception as exc:  # an approver's bug rejects (fail-safe); cancellation propagates
            return Decision(REJECT, f"(the question failed: {type(exc).__name__}: {exc})")
        finally:
            self._pending.discard(question)
            self._withdrawn.discard(question)
        if isinstance(answer, str):
            answer = Decision(answer)
        if not isinstance(answer, Decision) or answer.choice not in CHOICES:
            return Decision(REJECT)
        return answer

    def _read_only(self, name: str) -> bool:
        """The session's tool `name` declares itself read-only; without tools, `name` is a built-in read tool."""
        tools = [tool for tool in self._tools() if tool.name == name]
        return is_read_only(tools[0]) if tools else name in READ_ONLY_TOOLS

    def _key(self, name: str, args: Mapping[str, object]) -> object:
        if name != "bash":
            return name
        prefix = bash_prefix(args.get("command"))
        return None if prefix is None else ("bash", prefix)

    def _allowed(self, name: str, args: Mapping[str, object]) -> bool:
        if name != "bash":
            return name in self._always
        if bash_prefix(args.get("command")) is None:
            return False
        words = tuple(_simple_words(args.get("command")) or ())
        return any(isinstance(k, tuple) and words[:len(k[1])] == k[1] for k in self._always)

    def forget(self) -> None:
        """Forget what "allow always" remembered: the conversation changed (new, switched, forked, cloned
        session; also when switching back to a session where "always" was chosen)."""
        self._always.clear()


def _request(call: ToolCall, name: str, args: dict[str, Any], key: object) -> ApprovalRequest:
    return ApprovalRequest(id=str(call.get("id")), name=name, arguments=args, title=tool_title(name, args),
                           kind=tool_kind(name), always=_always_words(key))


def _always_words(key: object) -> str | None:
    if key is None:
        return None
    if isinstance(key, tuple):
        return f'bash commands starting with "{" ".join(key[1])}"'
    return f"the {key} tool"


class ToolGate:
    """The agent's `before_tool_call` for a session: the plugins' `tool_call` hook (`hooks().tool_call`), then
    the approval policy. A block reason, or None to run the call with `call["arguments"]`."""

    def __init__(self, hooks: Callable[[], SessionHooks], approvals: Approvals):
        self.hooks, self.approvals = hooks, approvals

    async def __call__(self, call: ToolCall) -> str | None:
        blocked = await self.hooks().tool_call(call)
        return blocked if blocked is not None else await self.approvals.check(call)


def _sentence(text: str) -> str:
    """`text` ended as a sentence (a full stop unless it ends in one, `!` or `?`): the user's words do not run
    into the instruction that follows them."""
    return text if text.endswith((".", "!", "?")) else text + "."
