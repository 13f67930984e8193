"""The parser entries for `poppy-tui web` (serve the page; `pair`, `devices`, `revoke`): argparse
only, so `--help` and every other command load nothing of what `web` runs (cli/web.py,
poppy_tui/web/)."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from poppy_tui.cli.gate_parser import Command

JSON_HELP = "machine-readable output (see docs/cli.md)"


def add_web_commands(
    command: Command, global_options: Callable[[argparse.ArgumentParser, bool], None]
) -> None:
    web = command(
        "web",
        "serve the approval page for a paired phone or computer (pair, devices, revoke)",
        "Serve poppy-tui's own web page, where a paired device reviews, approves, declines and withdraws, "
        "as in the TUI (see docs/web.md). It listens on 127.0.0.1 and a free port unless --listen says "
        "otherwise, and prints its address. 'poppy-tui web pair' shows a one-time pairing link and its QR "
        "code; 'web devices' lists the paired devices; 'web revoke NAME' ends one at once. A paired device "
        "holds the power to decide that the terminal has: treat it like the terminal.",
    )
    web.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="where to listen (default 127.0.0.1:0, a free port; [::1]:PORT for IPv6). Only loopback "
        "unless --allow-remote",
    )
    web.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow --listen on an address other machines can reach (needs --tls-cert and --tls-key)",
    )
    web.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        default=None,
        help="also answer requests whose Host header is NAME (repeatable); others get 421",
    )
    web.add_argument(
        "--tls-cert", metavar="FILE", help="serve https with this PEM certificate (chain)"
    )
    web.add_argument("--tls-key", metavar="FILE", help="the PEM private key for --tls-cert")
    web.add_argument(
        "--require-passkey",
        action="store_true",
        help="approving on the page needs a passkey (WebAuthn user verification) bound to the operation "
        "and revision; on loopback the page is served as localhost",
    )
    web.add_argument(
        "--public-url",
        metavar="URL",
        help="the origin browsers reach the page at through a tunnel or proxy, e.g. "
        "https://poppy.example.net: pairing links use it, and its Host and Origin are accepted",
    )
    actions = web.add_subparsers(dest="web_command", metavar="ACTION")
    pair = actions.add_parser(
        "pair",
        help="show a one-time pairing link and its QR code (valid a few minutes, for one device)",
        description="Show a link (and its QR code) that pairs one device with the running 'poppy-tui web'. "
        "It works once, for 5 minutes. The device is asked for a name.",
        allow_abbrev=False,
    )
    global_options(pair, True)
    pair.add_argument("--json", action="store_true", help=JSON_HELP)
    devices = actions.add_parser(
        "devices",
        help="list the paired devices (name, paired, last seen)",
        allow_abbrev=False,
    )
    global_options(devices, True)
    devices.add_argument("--json", action="store_true", help=JSON_HELP)
    revoke = actions.add_parser(
        "revoke",
        help="end a paired device at once (its next request is refused)",
        allow_abbrev=False,
    )
    global_options(revoke, True)
    revoke.add_argument("name", metavar="NAME", help="the device's name, as 'web devices' lists it")
