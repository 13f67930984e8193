"""Values a Company hands poppy-tui that poppy-tui later sends back in an HTTP header or a form:
checked when they arrive, so a hostile value is dropped or refused there instead of breaking
(or splitting) a later request. Pure: no I/O.

- An ETag is sent back in If-None-Match: RFC 9110 8.8.3 `entity-tag = [ "W/" ] DQUOTE *etagc
  DQUOTE`, `etagc = %x21 / %x23-7E / obs-text`. poppy-tui keeps only the ASCII part of that
  grammar (obs-text bytes would arrive as non-ASCII text, which no HTTP client sends as a header
  value), at most MAX_ENTITY_TAG_LENGTH characters.
- An access token is sent in `Authorization: Bearer`: RFC 6750 2.1 `b64token = 1*( ALPHA / DIGIT
  / "-" / "." / "_" / "~" / "+" / "/" ) *"="`, at most MAX_TOKEN_LENGTH characters.
- A refresh token goes into a form body only, but it is still one: RFC 6749 A.17 `refresh-token =
  1*VSCHAR` (printable ASCII, %x20-7E), no control character, nothing beyond ASCII.
"""

from __future__ import annotations

import re

MAX_ENTITY_TAG_LENGTH = 256
MAX_TOKEN_LENGTH = 16384

_ENTITY_TAG = re.compile(r'(?:W/)?"[\x21\x23-\x7e]*"')
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_VSCHAR = re.compile(r"[\x20-\x7e]+")


def entity_tag(value: object) -> str | None:
    """`value` when it is an entity-tag poppy-tui may send back in If-None-Match, else None
    (a weak tag is kept: If-None-Match compares weakly, RFC 9110 13.1.2)."""
    if not isinstance(value, str) or len(value) > MAX_ENTITY_TAG_LENGTH:
        return None
    return value if _ENTITY_TAG.fullmatch(value) else None


def is_bearer_token(value: object) -> bool:
    """RFC 6750 b64token, within MAX_TOKEN_LENGTH: safe to put after `Authorization: Bearer `."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_TOKEN_LENGTH
        and _B64TOKEN.fullmatch(value) is not None
    )


def is_refresh_token(value: object) -> bool:
    """RFC 6749 A.17 (1*VSCHAR), within MAX_TOKEN_LENGTH."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_TOKEN_LENGTH
        and _VSCHAR.fullmatch(value) is not None
    )


def token_problem(value: str) -> str:
    """What is wrong with a token that failed the checks above, in words (never the token)."""
    if len(value) > MAX_TOKEN_LENGTH:
        return f"is longer than {MAX_TOKEN_LENGTH} characters"
    if any(ch in "\r\n" for ch in value):
        return "contains a line break"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        return "contains a control character"
    if any(ord(ch) > 0x7E for ch in value):
        return "contains characters beyond ASCII"
    if " " in value:
        return "contains a space"
    return "contains characters a bearer token can't have (RFC 6750 b64token)"
