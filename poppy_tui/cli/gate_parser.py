"""The parser entries for the approval-gate commands (`mcp`, `send`). argparse only: `--help`
stays free of the MCP SDK and the agent."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False  # typing is not loaded for parsing: see main.py
if TYPE_CHECKING:
    from typing import Any
    from collections.abc import Callable

    Command = Callable[..., argparse.ArgumentParser]


JSON_HELP = "machine-readable output (see docs/cli.md)"
COMPANY_HELP = "name, domain or URL of a known Company"
# What a shell completes a COMPANY argument with; set (to a shtab completion) only while
# `poppy-tui completion` builds its parser, so no other command imports shtab.
COMPANY_COMPLETION: object = None


def add_company_argument(
    parser: argparse.ArgumentParser, dest: str, metavar: str = "COMPANY", **kwargs: Any
) -> None:
    """A positional naming a known Company, completed in the shell with the known domains."""
    action = parser.add_argument(dest, metavar=metavar, help=COMPANY_HELP, **kwargs)
    if COMPANY_COMPLETION is not None:
        action.complete = COMPANY_COMPLETION  # type: ignore[attr-defined]  # read by shtab


HISTORY_FORMATS = ("text", "json", "ndjson", "csv")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not 0 < value <= 7 * 86400 or value != value:
        raise argparse.ArgumentTypeError(
            f"must be more than 0 and at most 604800 seconds, got {text!r}"
        )
    return value


def add_script_options(
    call: argparse.ArgumentParser,
    tool: argparse.ArgumentParser,
    say: argparse.ArgumentParser,
    companies_add: argparse.ArgumentParser,
    wait_help: str,
) -> None:
    """--json (JSON output) on the request commands, --timeout for --wait."""
    for parser in (call, tool, say):
        parser.add_argument("--json", dest="json", action="store_true", help=JSON_HELP)
        parser.add_argument(
            "--timeout",
            type=_seconds,
            metavar="SECONDS",
            help="with --wait: stop waiting after SECONDS and exit 9; the operation stays queued",
        )
    call.add_argument("--old-body-spelling", action="store_true", help=argparse.SUPPRESS)
    companies_add.add_argument("--json", action="store_true", help=JSON_HELP)


def add_history_options(history: argparse.ArgumentParser) -> None:
    history.add_argument(
        "--format",
        choices=HISTORY_FORMATS,
        help="text (default), json (as --json), ndjson (one full record per line) or csv (one row per operation); "
        "ndjson and csv export every match unless --limit is given",
    )
    history.add_argument(
        "--since",
        metavar="WHEN",
        help="only operations last changed at or after WHEN "
        "(2026-12-01 or 2026-12-01T09:00:00Z; local time if no zone)",
    )
    history.add_argument("--until", metavar="WHEN", help="only operations last changed before WHEN")


def add_gate_commands(command: Command, global_options: Callable[..., None] | None = None) -> None:
    mcp = command(
        "mcp",
        "run poppy-tui as an MCP server for AI agents (stdin/stdout, or --http)",
        "Run an MCP server on stdin/stdout (add it to an MCP client's configuration; see docs/mcp.md), or with "
        "--http on streamable HTTP, for agents in containers and on other machines (each agent needs a bearer "
        "token: 'poppy-tui mcp token --agent NAME' makes one). Its tools list Companies, make requests through their API, MCP tools "
        "and conversations, and wait for the person's decision on operations. No tool approves or declines: only "
        "the person, in the TUI.",
    )
    mcp.add_argument(
        "--http",
        action="store_true",
        help="serve MCP over streamable HTTP instead of stdin/stdout (see docs/mcp.md)",
    )
    mcp.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="with --http: where to listen (default 127.0.0.1:8765; port 0 picks a free port; "
        "[::1]:PORT for IPv6). Only loopback unless --allow-remote",
    )
    mcp.add_argument(
        "--allow-remote",
        action="store_true",
        help="with --http: allow --listen on an address other machines can reach (plaintext "
        "unless --tls-cert and --tls-key are given)",
    )
    mcp.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        default=None,
        help="with --http: also answer requests whose Host header is NAME (repeatable), e.g. "
        "host.docker.internal; others get 421",
    )
    mcp.add_argument(
        "--tls-cert",
        metavar="FILE",
        help="with --http: serve https with this PEM certificate (chain)",
    )
    mcp.add_argument(
        "--tls-key", metavar="FILE", help="with --http: the PEM private key for --tls-cert"
    )
    mcp.add_argument(
        "--agent",
        dest="stdio_agent",
        metavar="NAME",
        help="on stdin/stdout: the name of the agent this gate serves (its requests are recorded "
        "and shown as NAME's; it reads only the operations they returned). Default: 'default'",
    )
    mcp.add_argument(
        "--see-all",
        dest="stdio_see_all",
        action="store_true",
        help="on stdin/stdout: the agent reads every operation, not only its own requests'",
    )
    actions = mcp.add_subparsers(dest="mcp_command", metavar="ACTION")
    token = actions.add_parser(
        "token",
        help="make an agent's bearer token for 'mcp --http' (--agent NAME), or print the default "
        "one; --rotate replaces it",
        description="With --agent NAME: make a bearer token for the agent NAME and print it, once: only its hash "
        "is kept (in the home, readable only by you), so copy it to the agent now. --rotate gives NAME a new one "
        "(the old one is refused at once, also by a server already running, and its sessions close). "
        "--see-all lets NAME read every operation, not only those its own requests returned. Without --agent: "
        "print the token of the agent 'default' (the one token from before agents had names; made on first "
        "use, kept readable by you alone, mode 0600); --rotate replaces it.",
        allow_abbrev=False,
    )
    if global_options is not None:
        global_options(token, suppress=True)
    token.add_argument(
        "--agent",
        metavar="NAME",
        help="the agent the token is for (1 to 40 letters, digits, '.', '_' or '-')",
    )
    token.add_argument(
        "--see-all",
        action="store_true",
        help="with --agent: the agent reads every operation, not only its own requests'",
    )
    token.add_argument(
        "--rotate", action="store_true", help="make a new token; the old one stops working at once"
    )
    agents = actions.add_parser(
        "agents",
        help="list the agents that have a token: name, created, last used, operations waiting",
        description="List the gate's agents: each one with a token (the 'default' one and every 'mcp token "
        "--agent NAME'), and each stdio gate's --agent name seen in requests; when each was made, when it last "
        "called a tool, when it last made a request, what its MCP client says it is, and how many of the "
        "operations its requests returned wait for you.",
        allow_abbrev=False,
    )
    if global_options is not None:
        global_options(agents, suppress=True)
    agents.add_argument("--json", action="store_true", help=JSON_HELP)
    revoke = actions.add_parser(
        "revoke",
        help="end an agent's token at once: its next request gets 401 and its sessions close",
        description="End the token of the agent NAME: a running 'poppy-tui mcp --http' refuses it from its next "
        "request (401) and closes the agent's open sessions and waiting calls at once. Its operations stay in "
        "the queue for you. 'default' removes the default token ('poppy-tui mcp token' makes a new one).",
        allow_abbrev=False,
    )
    if global_options is not None:
        global_options(revoke, suppress=True)
    revoke.add_argument(
        "name", metavar="NAME", help="the agent (as 'poppy-tui mcp agents' lists it)"
    )
    send = command(
        "send",
        "send approved operations without the TUI, then exit (or keep watching)",
        "Run the dispatcher without the TUI: send every approved operation whose grace period has ended, "
        "retrying as usual, and exit when nothing approved is left. --watch keeps it running (for a service; "
        "see docs/cli.md for a systemd user unit and a launchd agent). It never approves anything.",
    )
    send.add_argument(
        "--watch",
        action="store_true",
        help="keep running and send approvals as they are made (until stopped)",
    )
    send.add_argument("--json", action="store_true", help=JSON_HELP)
    completion = command(
        "completion",
        "print a shell completion script (bash, zsh or fish)",
        "Print a completion script for SHELL, generated from poppy-tui's own parser. Install: see docs/cli.md "
        "(e.g. 'poppy-tui completion bash > ~/.local/share/bash-completion/completions/poppy-tui').",
    )
    completion.add_argument(
        "shell", metavar="SHELL", choices=("bash", "zsh", "fish"), help="bash, zsh or fish"
    )


# `call --json BODY` became `call --body BODY`, so that --json means JSON output everywhere.
OLD_BODY_NOTE = (
    "poppy-tui: note: 'call --json BODY' is deprecated; use 'call --body BODY' "
    "(--json alone now asks for JSON output)"
)
_OPTIONS_WITH_VALUES = {"--home", "--config", "--faults", "--body", "--timeout"}


def _looks_like_body(token: str) -> bool:
    import json

    if token == "" or token[:1] in '{["':
        return True
    if token.startswith("-") and not token[1:2].isdigit():
        return False
    try:
        json.loads(token)
    except ValueError:
        return False
    return True


def rewrite_deprecated(argv: list[str], note: Callable[[str], None] | None = None) -> list[str]:
    """The old `call ... --json BODY` (or `--json=BODY`) spelling, rewritten to `--body`, with a
    deprecation note on stderr. `--json` followed by something that isn't JSON stays the flag."""
    command = None
    out: list[str] = []
    index = 0
    rewritten = False
    while index < len(argv):
        token = argv[index]
        if token == "--":
            out += argv[index:]
            break
        if command is None and not token.startswith("-"):
            command = token
        elif token in _OPTIONS_WITH_VALUES and index + 1 < len(argv):
            out += [token, argv[index + 1]]
            index += 2
            continue
        elif command == "call" and token.startswith("--json="):
            out.append("--body=" + token[len("--json=") :])
            rewritten = True
            index += 1
            continue
        elif (
            command == "call"
            and token == "--json"
            and index + 1 < len(argv)
            and _looks_like_body(argv[index + 1])
        ):
            out += ["--body", argv[index + 1]]
            rewritten = True
            index += 2
            continue
        out.append(token)
        index += 1
    if rewritten:
        import sys

        (note or (lambda text: print(text, file=sys.stderr)))(OLD_BODY_NOTE)
        out.append("--old-body-spelling")
    return out
