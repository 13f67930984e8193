"""The parser entries for `signin`, `signout` and `identity`: argparse only, so building the
parser (for --help, or for another command) loads none of what those commands run
(signin_commands.py, identity_commands.py)."""

from __future__ import annotations

from poppy_tui.cli.gate_parser import add_company_argument

TYPE_CHECKING = False
if TYPE_CHECKING:
    from poppy_tui.cli.gate_parser import Command


def add_signin_commands(command: Command) -> None:
    """Adds signin and signout to the parser; `command(name, help, description)` makes a subparser."""
    signin = command(
        "signin",
        "sign in to a Company (Device, Direct or Mediated Sign-In)",
        "Sign in to COMPANY so requests act on your account there. Device Sign-In (the default when "
        "offered) shows a code and the Company's own link; --direct opens the Company's page in your "
        "browser; --mediated asks for the Company's declared fields here (secrets are not echoed). "
        "The refresh token goes where the signing key lives (the keyring, or the opt-in key_storage file).",
    )
    add_company_argument(signin, "company")
    kind = signin.add_mutually_exclusive_group()
    kind.add_argument(
        "--device",
        dest="kind",
        action="store_const",
        const="device",
        help="Device Sign-In (RFC 8628)",
    )
    kind.add_argument(
        "--direct",
        dest="kind",
        action="store_const",
        const="direct",
        help="Direct Sign-In in your browser",
    )
    kind.add_argument(
        "--mediated",
        dest="kind",
        action="store_const",
        const="mediated",
        help="type the Company's sign-in fields here",
    )
    signin.add_argument(
        "--scope",
        action="append",
        metavar="S",
        help="ask for this scope (repeatable; default: all the kind offers)",
    )
    signin.add_argument(
        "--no-browser",
        action="store_true",
        help="with --direct: don't open a browser, print the link only",
    )
    signout = command(
        "signout",
        "sign out of a Company (revokes the sign-in)",
        "Revoke the sign-in at COMPANY (RFC 7009) and delete its tokens here. Sessions go on signed out.",
    )
    add_company_argument(signout, "company")


def add_identity_commands(command: Command) -> None:
    """Adds identity init and identity show."""
    identity = command(
        "identity",
        "set up or show the agent's identity (its client_id and published keys)",
        "A Company knows poppy-tui by its client_id: the https URL of a Client ID Metadata Document "
        "you publish, which names the JWKS holding the agent's public key. 'identity init' writes both "
        "documents; 'identity show' prints them and where each must be served.",
    )
    sub = identity.add_subparsers(dest="identity_command", metavar="SUBCOMMAND", required=True)
    init = sub.add_parser(
        "init",
        help="choose the client_id and write the documents to publish",
        allow_abbrev=False,
        description="Choose the client_id (the https URL where you will serve agent.json), create the agent's "
        "signing key if needed, and write agent.json and jwks.json to publish.",
    )
    init.add_argument(
        "--client-id",
        required=True,
        metavar="URL",
        help="https URL where the Client ID Metadata Document will be served, e.g. https://me.example/agent.json",
    )
    init.add_argument(
        "--client-name",
        default=None,
        metavar="NAME",
        help="the name Companies show (default: poppy-tui)",
    )
    init.add_argument(
        "--jwks-uri",
        default=None,
        metavar="URL",
        help="where jwks.json will be served (default: beside the client_id)",
    )
    init.add_argument(
        "--redirect-uri",
        action="append",
        default=None,
        metavar="URL",
        dest="redirect_uris",
        help="a redirect URI for Direct Sign-In; repeat for several (default: one on the client_id's host)",
    )
    show = sub.add_parser(
        "show", help="print the identity, the documents and where to serve them", allow_abbrev=False
    )
    show.add_argument("--json", action="store_true", help="machine-readable output")
