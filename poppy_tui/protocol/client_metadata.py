"""An agent's identity as a Company sees it (spec 4.1): the Client ID Metadata Document (CIMD)
and the JWKS it names. Pure rules, no I/O: the agent checks what it is about to publish with
them, and a Company (the demo's AgentRegistry) checks what it fetched.

Rules (digest 3.1): `client_id` is the HTTPS URL of the CIMD and equals the URL it was fetched
from; `jwks_uri` and every `redirect_uris` entry are HTTPS on the same domain as `client_id`;
every key has a `kid`; ES256 keys only; no private members; `alg: none`, HMAC, `jku`, `x5u`
and embedded keys are refused. A loopback Company may accept a loopback `http://` client_id
(development mode, conventions.LOOPBACK_CLIENT_IDS_FOR_LOOPBACK_COMPANIES).
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.protocol import conventions as c

MAX_CLIENT_ID_LENGTH = 2048
MAX_KEYS = 32


class IdentityError(ValueError):
    """The agent's identity documents break a rule; the message names the rule."""


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_client_id(client_id: Any, allow_loopback: bool = False) -> str:
    """The client_id itself: an absolute HTTPS URL with a path, no query or fragment."""
    if not isinstance(client_id, str) or not client_id or len(client_id) > MAX_CLIENT_ID_LENGTH:
        raise IdentityError("client_id must be a URL")
    parts = urlsplit(client_id)
    if parts.scheme == "http" and allow_loopback and is_loopback_host(parts.hostname):
        pass
    elif parts.scheme != "https" or not parts.hostname:
        raise IdentityError(f"client_id must be an https:// URL (got {client_id[:200]!r})")
    if parts.query or parts.fragment or "#" in client_id:
        raise IdentityError("client_id must have no query or fragment")
    if not parts.path or parts.path == "/":
        raise IdentityError("client_id must name a document (a path such as /agent.json)")
    if parts.username or parts.password:
        raise IdentityError("client_id must not carry a user name or password")
    return client_id


def same_domain(url: str, client_id: str, allow_loopback: bool = False) -> bool:
    """HTTPS (or loopback http in dev mode) on the client_id's host, compared case-insensitively."""
    try:
        parts, owner = urlsplit(url), urlsplit(client_id)
    except ValueError:
        return False
    if parts.scheme != owner.scheme:
        return False
    if parts.scheme == "http" and not (allow_loopback and is_loopback_host(parts.hostname)):
        return False
    if parts.scheme not in ("https", "http"):
        return False
    if (parts.hostname or "").lower() != (owner.hostname or "").lower():
        return False
    # On loopback the port tells programs apart, so it counts; on a real domain it doesn't.
    return parts.scheme == "https" or parts.port == owner.port


def redirect_uri_allowed(uri: str, client_id: str, allow_loopback: bool = False) -> bool:
    """On the client_id's domain, or the native-app loopback redirect (RFC 8252 7.3) through
    which Direct Sign-In reaches a terminal program (docs/protocol-choices.md)."""
    return uri == c.DIRECT_SIGNIN_LOOPBACK_REDIRECT or same_domain(uri, client_id, allow_loopback)


@dataclass(frozen=True)
class ClientMetadata:
    client_id: str
    client_name: str
    jwks_uri: str
    redirect_uris: tuple[str, ...]
    token_endpoint_auth_method: str


