"""`poppy-tui web`: serve the approval page (docs/web.md); `web pair` shows a one-time pairing link
and its QR code, `web devices` lists the paired devices, `web revoke NAME` ends one.

Serving prints one line on stdout, the page's address, once it accepts requests; notes go to
stderr. The listen rules and messages are `poppy-tui mcp --http`'s (agent/listen.py), but for one:
another address than loopback needs TLS here, as the page carries a credential that approves.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import Exit

if TYPE_CHECKING:
    from poppy_tui.cli.context import Context

_SERVE_ONLY = (
    "listen",
    "allow_remote",
    "allow_host",
    "tls_cert",
    "tls_key",
    "require_passkey",
    "public_url",
)


def cmd_web(ctx: Context, args: argparse.Namespace) -> int:
    action = getattr(args, "web_command", None)
    if action is not None:
        given = ["--" + n.replace("_", "-") for n in _SERVE_ONLY if getattr(args, n, None)]
        if given:
            raise CliError(
                f"{', '.join(given)} go with 'poppy-tui web' itself, not 'web {action}'", Exit.USAGE
            )
        return {"pair": cmd_web_pair, "devices": cmd_web_devices, "revoke": cmd_web_revoke}[action](
            ctx, args
        )
    return cmd_web_serve(ctx, args)


def _book(ctx: Context):
    from poppy_tui.agent.paired_devices import DeviceBook

    try:
        return DeviceBook.open(ctx.paths.ensure().data_dir)
    except Exception as exc:  # noqa: BLE001 - sqlite3.Error, OSError: said in one line
        raise CliError(f"can't open the paired devices' file: {exc}") from None


def _when(moment) -> str:
    from poppy_tui.agent.status_words import local_time

    return local_time(moment) if moment is not None else "never"


def cmd_web_pair(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.agent.paired_devices import pairing_link, served_page
    from poppy_tui.cli.output import emit, note, to_json

    data_dir = ctx.paths.ensure().data_dir
    served = served_page(data_dir)
    if served is None:
        raise CliError(
            "poppy-tui web is not running, so there is nothing to pair with: start it "
            "('poppy-tui web', in another terminal or as a service), then run 'poppy-tui web pair'"
        )
    with _book(ctx) as book:
        pairing = book.new_pairing()
    link = pairing_link(served.url, pairing.code)
    if args.json:
        emit(to_json({"link": link, "expires_at": pairing.expires_at.isoformat()}))
        return Exit.OK
    from poppy_tui.agent.signin.qr import qr_text

    emit(qr_text(link))
    emit(link)
    note(
        f"poppy-tui web: open this link (or scan the code) on the device to pair; it works once, "
        f"until {_when(pairing.expires_at)}. A paired device can approve: pair only your own."
    )
    return Exit.OK


def cmd_web_devices(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.cli.output import emit, safe_line, to_json

    with _book(ctx) as book:
        devices = book.devices()
    if args.json:
        emit(
            to_json(
                {
                    "devices": [
                        {
                            "name": safe_line(d.name, 60),
                            "paired_at": d.paired_at.isoformat(),
                            "last_seen": d.last_seen.isoformat() if d.last_seen else None,
                        }
                        for d in devices
                    ]
                }
            )
        )
        return Exit.OK
    if not devices:
        emit("No devices are paired. 'poppy-tui web pair' pairs one.")
        return Exit.OK
    for device in devices:
        emit(
            f"{safe_line(device.name, 60)}  paired {_when(device.paired_at)}, "
            f"last seen {_when(device.last_seen)}"
        )
    return Exit.OK


def cmd_web_revoke(ctx: Context, args: argparse.Namespace) -> int:
    from poppy_tui.cli.output import emit, safe_line

    with _book(ctx) as book:
        ended = book.revoke(args.name)
        names = [safe_line(d.name, 60) for d in book.devices()] if ended is None else []
    if ended is None:
        known = f" (paired: {', '.join(names)})" if names else " (none is paired)"
        raise CliError(f"no paired device is named {safe_line(args.name, 60)!r}{known}")
    emit(
        f"Revoked {safe_line(ended.name, 60)}: its next request is refused, and its page shows "
        "nothing more."
    )
    return Exit.OK


def cmd_web_serve(ctx: Context, args: argparse.Namespace) -> int:
    from pathlib import Path

    from poppy_tui.agent.listen import ListenError, parse_listen, served_names, tls_context
    from poppy_tui.cli.event_loop import run
    from poppy_tui.cli.output import note

    allowed_hosts = list(args.allow_host or [])
    try:
        listen = parse_listen(args.listen or "127.0.0.1:0")
        served_names(listen, allowed_hosts)  # checks each --allow-host now, before anything starts
        tls = tls_context(
            Path(args.tls_cert).expanduser() if args.tls_cert else None,
            Path(args.tls_key).expanduser() if args.tls_key else None,
        )
    except ListenError as exc:
        raise CliError(str(exc), Exit.USAGE) from None
    if not listen.loopback and not args.allow_remote:
        raise CliError(
            f"--listen {listen.host} is not a loopback address: other machines could reach the page. Add "
            "--allow-remote if that is what you want (with --tls-cert and --tls-key); to approve from a "
            "phone away from this machine, a tunnel keeps the page on loopback (see docs/web.md)",
            Exit.USAGE,
        )
    if not listen.loopback and tls is None:
        raise CliError(
            f"--listen {listen.host} with --allow-remote needs --tls-cert and --tls-key: the page carries "
            "a credential that approves, which must not cross a network in plaintext (see docs/web.md)",
            Exit.USAGE,
        )
    from poppy_tui.web.server import public_address, relying_party

    if args.require_passkey or args.public_url:
        try:
            address = public_address(
                listen, 1, tls is not None, args.public_url, args.require_passkey
            )
            if args.require_passkey:
                relying_party(address)
        except ListenError as exc:
            raise CliError(str(exc), Exit.USAGE) from None

    from poppy_tui.cli.context import discover_listed, open_agent
    from poppy_tui.web.server import quiet_server_logs, serve

    quiet_server_logs()
    agent = open_agent(ctx)

    def started(url: str, local: str) -> None:
        behind = f" (listening on {local.split('://', 1)[1]})" if args.public_url else ""
        print(f"poppy-tui web: serving the approval page at {url}{behind}", flush=True)
        note(
            "poppy-tui web: 'poppy-tui web pair' shows a link that pairs a device; nothing is shown "
            "to a browser that isn't paired. Ctrl-C stops it; waiting operations stay in the queue"
        )
        if args.require_passkey:
            note("poppy-tui web: approving on the page needs a passkey (declining doesn't)")
        if listen.every_address:
            hosts = ", ".join(sorted(served_names(listen, allowed_hosts)))
            note(
                f"poppy-tui web: listening on every address; requests must name one of these hosts: "
                f"{hosts} (add the name devices use with --allow-host)"
            )
        elif not listen.loopback:
            note(
                f"poppy-tui web: listening on {listen.address}, which other machines may reach, over TLS"
            )

    async def session() -> None:
        try:
            if ctx.config.companies:
                await discover_listed(agent)
            await serve(
                agent,
                listen,
                allowed_hosts=allowed_hosts,
                tls=tls,
                require_passkey=args.require_passkey,
                public_url=args.public_url,
                started=started,
            )
        finally:
            await agent.aclose()

    try:
        run(session())
    except ListenError as exc:
        raise CliError(str(exc)) from None
    note("poppy-tui web: stopped; anything queued stays in the queue")
    return Exit.OK
