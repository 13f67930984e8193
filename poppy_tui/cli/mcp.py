"""`poppy-tui mcp`: run the MCP server for an MCP client (docs/mcp.md): on stdin/stdout, or with
`--http` on streamable HTTP; `poppy-tui mcp token [--rotate]` prints (or replaces) the token the
HTTP server requires.

On stdin/stdout, stdout carries the protocol, so nothing else may print there; poppy-tui's own
notes go to stderr. With --http, stdout gets one line, the endpoint, once it accepts requests.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import Exit

if TYPE_CHECKING:
    from poppy_tui.cli.context import Context

_HTTP_ONLY = ("listen", "allow_remote", "allow_host", "tls_cert", "tls_key")


def _given_http_options(args: argparse.Namespace) -> list[str]:
    return ["--" + name.replace("_", "-") for name in _HTTP_ONLY if getattr(args, name, None)]


def cmd_mcp(ctx: Context, args: argparse.Namespace) -> int:
    if getattr(args, "mcp_command", None) == "token":
        if getattr(args, "http", False) or _given_http_options(args):
            raise CliError(
                "'mcp token' takes only --rotate; the --http options go with 'mcp --http'",
                Exit.USAGE,
            )
        return cmd_mcp_token(ctx, args)
    if getattr(args, "http", False):
        return cmd_mcp_http(ctx, args)
    given = _given_http_options(args)
    if given:
        raise CliError(f"{', '.join(given)} work only with --http", Exit.USAGE)
    return cmd_mcp_stdio(ctx)


def cmd_mcp_stdio(ctx: Context) -> int:
    import sys

    from poppy_tui.cli.context import discover_listed, open_agent
    from poppy_tui.cli.event_loop import run
    from poppy_tui.cli.output import note
    from poppy_tui.mcp_server.server import serve_stdio

    if sys.stdin.isatty():
        note(
            "poppy-tui mcp speaks MCP on stdin/stdout: add it to an MCP client (see docs/mcp.md); Ctrl-C stops it"
        )
    agent = open_agent(ctx)

    async def session() -> None:
        try:
            if ctx.config.companies:
                await discover_listed(agent)  # as the TUI does on start; notes go to stderr
            await serve_stdio(agent)
        finally:
            await agent.aclose()

    run(session())
    return Exit.OK


def cmd_mcp_token(ctx: Context, args: argparse.Namespace) -> int:
    """The token on stdout (alone, so `$(poppy-tui mcp token)` works); where it is kept on stderr."""
    from poppy_tui.cli.output import note
    from poppy_tui.mcp_server.http_token import TokenError, read_or_create, rotate, token_path

    path = token_path(ctx.paths.ensure().data_dir)
    try:
        token = rotate(path) if args.rotate else read_or_create(path)
    except TokenError as exc:
        raise CliError(str(exc)) from None
    print(token, flush=True)
    if args.rotate:
        note(
            f"poppy-tui: a new token is in {path}; the old one is refused from now on, also by a running "
            "'poppy-tui mcp --http'. Give the new one to your agents."
        )
    else:
        note(
            f"poppy-tui: kept in {path} (only you can read it); 'poppy-tui mcp token --rotate' replaces it"
        )
    return Exit.OK


def cmd_mcp_http(ctx: Context, args: argparse.Namespace) -> int:
    from pathlib import Path

    from poppy_tui.cli.event_loop import run
    from poppy_tui.cli.output import note
    from poppy_tui.mcp_server.http_gate import (
        DEFAULT_LISTEN,
        ListenError,
        parse_listen,
        served_names,
        tls_context,
    )
    from poppy_tui.mcp_server.http_token import TokenError, TokenFile, token_path

    allowed_hosts = list(args.allow_host or [])
    try:
        listen = parse_listen(args.listen or DEFAULT_LISTEN)
        served_names(listen, allowed_hosts)  # checks each --allow-host now, before anything starts
        tls = tls_context(
            Path(args.tls_cert).expanduser() if args.tls_cert else None,
            Path(args.tls_key).expanduser() if args.tls_key else None,
        )
    except ListenError as exc:
        raise CliError(str(exc), Exit.USAGE) from None
    if not listen.loopback and not args.allow_remote:
        raise CliError(
            f"--listen {listen.host} is not a loopback address: other machines could reach the gate. Add "
            "--allow-remote if that is what you want (with --tls-cert and --tls-key, or traffic is plaintext); "
            "for an agent on another machine, 'ssh -R' keeps the gate on loopback (see docs/mcp.md)",
            Exit.USAGE,
        )
    path = token_path(ctx.paths.ensure().data_dir)
    try:
        tokens = TokenFile(path)
    except TokenError as exc:
        raise CliError(str(exc)) from None

    from poppy_tui.cli.context import discover_listed, open_agent
    from poppy_tui.mcp_server.http_gate import quiet_server_logs, serve_http

    quiet_server_logs()
    agent = open_agent(ctx)

    def started(url: str) -> None:
        print(
            f"poppy-tui mcp: serving MCP (streamable HTTP) at {url} ; it requires 'Authorization: Bearer "
            f"<token>': 'poppy-tui mcp token' prints the token (kept in {path})",
            flush=True,
        )
        if listen.every_address:
            hosts = ", ".join(sorted(served_names(listen, allowed_hosts)))
            note(
                f"poppy-tui mcp: listening on every address; requests must name one of these hosts: {hosts} "
                "(add the name or address agents use with --allow-host)"
            )
        if not listen.loopback:
            if tls is None:
                note(
                    f"poppy-tui mcp: warning: listening on {listen.address}, which other machines may reach, in "
                    "PLAINTEXT: anyone on the path can read the token and every request. Give --tls-cert and "
                    "--tls-key to serve https, or keep the gate on loopback and use 'ssh -R' (docs/mcp.md)"
                )
            else:
                note(
                    f"poppy-tui mcp: listening on {listen.address}, which other machines may reach, over TLS"
                )
        note("poppy-tui mcp: Ctrl-C stops it; waiting operations stay in the queue")

    async def session() -> None:
        try:
            if ctx.config.companies:
                await discover_listed(agent)
            await serve_http(
                agent, listen, tokens, allowed_hosts=allowed_hosts, tls=tls, started=started
            )
        finally:
            await agent.aclose()

    try:
        run(session())
    except ListenError as exc:
        raise CliError(str(exc)) from None
    note("poppy-tui mcp: stopped; anything queued stays in the queue")
    return Exit.OK
