"""Session JWTs (spec 5): the claims, signing and verification both sides share.

Choices are in conventions.py. Signing needs a key but no I/O, so it lives in the core.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.ids import new_id


class InvalidSession(ValueError):
    code = "invalid_session"


@dataclass(frozen=True)
class SessionIdentity:
    client_id: str
    user_id: str  # pairwise per Company
    session_id: str


def public_jwk(key: ec.EllipticCurvePublicKey) -> dict[str, str]:
    return json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key))


def jwk_thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint of an EC public JWK."""
    members = {k: jwk[k] for k in ("crv", "kty", "x", "y")}
    digest = hashlib.sha256(json.dumps(members, sort_keys=True, separators=(",", ":")).encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@functools.lru_cache(maxsize=8)
def _signing_header(key: ec.EllipticCurvePrivateKey) -> tuple[tuple[str, Any], ...]:
    """The JOSE header members that depend only on the key: computed once per key, not per request."""
    jwk = public_jwk(key.public_key())
    return (("typ", c.SESSION_JWT_TYP), ("jwk", jwk), ("kid", jwk_thumbprint(jwk)))


def sign_session_jwt(
    key: ec.EllipticCurvePrivateKey, identity: SessionIdentity, audience: str, now: float | None = None
) -> str:
    now = time.time() if now is None else now
    claims = {
        "iss": identity.client_id,
        "sub": identity.user_id,
        "aud": audience,
        "sid": identity.session_id,
        "iat": int(now),
        "exp": int(now) + c.SESSION_JWT_LIFETIME_SECONDS,
        "jti": new_id("jti_"),
    }
    return jwt.encode(claims, key, algorithm=c.SESSION_JWT_ALG, headers=dict(_signing_header(key)))


@dataclass(frozen=True)
class VerifiedSession:
    client_id: str
    user_id: str
    session_id: str
    key_thumbprint: str
    jti: str
    expires_at: int


def verify_session_jwt(token: str | None, audience: str, now: float | None = None) -> VerifiedSession:
    """Check a Session JWT's form, signature, audience and lifetime. Replay is the caller's job."""
    if not token:
        raise InvalidSession("the Poppy-Session header is missing")
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as exc:
        raise InvalidSession(f"the Session JWT is malformed ({exc})") from None
    if header.get("typ") != c.SESSION_JWT_TYP:
        raise InvalidSession(f"typ must be {c.SESSION_JWT_TYP!r}")
    if header.get("alg") != c.SESSION_JWT_ALG:
        raise InvalidSession(f"alg must be {c.SESSION_JWT_ALG}")
    jwk = header.get("jwk")
    if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256" or "d" in jwk:
        raise InvalidSession("the header must carry the public P-256 key as jwk")
    try:
        public_key = jwt.algorithms.ECAlgorithm.from_jwk(json.dumps(jwk))
        now = time.time() if now is None else now
        claims = jwt.decode(
            token,
            public_key,
            algorithms=[c.SESSION_JWT_ALG],
            audience=audience,
            # exp is checked below against `now`, so a caller's clock governs both ends.
            options={"require": ["iss", "sub", "aud", "sid", "iat", "exp", "jti"], "verify_iat": False, "verify_exp": False},
            leeway=c.SESSION_JWT_MAX_CLOCK_SKEW_SECONDS,
        )
    except (jwt.PyJWTError, TypeError, ValueError, binascii.Error) as exc:
        # from_jwk raises plain TypeError/ValueError/binascii.Error for malformed key members.
        raise InvalidSession(f"the Session JWT was rejected ({exc})") from None
    for name in ("iat", "exp"):
        if isinstance(claims[name], bool) or not isinstance(claims[name], (int, float)):
            raise InvalidSession(f"claim {name} must be a number")
    if claims["exp"] + c.SESSION_JWT_MAX_CLOCK_SKEW_SECONDS <= now:
        raise InvalidSession("the Session JWT has expired")
    if claims["iat"] > now + c.SESSION_JWT_MAX_CLOCK_SKEW_SECONDS:
        raise InvalidSession("the Session JWT was issued in the future")
    if claims["exp"] - claims["iat"] > 10 * 60:
        raise InvalidSession("the Session JWT lives longer than 10 minutes")
    for name in ("iss", "sub", "sid", "jti"):
        if not isinstance(claims[name], str) or not claims[name]:
            raise InvalidSession(f"claim {name} must be a non-empty string")
    return VerifiedSession(
        client_id=claims["iss"],
        user_id=claims["sub"],
        session_id=claims["sid"],
        key_thumbprint=jwk_thumbprint(jwk),
        jti=claims["jti"],
        expires_at=int(claims["exp"]),
    )
