"""Where the agent's identity is kept: `identity.json` in the config folder.

It records the client_id and what the Client ID Metadata Document says (client_name, jwks_uri,
redirect_uris). `poppy-tui identity init --client-id URL` writes it. Until then an agent allowed
to talk to loopback Companies gets a development identity, written on first use:
client_id `http://127.0.0.1:PORT/poppy-tui/agent.json` with a port chosen once and kept in the
file, so every poppy-tui process sharing a home (the --demo TUI, a CLI in another terminal)
signs with the same client_id and any of them can serve the documents (publisher.py).
"""

from __future__ import annotations

import json
import os
import random
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from poppy_tui.agent.paths import Paths
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.addresses import is_loopback_host
from poppy_tui.protocol.client_metadata import (
    IdentityError,
    check_client_id,
    redirect_uri_allowed,
    same_domain,
)

IDENTITY_FILE = "identity.json"
PUBLISH_FOLDER = "identity"
DEFAULT_CLIENT_NAME = "poppy-tui"
DEFAULT_REDIRECT_PATH = "/poppy-tui/signed-in"


class IdentityNotSet(IdentityError):
    """No identity and no way to make a development one."""


@dataclass(frozen=True)
class IdentitySettings:
    client_id: str
    client_name: str = DEFAULT_CLIENT_NAME
    jwks_uri: str = ""
    redirect_uris: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_loopback(self) -> bool:
        parts = urlsplit(self.client_id)
        return parts.scheme == "http" and is_loopback_host(parts.hostname)

    @property
    def loopback_port(self) -> int | None:
        return urlsplit(self.client_id).port if self.is_loopback else None

    def metadata(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "client_name": self.client_name,
            "jwks_uri": self.jwks_uri,
            "redirect_uris": list(self.redirect_uris),
            "token_endpoint_auth_method": c.AGENT_TOKEN_ENDPOINT_AUTH_METHOD,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "client_name": self.client_name,
            "jwks_uri": self.jwks_uri,
            "redirect_uris": list(self.redirect_uris),
        }


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def make_settings(
    client_id: str,
    *,
    client_name: str = DEFAULT_CLIENT_NAME,
    jwks_uri: str | None = None,
    redirect_uris: tuple[str, ...] | list[str] | None = None,
) -> IdentitySettings:
    """Settings for a client_id, checked against the rules a Company applies (so `identity init`
    refuses what every Company would refuse). Defaults: the JWKS beside the CIMD, one redirect."""
    check_client_id(client_id, allow_loopback=True)
    if jwks_uri is None:
        base = client_id.rsplit("/", 1)[0]
        jwks_uri = f"{base}/jwks.json"
    if redirect_uris is None:
        # Direct Sign-In's loopback redirect (RFC 8252 7.3, any port) first, then the page on
        # the client_id's domain.
        redirect_uris = (
            c.DIRECT_SIGNIN_LOOPBACK_REDIRECT,
            _origin(client_id) + DEFAULT_REDIRECT_PATH,
        )
    for url, what in [(jwks_uri, "jwks_uri"), *((u, "redirect_uri") for u in redirect_uris)]:
        allowed = same_domain if what == "jwks_uri" else redirect_uri_allowed
        if not allowed(url, client_id, allow_loopback=True):
            raise IdentityError(f"{what} {url!r} must be an https:// URL on the client_id's domain")
    if not client_name.strip():
        raise IdentityError("client_name must not be empty")
    return IdentitySettings(client_id, client_name.strip(), jwks_uri, tuple(redirect_uris))


def settings_file(paths: Paths) -> Path:
    return paths.config_dir / IDENTITY_FILE


def publish_folder(paths: Paths) -> Path:
    return paths.config_dir / PUBLISH_FOLDER


def read_settings(paths: Paths) -> IdentitySettings | None:
    path = settings_file(paths)
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise IdentityError(
            f"{path} can't be read ({exc}); fix it or run poppy-tui identity init again"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("client_id"), str):
        raise IdentityError(f"{path} has no client_id; run poppy-tui identity init again")
    try:
        return make_settings(
            data["client_id"],
            client_name=str(data.get("client_name") or DEFAULT_CLIENT_NAME),
            jwks_uri=data.get("jwks_uri") or None,
            redirect_uris=tuple(data["redirect_uris"])
            if isinstance(data.get("redirect_uris"), list)
            else None,
        )
    except IdentityError as exc:
        raise IdentityError(f"{path}: {exc}") from None


def write_settings(
    paths: Paths, settings: IdentitySettings, *, exclusive: bool = False
) -> IdentitySettings:
    """Atomic; with `exclusive`, another process's file wins and is returned."""
    path = settings_file(paths)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(settings.to_json(), indent=2) + "\n", "utf-8")
    try:
        if exclusive:
            try:
                os.link(temp, path)
            except FileExistsError:
                existing = read_settings(paths)
                assert existing is not None
                return existing
        else:
            os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    return settings


# IANA's dynamic and private ports (RFC 6335 6): no service is registered on them.
DYNAMIC_PORTS = range(49152, 65536)
EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
PORT_TRIES = 32


def ephemeral_ports() -> range | None:
    """The ports the kernel hands to outgoing connections, where it says (Linux); else None."""
    try:
        low, high = (int(part) for part in EPHEMERAL_RANGE_FILE.read_text().split())
    except (OSError, ValueError):
        return None
    return range(low, high + 1)


def free_loopback_port() -> int:
    """A port free on 127.0.0.1 now, chosen where an outgoing connection won't take it.

    The development identity's port is recorded and bound again each time poppy-tui starts. A
    port in the kernel's ephemeral range can be in use as some loopback connection's own end
    while poppy-tui is stopped; the identity then moves, and every Session a Company bound to the
    old client_id ends (an approval waiting to be resent in one included). So, where the kernel
    says which ports it gives out (Linux: 32768-60999 by default), the port is picked among the
    dynamic ports above them; elsewhere (the ranges coincide) the kernel picks.
    """
    ephemeral = ephemeral_ports()
    candidates = (
        [] if ephemeral is None else [port for port in DYNAMIC_PORTS if port not in ephemeral]
    )
    for port in random.sample(candidates, min(PORT_TRIES, len(candidates))):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def development_settings(port: int) -> IdentitySettings:
    origin = f"http://127.0.0.1:{port}"
    return make_settings(
        origin + c.DEV_CLIENT_ID_PATH,
        client_name=f"{DEFAULT_CLIENT_NAME} (development)",
        jwks_uri=origin + c.DEV_JWKS_PATH,
        redirect_uris=(c.DIRECT_SIGNIN_LOOPBACK_REDIRECT, origin + DEFAULT_REDIRECT_PATH),
    )


def load_settings(paths: Paths, allow_loopback: bool) -> IdentitySettings:
    settings = read_settings(paths)
    if settings is not None:
        return settings
    if not allow_loopback:
        raise IdentityNotSet(
            "this agent has no identity yet: run poppy-tui identity init --client-id https://YOUR.DOMAIN/agent.json "
            "and publish the two documents it writes"
        )
    return write_settings(paths, development_settings(free_loopback_port()), exclusive=True)


def move_development_port(paths: Paths, settings: IdentitySettings) -> IdentitySettings:
    """The recorded port is held by another program: pick a new one (Companies then see a new
    client_id, so loopback Sessions start over; acceptable for a development identity)."""
    moved = development_settings(free_loopback_port())
    return write_settings(paths, moved)
