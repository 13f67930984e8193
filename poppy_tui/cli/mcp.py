"""`poppy-tui mcp`: run the MCP server for an MCP client (docs/mcp.md): on stdin/stdout, or with
`--http` on streamable HTTP; `poppy-tui mcp token --agent NAME` makes an agent's token (printed
once), `poppy-tui mcp token [--rotate]` prints (or replaces) the `default` agent's, `poppy-tui mcp
agents` lists them, `poppy-tui mcp revoke NAME` ends one.

On stdin/stdout, stdout carries the protocol, so nothing else may print there; poppy-tui's own
notes go to stderr. With --http, stdout gets one line, the endpoint, once it accepts requests.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import Exit

if TYPE_CHECKING:
    from poppy_tui.cli.context import Context

_HTTP_ONLY = ("listen", "allow_remote", "allow_host", "tls_cert", "tls_key")
_STDIO_ONLY = {"stdio_agent": "--agent", "stdio_see_all": "--see-all"}


def _given_http_options(args: argparse.Namespace) -> list[str]:
    return ["--" + name.replace("_", "-") for name in _HTTP_ONLY if getattr(args, name, None)]


def _given_stdio_options(args: argparse.Namespace) -> list[str]:
    return [flag for name, flag in _STDIO_ONLY.items() if getattr(args, name, None)]


def cmd_mcp(ctx: Context, args: argparse.Namespace) -> int:
    action = getattr(args, "mcp_command", None)
    if action is not None:
        if getattr(args, "http", False) or _given_http_options(args) or _given_stdio_options(args):
            where = (
                "'mcp token' takes only --agent, --see-all and --rotate"
                if action == "token"
                else f"'mcp {action}' takes none of the gate's options"
            )
            raise CliError(f"{where}; the gate's own go with 'mcp' or 'mcp --http'", Exit.USAGE)
        if action == "token":
            return cmd_mcp_token(ctx, args)
        if action == "agents":
            return cmd_mcp_agents(ctx, args)
        return cmd_mcp_revoke(ctx, args)
    if getattr(args, "http", False):
        given = _given_stdio_options(args)
        if given:
            raise CliError(
                f"{', '.join(given)} work only on stdin/stdout: over --http each agent's token names it "
                "('poppy-tui mcp token --agent NAME [--see-all]')",
                Exit.USAGE,
            )
        return cmd_mcp_http(ctx, args)
    given = _given_http_options(args)
    if given:
        raise CliError(f"{', '.join(given)} work only with --http", Exit.USAGE)
    return cmd_mcp_stdio(ctx, args)


def _stdio_agent(args: argparse.Namespace) -> Any:
    from poppy_tui.agent.gate.credentials import GateAgent
    from poppy_tui.agent.gate.default_token import DEFAULT_AGENT
    from poppy_tui.agent.gate.registry import RegistryError, check_name

    name = getattr(args, "stdio_agent", None) or DEFAULT_AGENT
    try:
        check_name(name)
    except RegistryError as exc:
        raise CliError(f"--agent: {exc}", Exit.USAGE) from None
    # The person started this gate and named it: taken as given (no token on stdin/stdout).
    return GateAgent(name, bool(getattr(args, "stdio_see_all", False)), f"stdio:{name}")


def cmd_mcp_stdio(ctx: Context, args: argparse.Namespace) -> int:
    import sys

    from poppy_tui.cli.context import discover_listed, open_agent
    from poppy_tui.cli.event_loop import run
    from poppy_tui.cli.output import note
    from poppy_tui.mcp_server.server import serve_stdio

    if sys.stdin.isatty():
        note(
            "poppy-tui mcp speaks MCP on stdin/stdout: add it to an MCP client (see docs/mcp.md); Ctrl-C stops it"
        )
    stdio_agent = _stdio_agent(args)
    agent = open_agent(ctx)

    async def session() -> None:
        try:
            if ctx.config.companies:
                await discover_listed(agent)  # as the TUI does on start; notes go to stderr
            await serve_stdio(agent, stdio_agent)
        finally:
            await agent.aclose()

    run(session())
    return Exit.OK


def cmd_mcp_token(ctx: Context, args: argparse.Namespace) -> int:
    """The token on stdout (alone, so `$(poppy-tui mcp token ...)` works); the rest on stderr."""
    from poppy_tui.cli.output import note

    data_dir = ctx.paths.ensure().data_dir
    if args.agent is not None:
        from poppy_tui.agent.gate.registry import RegistryError, create, registry_path

        path = registry_path(data_dir)
        try:
            token = create(path, args.agent, see_all=args.see_all, replace=args.rotate)
        except RegistryError as exc:
            raise CliError(str(exc), Exit.USAGE) from None
        print(token, flush=True)
        reads = (
            "it reads every operation (--see-all)"
            if args.see_all
            else "it reads only the operations its own requests return"
        )
        note(
            f"poppy-tui: the token of the agent '{args.agent}' ({reads}). It is shown this once: only its hash "
            f"is kept (in {path}, readable only by you). "
            + ("The old one is refused from now on and its sessions close. " if args.rotate else "")
            + f"'poppy-tui mcp revoke {args.agent}' ends it."
        )
        return Exit.OK
    if args.see_all:
        raise CliError(
            "--see-all goes with --agent NAME: the 'default' agent reads only its own requests' operations",
            Exit.USAGE,
        )
    from poppy_tui.agent.gate.default_token import TokenError, read_or_create, rotate, token_path

    path = token_path(data_dir)
    try:
        token = rotate(path) if args.rotate else read_or_create(path)
    except TokenError as exc:
        raise CliError(str(exc)) from None
    print(token, flush=True)
    if args.rotate:
        note(
            f"poppy-tui: a new token for the agent 'default' is in {path}; the old one is refused from now on, "
            "also by a running 'poppy-tui mcp --http'. Give the new one to your agents."
        )
    else:
        note(
            f"poppy-tui: the token of the agent 'default', kept in {path} (only you can read it); "
            "'poppy-tui mcp token --rotate' replaces it. 'poppy-tui mcp token --agent NAME' gives an agent a "
            "name and a token of its own."
        )
    return Exit.OK


def cmd_mcp_agents(ctx: Context, args: argparse.Namespace) -> int:
    """Every agent: those with a token, then those the store has seen without one (stdio)."""
    from poppy_tui.agent.gate.registry import RegistryError
    from poppy_tui.agent.gate.roster import token_holders
    from poppy_tui.agent.store.requesters import RequesterStore
    from poppy_tui.cli.output import emit, note, safe_line, stamp_text, to_json
    from poppy_tui.safety.who_asked import agent_name, client_claim

    paths = ctx.paths.ensure()
    try:
        holders = token_holders(paths.data_dir)
    except RegistryError as exc:
        raise CliError(str(exc)) from None
    with RequesterStore.open(paths.database) as store:
        activity = store.gate_activity()
    listed: list[dict[str, Any]] = [
        {
            "name": h.name,
            "token": True,
            "created_at": h.created_at,
            "see_all": h.see_all,
        }
        for h in holders
    ]
    names = {h.name for h in holders}
    listed += [
        {"name": name, "token": False, "created_at": None, "see_all": None}
        for name in sorted(set(activity) - names)
    ]
    for entry in listed:
        seen = activity.get(entry["name"])
        entry["last_used_at"] = seen.last_used_at if seen else None
        entry["last_asked_at"] = seen.last_asked_at if seen else None
        entry["client"] = seen.client if seen else None
        entry["waiting"] = seen.waiting if seen else 0
    if args.json:
        emit(to_json({"agents": listed}))
        return Exit.OK
    if not listed:
        note(
            "no agents yet: 'poppy-tui mcp token --agent NAME' gives one a name and a token for "
            "'poppy-tui mcp --http' (see docs/mcp.md)"
        )
        return Exit.OK
    for entry in listed:
        kind = (
            ("token, reads every operation" if entry["see_all"] else "token")
            if entry["token"]
            else "no token (a stdio gate's --agent, or revoked)"
        )
        emit(f"{agent_name(entry['name'])}  ({kind})")
        made = f"created {stamp_text(entry['created_at'])}; " if entry["created_at"] else ""
        used = stamp_text(entry["last_used_at"]) if entry["last_used_at"] else "never"
        asked = stamp_text(entry["last_asked_at"]) if entry["last_asked_at"] else "never"
        emit(f"  {made}last used {used}; last asked {asked}; {entry['waiting']} waiting for you")
        claim = client_claim(entry["client"])
        if claim:
            emit(f"  {safe_line(claim, 120)}")
    return Exit.OK


def cmd_mcp_revoke(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.agent.gate.registry import RegistryError
    from poppy_tui.agent.gate.roster import revoke
    from poppy_tui.cli.output import note, safe_line

    try:
        ended = revoke(ctx.paths.ensure().data_dir, args.name)
    except RegistryError as exc:
        raise CliError(str(exc)) from None
    if not ended:
        raise CliError(
            f"no agent {safe_line(args.name, 60)!r} has a token; 'poppy-tui mcp agents' lists them",
            Exit.ERROR,  # an unknown name, as an unknown operation or Company is
        )
    note(
        f"poppy-tui: the token of the agent '{safe_line(args.name, 60)}' is ended: a running "
        "'poppy-tui mcp --http' refuses it from its next request and closes its sessions now. Its "
        "operations stay in the queue for you."
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
    from poppy_tui.agent.gate.credentials import Credentials

    data_dir = ctx.paths.ensure().data_dir
    credentials = Credentials(data_dir)

    from poppy_tui.cli.context import discover_listed, open_agent
    from poppy_tui.mcp_server.http_gate import quiet_server_logs, serve_http

    quiet_server_logs()
    agent = open_agent(ctx)

    def started(url: str) -> None:
        print(
            f"poppy-tui mcp: serving MCP (streamable HTTP) at {url} ; it requires 'Authorization: Bearer "
            "<token>': 'poppy-tui mcp token --agent NAME' makes one for an agent ('poppy-tui mcp token' "
            "prints the default one)",
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
                agent, listen, credentials, allowed_hosts=allowed_hosts, tls=tls, started=started
            )
        finally:
            await agent.aclose()

    try:
        run(session())
    except ListenError as exc:
        raise CliError(str(exc)) from None
    note("poppy-tui mcp: stopped; anything queued stays in the queue")
    return Exit.OK
