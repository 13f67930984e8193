"""IDs as in spec 8.2: 1 to 256 characters of the URL-safe base64 alphabet."""

from __future__ import annotations

import re

from poppy_tui.protocol.conventions import MAX_ID_LENGTH

_ID_RE = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_ID_LENGTH}}}")


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None


def id_problem(value: object) -> str | None:
    """Why `value` is not a valid ID, or None when it is."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not value:
        return "must not be empty"
    if len(value) > MAX_ID_LENGTH:
        return f"must be at most {MAX_ID_LENGTH} characters, got {len(value)}"
    bad = sorted({c for c in value if not (c.isascii() and (c.isalnum() or c in "_-"))})
    if bad:
        shown = ", ".join(repr(c) for c in bad[:5])
        return f"may hold only A-Z a-z 0-9 _ -; found {shown}"
    return None


def new_id(prefix: str, random_bytes: int = 16) -> str:
    """A fresh ID with at least 128 random bits, e.g. msg_Qd4hVn2Rx8TfLe1M..."""
    import secrets  # here: reading IDs (every CLI command) needn't load hmac/hashlib/random

    return prefix + secrets.token_urlsafe(random_bytes).rstrip("=")
