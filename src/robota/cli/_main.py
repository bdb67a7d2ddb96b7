"""The ``robota`` command-line entry point.

Commands:

* ``robota run PROMPT --model PREFIX:MODEL`` — one turn, streamed (``--json`` for one object);
* ``robota chat --model PREFIX:MODEL`` — an interactive session with history;
* ``robota sessions list|show|fork|rm`` — the named sessions ``--session NAME`` keeps;
* ``robota auth set|delete|status`` — API keys in the OS keychain or an owner-only file;
* ``robota serve --agent NAME=MODULE:ATTR`` — agents over HTTP (AG-UI, ``useChat``'s stream),
  ``robota.serve.create_app`` on ``--host``/``--port``; ``--mcp --agent MODULE:ATTR``: one
  agent as an MCP server;
* ``robota demo`` — the offline demo (no network, no key).

Only :mod:`argparse` and the version are imported here; each command imports what it needs
(``rich``, the providers, asyncio) when it runs, so ``robota --help`` stays fast. Every failure
is one ``error: …`` line on stderr — exit code 2 when the command cannot start as written, 1 when
a run failed, 3 when a guard stopped a run with no answer — never a traceback (see
:mod:`robota.cli._errors`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Final

from robota._version import __version__

__all__ = ["main"]

# Kept literal here (argparse choices) so the parser imports nothing; a test pins them to
# robota.EFFORT_LEVELS and the PermissionMode values.
EFFORTS: Final = ("auto", "none", "minimal", "low", "medium", "high", "xhigh", "max")
PERMISSION_MODES: Final = ("default", "plan", "accept_edits", "bypass")
KEY_PROVIDERS: Final = ("openai", "anthropic", "gemini", "openai-compatible")

_EPILOG: Final = """\
models:
  openai:MODEL                      OpenAI (key: $OPENAI_API_KEY or `robota auth set openai`)
  anthropic:MODEL                   Anthropic ($ANTHROPIC_API_KEY or `robota auth set anthropic`)
  gemini:MODEL                      Google Gemini ($GEMINI_API_KEY or `robota auth set gemini`)
  openai-compatible:MODEL --base-url URL
                                    any server speaking Chat Completions (vLLM, llama.cpp,
                                    Ollama …); the URL may come from
                                    $OPENAI_COMPATIBLE_BASE_URL instead; with --base-url, a
                                    model string naming no registered provider goes there too
  PREFIX:MODEL                      a provider registered in the robota.providers entry points

keys (the same order as in Python):
  --api-key-env VAR when given, else the vendor's variable, else the key `robota auth set VENDOR`
  stored (the OS keychain, or $XDG_CONFIG_HOME/robota/credentials.json;
  ROBOTA_CREDENTIAL_STORE=auto|keyring|file)

exit codes:
  0 done, 1 the run failed (or its session is busy: another robota process is running a
  turn of it), 2 the command cannot start as written (a bad session name included), 3 no
  answer: a guard stopped the run (the prompt does not fit the model's context window; the
  reason is on stderr), 130 cancelled (Ctrl-C)

sessions:
  --session NAME keeps the conversation under NAME and continues it next time (chat shows the
  last turns on resume). Stored in --sessions-db PATH|postgresql://DSN, else
  $ROBOTA_SESSIONS_DB, else $XDG_STATE_HOME/robota/sessions.db (~/.local/state/robota/, created
  owner-only). `robota sessions list|show|fork|rm` manage them.

