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
        note(
            "This is a loopback client_id: poppy-tui serves it itself, and only Companies on this computer accept it."
        )
    else:
        note(
            "Publish the two files below (HTTPS, Content-Type application/json); Companies fetch them to verify this agent."
        )
    emit(f"{folder / 'agent.json'} -> serve at {settings.client_id}")
    emit(f"{folder / 'jwks.json'} -> serve at {settings.jwks_uri}")
    return Exit.OK


def _write_documents(folder: Any, identity: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, document in (
        ("agent.json", identity.metadata()),
        ("jwks.json", identity.public_jwks()),
    ):
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
        emit(
            json.dumps(
                {
                    "client_id": settings.client_id,
                    "kid": identity.kid,
                    "development": settings.is_loopback,
                    "documents": [
                        {
                            "file": str(folder / "agent.json"),
                            "serve_at": settings.client_id,
                            "content": metadata,
                        },
                        {
                            "file": str(folder / "jwks.json"),
                            "serve_at": settings.jwks_uri,
                            "content": jwks,
                        },
                    ],
                },
                indent=2,
            )
        )
        return Exit.OK
    emit(
        f"client_id: {settings.client_id}"
        + ("  (development: served by poppy-tui on loopback)" if settings.is_loopback else "")
    )
    emit(f"key id (kid): {identity.kid}")
    emit("")
    emit(f"Client ID Metadata Document ({folder / 'agent.json'}), serve at {settings.client_id}:")
    emit(json.dumps(metadata, indent=2))
    emit("")
    emit(f"JWKS ({folder / 'jwks.json'}), serve at {settings.jwks_uri}:")
    emit(json.dumps(jwks, indent=2))
    return Exit.OK
