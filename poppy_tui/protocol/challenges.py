"""What a Company's refusal asks of the agent's *identity or sign-in*, read from the answer.

Two forms carry the same codes (digest 3.4-3.6, RFC 6750 section 3):
- a `WWW-Authenticate` challenge, e.g. `Bearer error="insufficient_scope", scope="orders:write"`;
- an OAuth-style JSON error body, e.g. `{"error": "sign_in_required", "scope": "orders:write"}`
  (conversations and MCP tool errors can only use this one).

Kinds:
- `sign_in` for `sign_in_required` (and RFC 6750's `invalid_token`, an access token the Company no
  longer accepts: the remedy is the same, sign in again);
- `scope` for `insufficient_scope` (signed in, but without what this needs);
- `identity` for `invalid_client`/`unauthorized_client`: the Company can't verify the agent itself.

Pure: no I/O, nothing sanitised here (callers show `description` through the safety layer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal
from collections.abc import Mapping

from poppy_tui.protocol import conventions as c

SIGN_IN_REQUIRED = "sign_in_required"
INSUFFICIENT_SCOPE = "insufficient_scope"
INVALID_TOKEN = "invalid_token"
MAX_SCOPES = 32
MAX_SCOPE_LENGTH = 128
MAX_HEADER_LENGTH = 8192

_KINDS: dict[str, Literal["sign_in", "scope", "identity"]] = {
    SIGN_IN_REQUIRED: "sign_in",
    INVALID_TOKEN: "sign_in",
    INSUFFICIENT_SCOPE: "scope",
    **dict.fromkeys(c.IDENTITY_REJECTED_ERRORS, "identity"),
}
# auth-param = token BWS "=" BWS ( token / quoted-string )  (RFC 9110 11.2)
_PARAM = re.compile(
    r'\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*(?:,|$)'
)
_SCHEME = re.compile(r"\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:\s+|$)")


@dataclass(frozen=True)
class Challenge:
    kind: Literal["sign_in", "scope", "identity"]
    error: str
    scopes: tuple[str, ...] = ()
    description: str = ""  # the Company's words: hostile, sanitise before showing
    client_id: str | None = None  # for `identity`: the client_id the Company looked at, if it said

    @property
    def needs_sign_in(self) -> bool:
        return self.kind in ("sign_in", "scope")


def parse_www_authenticate(value: str | None) -> list[tuple[str, dict[str, str]]]:
    """[(scheme lower-cased, {param: value})] for each challenge in the header; tolerant: what
    can't be read is skipped, never raised."""
    if not value or len(value) > MAX_HEADER_LENGTH:
        return []
    out: list[tuple[str, dict[str, str]]] = []
    pos = 0
    current: dict[str, str] | None = None
    while pos < len(value):
        param = _PARAM.match(value, pos)
        if param and current is not None:
            raw = param.group(2)
            if raw.startswith('"'):
                raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
            current.setdefault(param.group(1).lower(), raw)
            pos = param.end()
            continue
        scheme = _SCHEME.match(value, pos)
        if not scheme or scheme.end() == pos:
            break
        current = {}
        out.append((scheme.group(1).lower(), current))
        pos = scheme.end()
        if pos < len(value) and value[pos] == ",":
            pos += 1
    return out


def _scopes(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        words = [w for w in value if isinstance(w, str)]
    elif isinstance(value, str):
        words = value.split()
    else:
        return ()
    seen: list[str] = []
    for word in words:
        word = word.strip()
        if word and len(word) <= MAX_SCOPE_LENGTH and word not in seen:
            seen.append(word)
        if len(seen) >= MAX_SCOPES:
            break
    return tuple(seen)


def _text(value: Any, limit: int = 2000) -> str:
    return value[:limit] if isinstance(value, str) else ""


def challenge_from_fields(fields: Mapping[str, Any]) -> Challenge | None:
    """From a JSON error object (or a JSON-RPC error's data, or a conversation event)."""
    error = fields.get("error")
    if not isinstance(error, str) or error not in _KINDS:
        return None
    client_id = fields.get("client_id")
    return Challenge(
        _KINDS[error],
        error,
        _scopes(fields.get("scope")),
        _text(fields.get("error_description")),
        client_id if isinstance(client_id, str) else None,
    )


def parse_challenge(
    status: int | None, headers: Mapping[str, str] | None, body: Any
) -> Challenge | None:
    """The challenge in an HTTP answer, header first (it is the normative place for a Bearer
    resource), then the JSON body. Only 400/401/403 answers can carry one."""
    if status not in (400, 401, 403):
        return None
    header = None
    for name, value in (headers or {}).items():
        if name.lower() == "www-authenticate":
            header = value
    for _scheme, params in parse_www_authenticate(header):
        found = challenge_from_fields(params)
        if found is not None:
            if not found.scopes and isinstance(body, dict):
                found = Challenge(
                    found.kind,
                    found.error,
                    _scopes(body.get("scope")),
                    found.description or _text(body.get("error_description")),
                    found.client_id,
                )
            return found
    if isinstance(body, dict):
        return challenge_from_fields(body)
    return None
