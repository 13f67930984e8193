"""`poppy-tui identity init --client-id URL` and `poppy-tui identity show`: the agent's identity
(spec 4.1), the two documents to publish for it, and where each must be served.

init keeps the choice in identity.json, creates the long-term key if there is none (the keyring,
or the opt-in key file, as for every Session), and writes agent.json (the Client ID Metadata
Document) and jwks.json (the public key) into the config folder's identity/ folder. Nothing
secret is written there or printed: the JWKS holds the public key only.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from poppy_tui.cli.errors import CliError
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.cli.output import emit, note


def add_commands(command: Any) -> None:
    identity = command(
        "identity",
        "set up or show the agent's identity (its client_id and published keys)",
        "A Company knows poppy-tui by its client_id: the https URL of a Client ID Metadata Document "
        "you publish, which names the JWKS holding the agent's public key. 'identity init' writes both "
        "documents; 'identity show' prints them and where each must be served.",
    )
    sub = identity.add_subparsers(dest="identity_command", metavar="SUBCOMMAND", required=True)
    init = sub.add_parser(
        "init", help="choose the client_id and write the documents to publish", allow_abbrev=False,
        description="Choose the client_id (the https URL where you will serve agent.json), create the agent's "
        "signing key if needed, and write agent.json and jwks.json to publish.",
    )
    init.add_argument("--client-id", required=True, metavar="URL",
                      help="https URL where the Client ID Metadata Document will be served, e.g. https://me.example/agent.json")
    init.add_argument("--client-name", default=None, metavar="NAME", help="the name Companies show (default: poppy-tui)")
    init.add_argument("--jwks-uri", default=None, metavar="URL",
                      help="where jwks.json will be served (default: beside the client_id)")
    init.add_argument("--redirect-uri", action="append", default=None, metavar="URL", dest="redirect_uris",
                      help="a redirect URI for Direct Sign-In; repeat for several (default: one on the client_id's host)")
    show = sub.add_parser("show", help="print the identity, the documents and where to serve them", allow_abbrev=False)
    show.add_argument("--json", action="store_true", help="machine-readable output")


def cmd_identity(ctx: Any, args: argparse.Namespace) -> int:
    return _init(ctx, args) if args.identity_command == "init" else _show(ctx, args)


def _init(ctx: Any, args: argparse.Namespace) -> int:
    from poppy_tui.agent.identity import AgentIdentity
    from poppy_tui.agent.identity.settings import (
        DEFAULT_CLIENT_NAME,
        make_settings,
        publish_folder,
        write_settings,
    )
    from poppy_tui.agent.keys import load_or_create_key
    from poppy_tui.protocol.client_metadata import IdentityError

    try:
        settings = make_settings(
            args.client_id,
            client_name=args.client_name or DEFAULT_CLIENT_NAME,
            jwks_uri=args.jwks_uri,
            redirect_uris=tuple(args.redirect_uris) if args.redirect_uris else None,
        )
    except IdentityError as exc:
        raise CliError(f"identity init: {exc}", Exit.USAGE) from None
    ctx.paths.ensure()
    identity = AgentIdentity(settings, lambda: load_or_create_key(ctx.paths, ctx.config))
    identity.key  # noqa: B018 - create (or read) the key now, so a missing keyring is reported here
    write_settings(ctx.paths, settings)
    folder = publish_folder(ctx.paths)
    _write_documents(folder, identity)
    note(f"identity: client_id {settings.client_id}")
    if settings.is_loopback:
        note("This is a loopback client_id: poppy-tui serves it itself, and only Companies on this computer accept it.")
    else:
        note("Publish the two files below (HTTPS, Content-Type application/json); Companies fetch them to verify this agent.")
    emit(f"{folder / 'agent.json'} -> serve at {settings.client_id}")
    emit(f"{folder / 'jwks.json'} -> serve at {settings.jwks_uri}")
    return Exit.OK


def _write_documents(folder: Any, identity: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, document in (("agent.json", identity.metadata()), ("jwks.json", identity.public_jwks())):
        (folder / name).write_text(json.dumps(document, indent=2) + "\n", "utf-8")


def _show(ctx: Any, args: argparse.Namespace) -> int:
    from poppy_tui.agent.identity import AgentIdentity
    from poppy_tui.agent.identity.settings import publish_folder, read_settings
    from poppy_tui.agent.keys import load_or_create_key

    settings = read_settings(ctx.paths)
    if settings is None:
        raise CliError(
            "no identity yet: run 'poppy-tui identity init --client-id https://YOUR.DOMAIN/agent.json' "
            "(until then, a development identity is made on first use for loopback Companies)",
        )
    identity = AgentIdentity(settings, lambda: load_or_create_key(ctx.paths, ctx.config))
    metadata, jwks = identity.metadata(), identity.public_jwks()
    folder = publish_folder(ctx.paths)
    _write_documents(folder, identity)  # keep the files to publish in step with the key
    if args.json:
        emit(json.dumps({
            "client_id": settings.client_id,
            "kid": identity.kid,
            "development": settings.is_loopback,
            "documents": [
                {"file": str(folder / "agent.json"), "serve_at": settings.client_id, "content": metadata},
                {"file": str(folder / "jwks.json"), "serve_at": settings.jwks_uri, "content": jwks},
            ],
        }, indent=2))
        return Exit.OK
    emit(f"client_id: {settings.client_id}" + ("  (development: served by poppy-tui on loopback)" if settings.is_loopback else ""))
    emit(f"key id (kid): {identity.kid}")
    emit("")
    emit(f"Client ID Metadata Document ({folder / 'agent.json'}), serve at {settings.client_id}:")
    emit(json.dumps(metadata, indent=2))
    emit("")
    emit(f"JWKS ({folder / 'jwks.json'}), serve at {settings.jwks_uri}:")
    emit(json.dumps(jwks, indent=2))
    return Exit.OK
