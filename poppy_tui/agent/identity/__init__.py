"""The agent's identity (spec 4.1): its client_id (the URL of its Client ID Metadata Document),
its long-term ES256 key named by `kid`, the documents a Company fetches to verify it, and the
two kinds of JWT it signs with that key (Session JWTs and private_key_jwt client assertions).

Where the settings live and how a development identity is made: settings.py. Serving the
documents on loopback for --demo and tests: publisher.py.
"""

from __future__ import annotations

import threading
import time
from typing import Any
from collections.abc import Callable

from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.identity.settings import IdentitySettings
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.client_metadata import jwks_document, key_id
from poppy_tui.protocol.ids import new_id
from poppy_tui.protocol.session_jwt import sign_with_kid


class AgentIdentity:
    """What a Company knows this agent by. The key is loaded on first use (the keyring may
    prompt or be missing, and browsing history must not need it)."""

    def __init__(
        self, settings: IdentitySettings, key_loader: Callable[[], ec.EllipticCurvePrivateKey]
    ) -> None:
        self.settings = settings
        self._key_loader = key_loader
        self._key: ec.EllipticCurvePrivateKey | None = None
        self._lock = threading.Lock()

    @property
    def client_id(self) -> str:
        return self.settings.client_id

    @property
    def key_loaded(self) -> bool:
        """Whether the key was loaded already (it is kept from then on)."""
        return self._key is not None

    @property
    def key(self) -> ec.EllipticCurvePrivateKey:
        with self._lock:
            if self._key is None:
                self._key = self._key_loader()
            return self._key

    @property
    def kid(self) -> str:
        return key_id(self.key.public_key())

    @property
    def is_development(self) -> bool:
        """An http:// loopback client_id that this program serves itself (--demo, tests)."""
        return self.settings.is_loopback

    def public_jwks(self) -> dict[str, Any]:
        return jwks_document([self.key.public_key()])

    def metadata(self) -> dict[str, Any]:
        """The Client ID Metadata Document to serve at client_id."""
        return self.settings.metadata()

    def sign(self, claims: dict[str, Any], typ: str) -> str:
        """ES256, header `typ` and `kid`; never the key itself."""
        return sign_with_kid(self.key, claims, typ)

    def client_assertion(self, audience: str) -> str:
        """A private_key_jwt client assertion (RFC 7523) for a Company's token or revocation
        endpoint: `aud` is the Company's auth.issuer, as one string (digest 3.1)."""
        now = int(time.time())
        claims = {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": audience,
            "iat": now,
            "exp": now + c.CLIENT_ASSERTION_LIFETIME_SECONDS,
            "jti": new_id("jti_"),
        }
        return self.sign(claims, c.CLIENT_ASSERTION_TYP)

    def ensure_published(self) -> None:
        """A development identity is served by this process (or found served by another
        poppy-tui using the same home); an https:// one is the user's to publish."""
        if self.is_development:
            from poppy_tui.agent.identity.publisher import publish

            publish(self.settings, self.metadata(), self.public_jwks())


def load_identity(
    paths: Any, allow_loopback: bool, key_loader: Callable[[], ec.EllipticCurvePrivateKey]
) -> AgentIdentity:
    """The identity this home's agent signs with; a development one is served before it is used."""
    from poppy_tui.agent.identity.publisher import PortTaken
    from poppy_tui.agent.identity.settings import load_settings, move_development_port

    settings = load_settings(paths, allow_loopback)
    identity = AgentIdentity(settings, key_loader)
    try:
        identity.ensure_published()
    except PortTaken:
        identity = AgentIdentity(move_development_port(paths, settings), key_loader)
        identity.ensure_published()
    return identity


__all__ = ["AgentIdentity", "IdentitySettings", "load_identity"]
