"""Which account a sign-in is, where the Company says so (Ops 3: an account's operation is approved
"while signed in to the same account"). Pure: no I/O; every input is the Company's, hostile.

The core spec's User ID (digest 3.2) is the agent's own pairwise name for the person, the same
whoever signs in, so it names no account. How a Company names the account signed in is NOT FOUND
for 0.4; the readings chosen (protocol/conventions.py, docs/protocol-choices.md, "Which account a
sign-in is") are the ones OAuth servers give unasked, in this order:
1. an OpenID Connect ID token in the token answer (`id_token`): its `iss` must be the Company's
   issuer exactly and its `aud` name the agent's client_id, and it must not have expired. Its
   signature is not checked: it came straight from the token endpoint the agent called (OIDC
   Core 3.1.3.7, "TLS server validation MAY be used ... in place of checking the token
   signature");
2. the OpenID Connect userinfo endpoint the authorization server's metadata names
   (`userinfo_endpoint`), read once with the new access token (agent/signin/account.py); its
   `sub` must be the ID token's when there was one (OIDC Core 5.3.2);
3. an access token that is a JWT (RFC 9068, `typ` `at+jwt`) from this issuer: its `sub`, the
   user (the 1.0 profile the digest cites: "`sub` is the user").
From claims, the account is the `email` (unless `email_verified` is false), else the `sub`: an
email is what a person recognises, and what Mediated Sign-In's typed account usually is.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any

from poppy_tui.protocol import conventions as c


def account_from_claims(claims: Any) -> str | None:
    """The account a set of OIDC claims names: `email` (unless `email_verified` is false), else
    `sub`; None when neither is a usable string."""
    if not isinstance(claims, dict):
        return None
    for name in c.ACCOUNT_CLAIMS:
        value = claims.get(name)
        if name == "email" and claims.get("email_verified") is False:
            continue
        if _usable(value):
            return value
    return None


def _usable(value: Any) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= c.ACCOUNT_MAX_CHARS
        and value == value.strip()
        and value.isprintable()
    )


def jwt_parts(token: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(header, claims) of a compact JWS, unverified; None when it isn't one."""
    if not isinstance(token, str) or len(token) > c.ACCOUNT_MAX_TOKEN_CHARS:
        return None
    pieces = token.split(".")
    if len(pieces) != 3:
        return None
    try:
        header, claims = (
            json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in pieces[:2]
        )
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return None
    return header, claims


def _unexpired(claims: dict[str, Any], now: datetime) -> bool:
    exp = claims.get("exp")
    if isinstance(exp, bool) or not isinstance(exp, (int, float)):
        return False
    return exp + c.ACCOUNT_CLOCK_SKEW_SECONDS > now.timestamp()


def id_token_account(
    id_token: Any, issuer: str, client_id: str, now: datetime
) -> tuple[str | None, str | None]:
    """(the account, the `sub`) an ID token from the token endpoint names, or (None, None) when it
    isn't one for this issuer and this agent, or has expired."""
    parts = jwt_parts(id_token)
    if parts is None:
        return None, None
    _, claims = parts
    audience = claims.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    if claims.get("iss") != issuer or client_id not in audiences or not _unexpired(claims, now):
        return None, None
    if isinstance(audience, list) and len(audience) > 1 and claims.get("azp") != client_id:
        return None, None  # OIDC Core 3.1.3.7: several audiences, then azp names the agent
    sub = claims.get("sub")
    return account_from_claims(claims), sub if isinstance(sub, str) else None


def userinfo_account(body: Any, expected_sub: str | None) -> str | None:
    """The account a userinfo answer names; None when its `sub` is not the ID token's."""
    if not isinstance(body, dict):
        return None
    if expected_sub is not None and body.get("sub") != expected_sub:
        return None
    return account_from_claims(body)


def access_token_account(access_token: Any, issuer: str, now: datetime) -> str | None:
    """The `sub` of an RFC 9068 JWT access token from this issuer; None for an opaque token."""
    parts = jwt_parts(access_token)
    if parts is None:
        return None
    header, claims = parts
    kind = header.get("typ")
    if not isinstance(kind, str) or kind.lower() not in c.ACCOUNT_ACCESS_TOKEN_TYPES:
        return None
    if claims.get("iss") != issuer or not _unexpired(claims, now):
        return None
    sub = claims.get("sub")
    return sub if _usable(sub) else None
