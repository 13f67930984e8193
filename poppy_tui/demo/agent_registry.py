"""How the demo Company knows an agent (spec 4.1): it fetches the agent's Client ID Metadata
Document from the client_id URL and the JWKS it names, checks them (protocol/client_metadata.py),
and hands out the public key a JWT's `kid` names. Used for Session JWTs (demo/sessions.py) and
for private_key_jwt client assertions at the token endpoint.

- client_id must equal the URL the CIMD was fetched from; jwks_uri and redirect_uris on its domain;
- https only, except that this Company, served on loopback, accepts a loopback http:// client_id
  (development mode: `loopback_client_ids`);
- an unknown kid refetches the JWKS, at most once every JWKS_REFETCH_MIN_SECONDS per agent;
- redirects are not followed (the document speaks for the URL it came from).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import httpx2
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.client_metadata import (
    ClientMetadata,
    IdentityError,
    check_client_id,
    parse_client_metadata,
    parse_jwks,
)

MAX_DOCUMENT_BYTES = 64 * 1024
FETCH_TIMEOUT_SECONDS = 5.0


class AgentRejected(Exception):
    """The agent's identity can't be verified. `error` is the OAuth code to answer with."""

    def __init__(self, client_id: str, description: str, error: str = "invalid_client") -> None:
        super().__init__(description)
        self.client_id = client_id
        self.error = error
        self.description = description


@dataclass
class _Known:
    metadata: ClientMetadata
    keys: dict[str, ec.EllipticCurvePublicKey]
    keys_fetched_at: float


class AgentRegistry:
    def __init__(
        self,
        *,
        loopback_client_ids: bool = c.LOOPBACK_CLIENT_IDS_FOR_LOOPBACK_COMPANIES,
        refetch_seconds: float = c.JWKS_REFETCH_MIN_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.loopback_client_ids = loopback_client_ids
        self.refetch_seconds = refetch_seconds
        self._clock = clock
        self._known: dict[str, _Known] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.fetches: list[str] = []  # every URL fetched, in order (tests count refetches)

    def _lock(self, client_id: str) -> asyncio.Lock:
        lock = self._locks.get(client_id)
        if lock is None:
            lock = self._locks[client_id] = asyncio.Lock()
        return lock

    async def metadata(self, client_id: str) -> dict[str, Any]:
        """The agent's checked CIMD as a dict (client_id, client_name, jwks_uri, redirect_uris, ...)."""
        known = await self._get(client_id)
        m = known.metadata
        return {
            "client_id": m.client_id,
            "client_name": m.client_name,
            "jwks_uri": m.jwks_uri,
            "redirect_uris": list(m.redirect_uris),
            "token_endpoint_auth_method": m.token_endpoint_auth_method,
        }

    async def key_for(self, client_id: str, kid: str) -> ec.EllipticCurvePublicKey:
        known = await self._get(client_id)
        key = known.keys.get(kid)
        if key is not None:
            return key
        async with self._lock(client_id):
            known = self._known[client_id]
            if (
                kid not in known.keys
                and self._clock() - known.keys_fetched_at >= self.refetch_seconds
            ):
                known.keys = await self._fetch_keys(client_id, known.metadata.jwks_uri)
                known.keys_fetched_at = self._clock()
            key = known.keys.get(kid)
        if key is None:
            raise AgentRejected(
                client_id,
                f"the key {kid[:64]!r} is not in the agent's JWKS at {known.metadata.jwks_uri}",
            )
        return key

    async def _get(self, client_id: str) -> _Known:
        known = self._known.get(client_id)
        if known is not None:
            return known
        async with self._lock(client_id):
            known = self._known.get(client_id)
            if known is None:
                try:
                    check_client_id(client_id, self.loopback_client_ids)
                except IdentityError as exc:
                    raise AgentRejected(
                        client_id, f"the agent's client_id is not acceptable: {exc}"
                    ) from None
                document = await self._fetch(client_id, client_id, "Client ID Metadata Document")
                try:
                    metadata = parse_client_metadata(document, client_id, self.loopback_client_ids)
                except IdentityError as exc:
                    raise AgentRejected(
                        client_id,
                        f"the agent's Client ID Metadata Document at {client_id} is not acceptable: {exc}",
                    ) from None
                keys = await self._fetch_keys(client_id, metadata.jwks_uri)
                known = self._known[client_id] = _Known(metadata, keys, self._clock())
        return known

    async def _fetch_keys(
        self, client_id: str, jwks_uri: str
    ) -> dict[str, ec.EllipticCurvePublicKey]:
        document = await self._fetch(client_id, jwks_uri, "JWKS")
        try:
            return parse_jwks(document)
        except IdentityError as exc:
            raise AgentRejected(
                client_id, f"the agent's JWKS at {jwks_uri} is not acceptable: {exc}"
            ) from None

    async def _fetch(self, client_id: str, url: str, what: str) -> Any:
        self.fetches.append(url)
        try:
            async with httpx2.AsyncClient(
                timeout=FETCH_TIMEOUT_SECONDS, follow_redirects=False, trust_env=False
            ) as client:
                async with client.stream(
                    "GET", url, headers={"Accept": "application/json"}
                ) as response:
                    if response.status_code != 200:
                        raise AgentRejected(
                            client_id,
                            f"the agent's {what} at {url} answered HTTP {response.status_code}",
                        )
                    raw = b""
                    async for chunk in response.aiter_bytes():
                        raw += chunk
                        if len(raw) > MAX_DOCUMENT_BYTES:
                            raise AgentRejected(
                                client_id, f"the agent's {what} at {url} is too large"
                            )
        except httpx2.HTTPError as exc:
            raise AgentRejected(
                client_id, f"the agent's {what} at {url} can't be fetched ({type(exc).__name__})"
            ) from None
        try:
            import json

            return json.loads(raw)
        except ValueError:
            raise AgentRejected(client_id, f"the agent's {what} at {url} is not JSON") from None