settings files (Claude Code's format: permissions allow/deny/ask/defaultMode, hooks):
  WORKSPACE/.robota/settings.local.json > WORKSPACE/.robota/settings.json >
  ~/.robota/settings.json for defaultMode; rules and hooks from all of them merge and a deny
  anywhere wins; flags win over files. WORKSPACE is --workspace, else the current directory.

context window:
  --context-window N, else what the server reports (an OpenAI-compatible /v1/models, llama.cpp's
  /props), else the registered table; otherwise it is unknown and no size check is made

examples:
  robota run "What is 2+2?" --model openai:gpt-5-mini
  robota run "Weather in Paris?" --model openai:gpt-5-mini --tools mytools:get_weather --json
  robota chat --model openai-compatible:llama3 --base-url http://127.0.0.1:8080/v1
  robota chat --model openai:gpt-5-mini --session trip-plans
  robota chat --model openai:gpt-5-mini --tools builtin --workspace ~/src/project
  robota auth set openai
"""


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more (0 disables the cap)")
    return value


def _turn_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be a number of turns, 0 or more")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of tokens")
    return value


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 2.0:  # NaN fails too
        raise argparse.ArgumentTypeError("must be a number from 0 to 2")
    return value


def _cost(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value < float("inf"):  # NaN fails too
        raise argparse.ArgumentTypeError("must be a non-negative amount of US dollars")
    return value


def _agent_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", "-m", required=True, metavar="PREFIX:MODEL", help="the model to use"
    )
    parser.add_argument("--system", metavar="TEXT", help="the system prompt")
    parser.add_argument(
        "--max-rounds", type=_non_negative, metavar="N", help="model/tool rounds per turn"
    )
    parser.add_argument(
        "--effort", choices=EFFORTS, default="auto", help="reasoning effort (default: auto)"
    )
    parser.add_argument(
        "--temperature",
        type=_temperature,
        metavar="T",
        help="sampling temperature, 0 to 2 (default: the model's)",
    )
    parser.add_argument(
        "--max-output-tokens",
        type=_positive,
        metavar="N",
        help="cap on each reply's tokens (default: the model's)",
    )
    parser.add_argument(
        "--max-cost",
        type=_cost,
        metavar="USD",
        help="stop a run before it could spend more than this (the model needs a known price)",
    )
    parser.add_argument(
        "--max-tokens",
        type=_positive,
        metavar="N",
        help="stop a run before its input and output tokens together could pass N",
    )
    parser.add_argument(
        "--retries",
        type=_non_negative,
        metavar="N",
        help="try a model call that failed transiently (429, 5xx, reset) up to N more times, "
        "with backoff (default: the SDK's own retries)",
    )
    parser.add_argument(
        "--fallback",
        action="append",
        default=[],
        metavar="PREFIX:MODEL",
        help="a model to move to when the model is overloaded or unavailable (repeatable, "
        "tried in order)",
    )
    parser.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="register a tool, function or list of them (repeatable; the current directory "
        "is importable); 'builtin' registers robota.tools.builtin (Read, LS, Glob, Grep …) "
        "bound to --workspace and asks before writes and non-read-only commands",
    )
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help="the root of --tools builtin and of its path rules (default: the current "
        "directory); its .robota/settings.json and settings.local.json are read",
    )
    parser.add_argument(
        "--base-url", metavar="URL", help="the server's API root, e.g. http://127.0.0.1:8080/v1"
    )
    parser.add_argument(
        "--context-window",
        type=_positive,
        metavar="N",
        help="the model's context window in tokens (wins over what the server reports)",
    )
    parser.add_argument(
        "--api", choices=("responses", "chat"), help="which OpenAI API (openai: only)"
    )
    parser.add_argument(
        "--api-key-env", metavar="VAR", help="read the API key from this environment variable"
    )
    parser.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        help="gate tool calls by their risk class; asks are answered y/N on the terminal",
    )
    parser.add_argument(
        "--ask", action="store_true", help="ask y/N on the terminal before every tool call"
    )
    parser.add_argument(
        "--hooks",
        metavar="FILE",
        help="run the command hooks of a JSON settings file's \"hooks\" object (Claude Code's "
        "format): PreToolUse, PostToolUse, UserPromptSubmit, Stop, Notification; a prompt a "
        "hook blocks exits with 1",
    )
    parser.add_argument(
        "--session",
        metavar="NAME",
        help="keep the conversation as session NAME: resume it if it exists, create it if not",
    )
    _sessions_db_option(parser)


def _sessions_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sessions-db",
        metavar="PATH|DSN",
        help="the session store: an SQLite file or a postgresql:// DSN (default: "
        "$ROBOTA_SESSIONS_DB, else $XDG_STATE_HOME/robota/sessions.db)",
    )


def _serve(args: argparse.Namespace) -> int:
    from robota.cli._errors import CliError  # noqa: PLC0415
    from robota.cli._serve import serve_http_command, serve_mcp_command  # noqa: PLC0415

    if args.mcp:
        http_only = (args.host, args.port, args.sessions_db) != (None, None, None)
        if len(args.agent) != 1 or http_only or args.cors_origin:
            raise CliError(
                "--mcp serves one --agent MODULE:ATTR; --host, --port, --sessions-db and "
                "--cors-origin are for HTTP (use --http HOST:PORT)"
            )
        return serve_mcp_command(
            args.agent[0],
            http=args.http,
            expose_tools=args.expose_tools,
            public_hosts=args.public_host,
        )
    if args.http is not None or args.expose_tools or args.public_host:
        raise CliError(
            "--http, --expose-tools and --public-host go with --mcp; HTTP takes --host and --port"
        )
    return serve_http_command(
        args.agent,
        host="127.0.0.1" if args.host is None else args.host,
        port=8000 if args.port is None else args.port,
        sessions_db=args.sessions_db,
        cors_origins=args.cors_origin,
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="robota",
        description="Robota: an agent runtime for Python.\n"
        "Run a model with tools from the terminal, chat with one, or try the offline demo.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"robota {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="run one prompt and stream the answer",
        description="Run one turn. The answer streams to stdout; tool calls, their results,\n"
        "usage and cost go to stderr.\n\n"
        "Ctrl-C cancels the run (exit code 130). If a tool is running, the first Ctrl-C says it\n"
        "is waiting for that tool (naming it) to finish; a second Ctrl-C stops waiting: the\n"
        "tool's result is recorded as interrupted and the command exits with 130 at once.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("prompt", metavar="PROMPT", help="the message ('-' reads it from stdin)")
    _agent_options(run)
    run.add_argument(
        "--json", action="store_true", help="print one JSON object (output, usage, cost …)"
    )
    run.add_argument(
        "--attach",
        metavar="FILE",
        action="append",
        default=[],
        help="send FILE with the prompt: an image (.png .jpg .gif .webp), a PDF, or audio "
        "(.wav .mp3 .ogg .flac .aac .aiff); repeat for several",
    )

    chat = commands.add_parser(
        "chat",
        help="an interactive session with history",
        description="Chat with one agent; history is kept across turns.\n"
        "/exit or Ctrl-D leaves; Ctrl-C at the prompt leaves too. /help lists the other\n"
        "commands: /cost (tokens and cost so far), /undo (the last edit of --tools builtin).\n\n"
        "Ctrl-C during a turn cancels that turn and the prompt comes back. If a tool is running,\n"
        "the first Ctrl-C says it is waiting for that tool (naming it) to finish; a second\n"
        "Ctrl-C stops waiting: the tool's result is recorded as interrupted and the prompt\n"
        "comes back.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _agent_options(chat)

    sessions = commands.add_parser(
        "sessions",
        help="list, show, fork and delete the named sessions of --session",
        description="Manage the sessions `robota chat|run --session NAME` keeps. The store is\n"
        "--sessions-db PATH|postgresql://DSN, else $ROBOTA_SESSIONS_DB, else\n"
        "$XDG_STATE_HOME/robota/sessions.db (~/.local/state/robota/sessions.db; created\n"
        "owner-only).\n\n"
        "exit codes: 0 done, 1 the session is busy (another robota process is running a turn\n"
        "of it) or the store failed, or `rm` was answered no; 2 a bad or unknown name.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    session_actions = sessions.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = session_actions.add_parser(
        "list", help="every session: name, turns, last update, tokens, cost, title"
    )
    _sessions_db_option(listing)
    show = session_actions.add_parser("show", help="print a session's conversation")
    show.add_argument("name", metavar="NAME")
    _sessions_db_option(show)
    fork = session_actions.add_parser(
        "fork", help="copy a session's first turns into a new session (the original is kept)"
    )
    fork.add_argument("name", metavar="NAME")
    fork.add_argument(
        "--at",
        type=_turn_count,
        metavar="N",
        help="keep the first N turns (default: all of them)",
    )
    fork.add_argument("--as", dest="new_name", metavar="NEW", help="the fork's name")
    _sessions_db_option(fork)
    remove = session_actions.add_parser(
        "rm", help="delete a session (asks y/N on a terminal; --yes otherwise)"
    )
    remove.add_argument("name", metavar="NAME")
    remove.add_argument("--yes", "-y", action="store_true", help="delete without asking")
    _sessions_db_option(remove)

    auth = commands.add_parser(
        "auth",
        help="store API keys in the OS keychain or an owner-only file",
        description="Manage stored API keys. The store is the OS keychain when the keyring "
        "package has a backend, else $XDG_CONFIG_HOME/robota/credentials.json (0600); "
        "ROBOTA_CREDENTIAL_STORE=keyring|file|auto chooses. The vendor's environment variable "
        "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY) wins over a stored key.",
    )
    actions = auth.add_subparsers(dest="action", metavar="ACTION", required=True)
    store = actions.add_parser(
        "set", help="store a key (read hidden from the terminal, or a line of stdin)"
    )
    store.add_argument("provider", choices=KEY_PROVIDERS)
    remove = actions.add_parser("delete", help="remove a stored key")
    remove.add_argument("provider", choices=KEY_PROVIDERS)
    actions.add_parser("status", help="where each provider's key comes from (never the key)")

    demo = commands.add_parser(
        "demo",
        help="run the offline demo (no network, no API key)",
        description="Run a real agent loop offline; the model's replies come from a cassette.",
    )
    demo.add_argument(
        "--no-delay", action="store_true", help="print streamed text without pacing it"
    )

    serve = commands.add_parser(
        "serve",
        help="serve agents over HTTP (AG-UI, useChat's stream), or one as an MCP server (--mcp)",
        description="HTTP: serve each --agent NAME=MODULE:ATTR (a factory called once per\n"
        "session, or one robota.Agent, which serves one session) with robota.serve.create_app on\n"
        "--host/--port (127.0.0.1:8000; port 0 picks a free one; the URL goes to stderr):\n"
        "POST /agents/NAME/agui (AG-UI), POST /agents/NAME/chat (useChat), and under\n"
        "/agents/NAME/sessions/ID/: GET stream, POST cancel, POST approvals/ASK. Sessions live in\n"
        "memory, or in --sessions-db PATH|postgresql://DSN.\n"
        "MCP: --mcp --agent MODULE:ATTR serves one agent as an MCP server (one tool that runs\n"
        "it), over stdio by default, or with --http HOST:PORT over streamable HTTP at /mcp.\n"
        "A host other than loopback needs $ROBOTA_SERVE_TOKEN, sent by clients as\n"
        "'Authorization: Bearer <token>'.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--mcp", action="store_true", help="serve one agent as an MCP server")
    serve.add_argument(
        "--agent",
        required=True,
        action="append",
        metavar="NAME=MODULE:ATTR",
        help="an agent to serve over HTTP (repeatable); with --mcp: one MODULE:ATTR",
    )
    serve.add_argument("--host", help="HTTP: the address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="HTTP: the port (default 8000; 0: any free one)")
    serve.add_argument(
        "--sessions-db",
        metavar="PATH|DSN",
        help="HTTP: keep sessions in an SQLite file or a postgresql:// DSN (default: memory)",
    )
    serve.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="URL",
        help="HTTP: an origin browsers may call from (repeatable; CORS is closed without one)",
    )
    serve.add_argument("--http", metavar="HOST:PORT", help="--mcp: serve over streamable HTTP")
    serve.add_argument(
        "--public-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="--mcp --http beyond loopback: a name clients reach the server by (its Host "
        "header; repeatable). The bound address (or, on 0.0.0.0, the machine's names) is "
        "admitted already; other Host names are refused (DNS rebinding)",
    )
    serve.add_argument(
        "--expose-tools",
        action="store_true",
        help="--mcp: also expose the agent's own tools, through its permission gate (asks refused)",
    )

    web = commands.add_parser(
        "web",
        help="open a local web console to chat with an agent and watch its runs",
        description="Serve the web console for the agent --agent MODULE:ATTR names (a callable\n"
        "returning a robota.Agent — called once per session, with the console's approver when\n"
        "it takes one argument — or an Agent) on 127.0.0.1 only; the URL goes to stderr.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    web.add_argument("--agent", required=True, metavar="MODULE:ATTR")
    web.add_argument("--port", type=int, default=8765, help="the port (0 picks a free one)")

    temporal = commands.add_parser(
        "temporal",
        help="run agents as durable Temporal workflows (needs the temporal extra)",
        description="Serve agents to Temporal: their loops run as workflows, their provider "
        "calls and tool bodies as activities.",
    )
    temporal_commands = temporal.add_subparsers(dest="action", metavar="ACTION", required=True)
    worker = temporal_commands.add_parser(
        "worker",
        help="run a worker for the agents a module names, until SIGTERM or Ctrl-C",
        description="Run a Temporal worker. --agents names a mapping of agent name -> factory "
        "(a callable returning a fresh robota.Agent), e.g. myapp.agents:AGENTS.",
    )
    worker.add_argument("--agents", required=True, metavar="MODULE:ATTR")
    worker.add_argument("--task-queue", required=True, metavar="QUEUE")
    worker.add_argument(
        "--address",
        default="127.0.0.1:7233",
        help="the Temporal frontend, host:port (default 127.0.0.1:7233)",
    )
    worker.add_argument("--namespace", default="default")
    worker.add_argument(
        "--journal",
        default=None,
        metavar="sqlite:PATH|postgres:DSN",
        help="the execution journal every worker shares: exactly-once tool effects (S40)",
    )
    worker.add_argument(
        "--graceful-shutdown",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM, how long running activities may finish before they are cancelled "
        "(default 30)",
    )
    worker.add_argument(
        "--sticky-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long a run waits for this worker's cache before any worker takes it "
        "(default 10; lower it when workers come and go)",
    )
    return parser


def _dispatch(args: argparse.Namespace) -> int:
    # Each import is deferred to keep `robota --help` fast (PLC0415 below).
    if args.command == "demo":
        from robota.cli._demo import run_demo  # noqa: PLC0415

        return run_demo(sys.stdout, chunk_delay=0.0 if args.no_delay else 0.03)
    if args.command == "auth":
        from robota.cli import _auth  # noqa: PLC0415

        if args.action == "set":
            return _auth.auth_set(args.provider, out=sys.stdout)
        if args.action == "delete":
            return _auth.auth_delete(args.provider, out=sys.stdout)
        return _auth.auth_status(out=sys.stdout)
    if args.command == "temporal":
        from robota.cli._temporal import worker_command  # noqa: PLC0415

        return worker_command(
            agents=args.agents,
            task_queue=args.task_queue,
            address=args.address,
            namespace=args.namespace,
            journal=args.journal,
            graceful_shutdown=args.graceful_shutdown,
            sticky_timeout=args.sticky_timeout,
        )
    if args.command == "sessions":
        return _sessions(args)
    if args.command == "serve":
        return _serve(args)
    if args.command == "web":
        from robota.cli._serve import web_command  # noqa: PLC0415

        return web_command(args.agent, port=args.port)
    from robota.cli._build import AgentFlags  # noqa: PLC0415

    flags = AgentFlags(
        model=args.model,
        system=args.system,
        max_rounds=args.max_rounds,
        effort=args.effort,
        temperature=args.temperature,
        max_output_tokens=args.max_output_tokens,
        max_cost=args.max_cost,
        max_tokens=args.max_tokens,
        retries=args.retries,
        fallback=tuple(args.fallback),
        tools=tuple(args.tools),
        base_url=args.base_url,
        context_window=args.context_window,
        api=args.api,
        api_key_env=args.api_key_env,
        permission_mode=args.permission_mode,
        ask=args.ask,
        hooks=args.hooks,
        workspace=args.workspace,
    )
    if args.sessions_db is not None and args.session is None:
        from robota.cli._errors import CliError  # noqa: PLC0415

        raise CliError("--sessions-db names where sessions are kept; add --session NAME")
    if args.command == "run":
        from robota.cli._run import run_command  # noqa: PLC0415

        return run_command(
            flags,
            args.prompt,
            as_json=args.json,
            attach=tuple(args.attach),
            session=args.session,
            sessions_db=args.sessions_db,
        )
    from robota.cli._chat import chat_command  # noqa: PLC0415

    return chat_command(flags, session=args.session, sessions_db=args.sessions_db)


def _sessions(args: argparse.Namespace) -> int:
    from robota.cli import _sessions as sessions  # noqa: PLC0415

    if args.action == "list":
        return sessions.list_command(args.sessions_db)
    if args.action == "show":
        return sessions.show_command(args.name, args.sessions_db)
    if args.action == "fork":
        return sessions.fork_command(
            args.name, args.sessions_db, at=args.at, new_name=args.new_name
        )
    return sessions.remove_command(args.name, args.sessions_db, yes=args.yes)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``robota`` command with ``argv`` (default ``sys.argv[1:]``); return its exit code.

    Failures print one ``error: …`` line on stderr: exit code 2 for a command that cannot start
    as written (argparse's own usage errors included), 1 for a run that failed, 130 for a run
    cancelled with Ctrl-C.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    import asyncio  # noqa: PLC0415 - loaded with robota already; only its error class is used

    from robota import ConfigurationError, RobotaError  # noqa: PLC0415 - robota is loaded already
    from robota.cli._errors import INTERRUPTED, CliError, one_line  # noqa: PLC0415

    try:
        return _dispatch(args)
    except CliError as error:
        sys.stderr.write(f"error: {one_line(error.message)}\n")
        return error.exit_code
    except RobotaError as error:  # raised outside a run's own handling: setup or teardown
        sys.stderr.write(f"error: {one_line(error.message)}\n")
        return 2 if isinstance(error, ConfigurationError) else 1
    except (KeyboardInterrupt, asyncio.CancelledError):
        # The process edge: a second Ctrl-C cancelled the command's main task (see _terminal).
        sys.stderr.write("interrupted\n")
        return INTERRUPTED
