"""Session JWTs (spec 5): the claims, signing and verification both sides share.

Choices are in conventions.py. Signing needs a key but no I/O, so it lives in the core.
The JWT names its key by `kid`; the key itself is never in the token (the Company takes it
from the jwks_uri in the agent's Client ID Metadata Document, protocol/client_metadata.py).
"""

from __future__ import annotations

import binascii
import functools
import time
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.client_metadata import jwk_thumbprint, key_id, public_jwk  # noqa: F401 (re-exported)
from poppy_tui.protocol.ids import new_id


class InvalidSession(ValueError):
    code = "invalid_session"


@dataclass(frozen=True)
class SessionIdentity:
    client_id: str
    user_id: str  # pairwise per Company
    session_id: str


def session_claims(
    identity: SessionIdentity, audience: str, now: float | None = None
) -> dict[str, Any]:
    now = time.time() if now is None else now
    return {
        "iss": identity.client_id,
        "sub": identity.user_id,
        "aud": audience,
        "sid": identity.session_id,
        "iat": int(now),
        "exp": int(now) + c.SESSION_JWT_LIFETIME_SECONDS,
        "jti": new_id("jti_"),
    }


@functools.lru_cache(maxsize=8)
def _key_id(key: ec.EllipticCurvePrivateKey) -> str:
    """Computed once per key, not per request."""
    return key_id(key.public_key())


def sign_with_kid(key: ec.EllipticCurvePrivateKey, claims: dict[str, Any], typ: str) -> str:
    """ES256 with the key named by `kid` (its RFC 7638 thumbprint, as published in the JWKS),
    signed by PyJWT. Imported here, when a command first signs: `--help`, `pending` and the
    TUI's first frame never need it."""
    import jwt

    return jwt.encode(
        claims, key, algorithm=c.SESSION_JWT_ALG, headers={"typ": typ, "kid": _key_id(key)}
    )


def sign_session_jwt(
    key: ec.EllipticCurvePrivateKey,
    identity: SessionIdentity,
    audience: str,
    now: float | None = None,
) -> str:
    """A Session JWT signed directly with a published key (conventions.SESSION_JWT_KEY_MODE)."""
    return sign_with_kid(key, session_claims(identity, audience, now), c.SESSION_JWT_TYP)


def session_key_id(token: str | None) -> tuple[str, str]:
    """(client_id, kid) read before verification, to find the key; every header rule that
    needs no key is checked here, so a Company fetches nothing for a token it would refuse."""
    import jwt

    if not token:
        raise InvalidSession("the Poppy-Session header is missing")
    try:
        header = jwt.get_unverified_header(token)
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise InvalidSession(f"the Session JWT is malformed ({exc})") from None
    if header.get("typ") != c.SESSION_JWT_TYP:
        raise InvalidSession(f"typ must be {c.SESSION_JWT_TYP!r}")
    if header.get("alg") != c.SESSION_JWT_ALG:
        raise InvalidSession(f"alg must be {c.SESSION_JWT_ALG} (none and HMAC are refused)")
    for member in c.SESSION_JWT_FORBIDDEN_HEADER_MEMBERS:
        if member in header:
            raise InvalidSession(
                f"the header carries {member!r}; keys come only from the agent's published jwks_uri"
            )
    kid, client_id = header.get("kid"), claims.get("iss")
    if not isinstance(kid, str) or not kid or len(kid) > c.MAX_ID_LENGTH:
        raise InvalidSession("the header must name the signing key by kid")
    if not isinstance(client_id, str) or not client_id:
        raise InvalidSession("claim iss (the agent's client_id) must be a non-empty string")
    return client_id, kid


@dataclass(frozen=True)
class VerifiedSession:
    client_id: str
    user_id: str
    session_id: str
    key_id: str  # the kid that verified it
    jti: str
    expires_at: int


def verify_session_jwt(
    token: str | None, audience: str, key: ec.EllipticCurvePublicKey, now: float | None = None
) -> VerifiedSession:
    """Check a Session JWT's form, signature (with `key`, the agent's published key named by the
    header's kid: see session_key_id), audience and lifetime. Replay is the caller's job."""
    import jwt

    _, kid = session_key_id(token)
    assert token is not None
    try:
        now = time.time() if now is None else now
        claims = jwt.decode(
            token,
            key,
            algorithms=[c.SESSION_JWT_ALG],
            audience=audience,
            # exp is checked below against `now`, so a caller's clock governs both ends.
            options={
                "require": ["iss", "sub", "aud", "sid", "iat", "exp", "jti"],
                "verify_iat": False,
                "verify_exp": False,
            },
            leeway=c.SESSION_JWT_MAX_CLOCK_SKEW_SECONDS,
        )
    except (jwt.PyJWTError, TypeError, ValueError, binascii.Error) as exc:
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
        key_id=kid,
        jti=claims["jti"],
        expires_at=int(claims["exp"]),
    )


def read_session_claims(token: str) -> dict[str, Any]:
    """The claims WITHOUT verifying anything: for an agent's own logs and tests, never for a decision."""
    import jwt

    return jwt.decode(token, options={"verify_signature": False})