def parse_client_metadata(
    document: Any, fetched_from: str, allow_loopback: bool = False
) -> ClientMetadata:
    check_client_id(fetched_from, allow_loopback)
    if not isinstance(document, dict):
        raise IdentityError("the Client ID Metadata Document is not a JSON object")
    client_id = document.get("client_id")
    if client_id != fetched_from:
        raise IdentityError(
            f"its client_id {str(client_id)[:200]!r} is not the URL it was fetched from ({fetched_from})"
        )
    jwks_uri = document.get("jwks_uri")
    if not isinstance(jwks_uri, str) or not same_domain(jwks_uri, client_id, allow_loopback):
        raise IdentityError("jwks_uri must be an https:// URL on the client_id's domain")
    redirect_uris = document.get("redirect_uris", [])
    if not isinstance(redirect_uris, list) or not all(isinstance(u, str) for u in redirect_uris):
        raise IdentityError("redirect_uris must be a list of URLs")
    for uri in redirect_uris:
        if not redirect_uri_allowed(uri, client_id, allow_loopback):
            raise IdentityError(
                f"redirect_uri {uri[:200]!r} is not an https:// URL on the client_id's domain"
            )
    if "jwks" in document:
        raise IdentityError(
            "keys must be published at jwks_uri, not embedded in the document (jwks)"
        )
    method = document.get("token_endpoint_auth_method", c.AGENT_TOKEN_ENDPOINT_AUTH_METHOD)
    if method != c.AGENT_TOKEN_ENDPOINT_AUTH_METHOD:
        raise IdentityError(
            f"token_endpoint_auth_method must be {c.AGENT_TOKEN_ENDPOINT_AUTH_METHOD!r}"
        )
    name = document.get("client_name", "")
    if not isinstance(name, str):
        raise IdentityError("client_name must be a string")
    return ClientMetadata(client_id, name, jwks_uri, tuple(redirect_uris), method)


def public_jwk(key: ec.EllipticCurvePublicKey) -> dict[str, str]:
    """The key as an EC JWK (RFC 7518 6.2.1), as PyJWT writes it."""
    import jwt

    jwk: dict[str, str] = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key))
    return jwk


def jwk_thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint of an EC public JWK: the `kid` poppy-tui gives its key."""
    import base64
    import hashlib

    members = {k: jwk[k] for k in ("crv", "kty", "x", "y")}
    digest = hashlib.sha256(
        json.dumps(members, sort_keys=True, separators=(",", ":")).encode()
    ).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def key_id(key: ec.EllipticCurvePublicKey) -> str:
    return jwk_thumbprint(public_jwk(key))


def jwks_document(keys: list[ec.EllipticCurvePublicKey]) -> dict[str, Any]:
    """The JWKS to publish at jwks_uri: public members only, each with kid, use and alg."""
    out = []
    for key in keys:
        jwk = public_jwk(key)
        out.append({**jwk, "kid": jwk_thumbprint(jwk), "use": "sig", "alg": c.SESSION_JWT_ALG})
    return {"keys": out}


def parse_jwks(document: Any) -> dict[str, ec.EllipticCurvePublicKey]:
    """kid -> public key. Keys that aren't P-256 signing keys are skipped (another algorithm
    the agent may also publish); private members, duplicate kids and symmetric keys are errors."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise IdentityError("the JWKS is not a JSON object with a keys list")
    if len(document["keys"]) > MAX_KEYS:
        raise IdentityError(f"the JWKS holds more than {MAX_KEYS} keys")
    keys: dict[str, ec.EllipticCurvePublicKey] = {}
    for entry in document["keys"]:
        if not isinstance(entry, dict):
            raise IdentityError("a JWKS entry is not an object")
        if entry.get("kty") == "oct" or "k" in entry:
            raise IdentityError("the JWKS holds a symmetric (HMAC) key")
        if any(member in entry for member in ("d", "p", "q", "dp", "dq", "qi")):
            raise IdentityError("the JWKS holds private key material")
        kid = entry.get("kid")
        if not isinstance(kid, str) or not kid:
            raise IdentityError("every key in the JWKS needs a kid")
        if (
            entry.get("kty") != "EC"
            or entry.get("crv") != "P-256"
            or entry.get("alg", c.SESSION_JWT_ALG) != c.SESSION_JWT_ALG
        ):
            continue
        if entry.get("use", "sig") != "sig":
            continue
        if kid in keys:
            raise IdentityError(f"the JWKS names kid {kid[:64]!r} twice")
        import jwt

        try:
            key = jwt.algorithms.ECAlgorithm.from_jwk(
                json.dumps({k: entry[k] for k in ("kty", "crv", "x", "y")})
            )
        except Exception as exc:  # noqa: BLE001 - a hostile JWKS: from_jwk raises TypeError, ValueError, KeyError...
            raise IdentityError(
                f"key {kid[:64]!r} in the JWKS can't be read ({type(exc).__name__})"
            ) from None
        if not isinstance(key, ec.EllipticCurvePublicKey):
            raise IdentityError(f"key {kid[:64]!r} in the JWKS is not a public key")
        keys[kid] = key
    return keys
