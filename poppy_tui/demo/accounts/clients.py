"""The agents (OAuth clients) the demo authorization server knows: each is its Client
ID Metadata Document, looked up through the agent registry (`AgentKeys`).

authlib's grants are synchronous, and fetching a CIMD or JWKS is not, so every
endpoint first awaits `AgentDirectory.prefetch` (metadata and, for a client
assertion, the key its `kid` names) and then runs authlib, which finds the client and
key here without I/O.
"""

from __future__ import annotations

import json
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from authlib.oauth2.rfc6749 import ClientMixin
from joserfc import jwk

PRIVATE_KEY_JWT = "private_key_jwt"
LOOPBACK_IPS = ("127.0.0.1", "::1")
GRANT_TYPES = (
    "authorization_code",
    "refresh_token",
    "urn:ietf:params:oauth:grant-type:device_code",
)


class AgentKeys(Protocol):
    """What the demo needs of `demo.agent_registry.AgentRegistry`."""

    async def key_for(self, client_id: str, kid: str) -> Any: ...

    async def metadata(self, client_id: str) -> dict[str, Any]: ...


class UnknownAgent(Exception):
    """The agent's CIMD or key could not be had; the message says why (no secrets in it)."""


class DemoClient(ClientMixin):
    def __init__(
        self, client_id: str, metadata: dict[str, Any], assertion_key: jwk.Key | None = None
    ) -> None:
        self.client_id = client_id
        self.metadata = metadata
        self.assertion_key = assertion_key

    @property
    def name(self) -> str:
        name = self.metadata.get("client_name")
        return name if isinstance(name, str) and name.strip() else self.client_id

    @property
    def redirect_uris(self) -> list[str]:
        uris = self.metadata.get("redirect_uris")
        return [u for u in uris if isinstance(u, str)] if isinstance(uris, list) else []

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return None  # redirect_uri is required and must be listed exactly

    def get_allowed_scope(self, scope: str | None) -> str:
        # Only the authorization endpoint (Direct Sign-In) asks; no scope means its usual set.
        from poppy_tui.demo.accounts.users import DIRECT_SCOPES

        return scope if scope else " ".join(DIRECT_SCOPES)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        """Exactly one of the CIMD's redirect_uris, character for character. One exception,
        RFC 8252 7.3: a listed loopback IP redirect without a port matches any port."""
        if redirect_uri in self.redirect_uris:
            return True
        try:
            asked = urlsplit(redirect_uri)
            port = asked.port
        except ValueError:
            return False
        if asked.scheme != "http" or asked.hostname not in LOOPBACK_IPS or port is None:
            return False
        host = f"[{asked.hostname}]" if ":" in asked.hostname else asked.hostname
        without_port = urlunsplit((asked.scheme, host, asked.path, asked.query, asked.fragment))
        return without_port in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return False

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == PRIVATE_KEY_JWT

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in GRANT_TYPES


def as_jose_key(key: Any) -> jwk.Key:
    """The registry's key as a joserfc key: a JWK dict, a `cryptography` public key,
    PEM text, or already a joserfc key. Private members are never accepted."""
    if isinstance(key, jwk.Key):
        return key
    if isinstance(key, (str, bytes)) and (
        b"BEGIN" in (key if isinstance(key, bytes) else key.encode())
    ):
        return jwk.import_key(key)
    if isinstance(key, str):
        key = json.loads(key)
    if isinstance(key, dict):
        if "d" in key:
            raise UnknownAgent("the agent's published key holds private members")
        return jwk.import_key(key)
    if hasattr(key, "public_bytes"):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec, rsa

        pem = key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        if isinstance(key, ec.EllipticCurvePublicKey):
            return jwk.import_key(pem, "EC")
        if isinstance(key, rsa.RSAPublicKey):
            return jwk.import_key(pem, "RSA")
        raise UnknownAgent(f"the agent's key is of an unsupported type ({type(key).__name__})")
    raise UnknownAgent(f"the agent registry gave a key of an unknown kind ({type(key).__name__})")


class AgentDirectory:
    """Clients by client_id, filled by `prefetch` just before authlib looks them up."""

    def __init__(self, registry: AgentKeys) -> None:
        self.registry = registry
        self._clients: dict[str, DemoClient] = {}

    async def prefetch(self, client_id: str, kid: str | None = None) -> DemoClient:
        try:
            metadata = await self.registry.metadata(client_id)
        except Exception as exc:  # noqa: BLE001 - whatever the agent's documents do wrong, it is told
            raise UnknownAgent(
                f"the agent's Client ID Metadata Document {client_id} could not be used: {exc}"
            ) from None
        if not isinstance(metadata, dict) or metadata.get("client_id", client_id) != client_id:
            raise UnknownAgent(
                f"the Client ID Metadata Document at {client_id} names another client_id"
            )
        key = None
        if kid is not None:
            try:
                key = as_jose_key(await self.registry.key_for(client_id, kid))
            except UnknownAgent:
                raise
            except Exception as exc:  # noqa: BLE001 - whatever the agent's JWKS does wrong, it is told
                raise UnknownAgent(
                    f"no usable key {kid!r} in the JWKS of {client_id}: {exc}"
                ) from None
        client = DemoClient(client_id, metadata, key)
        self._clients[client_id] = client
        return client

    def query_client(self, client_id: str) -> DemoClient | None:
        return self._clients.get(client_id)
