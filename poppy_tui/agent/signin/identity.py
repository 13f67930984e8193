"""Who the agent is toward an authorization server: its client_id and private_key_jwt assertions.

h/identity's `AgentIdentity` (client_id, kid, client_assertion(audience)) is the real one; until an
Agent has it, `KeyIdentity` signs assertions with the agent's long-term key under the placeholder
client_id, so sign-in works the same way with either.
"""

from __future__ import annotations

import time
import uuid
from typing import Protocol

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.protocol.conventions import AGENT_CLIENT_ID, CLIENT_ASSERTION_LIFETIME_SECONDS
from poppy_tui.protocol.session_jwt import jwk_thumbprint, public_jwk


class ClientIdentity(Protocol):
    @property
    def client_id(self) -> str: ...

    def client_assertion(self, audience: str) -> str: ...


class KeyIdentity:
    """RFC 7523 client assertion: iss = sub = client_id, aud = the issuer, short exp, unique jti."""

    def __init__(self, key: ec.EllipticCurvePrivateKey, client_id: str = AGENT_CLIENT_ID) -> None:
        self._key = key
        self.client_id = client_id
        self.kid = jwk_thumbprint(public_jwk(key.public_key()))

    def client_assertion(self, audience: str) -> str:
        now = int(time.time())
        claims = {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": audience,
            "iat": now,
            "exp": now + CLIENT_ASSERTION_LIFETIME_SECONDS,
            "jti": str(uuid.uuid4()),
        }
        return jwt.encode(claims, self._key, algorithm="ES256", headers={"kid": self.kid})
