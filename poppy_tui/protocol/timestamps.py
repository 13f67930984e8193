"""RFC 3339 timestamps. An offset is required: a time without one is ambiguous."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, UTC

# Beyond these a stored UTC stamp stops sorting as text (years < 1000) or overflows datetime.
MIN_YEAR = 1970
MAX_YEAR = 9998

_RFC3339_RE = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[Tt](?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})"
    r"(?P<frac>\.\d{1,9})?(?P<off>[Zz]|[+-]\d{2}:\d{2})"
)


def parse_rfc3339(text: object) -> datetime:
    """Parse an RFC 3339 date-time into an aware datetime. Raises ValueError with a reason."""
    if not isinstance(text, str):
        raise ValueError(f"must be an RFC 3339 string, got {type(text).__name__}")
    match = _RFC3339_RE.fullmatch(text)
    if match is None:
        raise ValueError(
            "must be an RFC 3339 date-time with an offset, e.g. 2026-10-08T12:20:00-07:00"
        )
    seconds = int(match["s"])
    leap = seconds == 60
    frac = (match["frac"] or "")[:7].ljust(7, "0") if match["frac"] else ""
    offset = match["off"]
    offset = "+00:00" if offset in ("Z", "z") else offset
    iso = (
        f"{match['date']}T{match['h']}:{match['m']}:{59 if leap else seconds:02d}{frac[:7]}{offset}"
    )
    try:
        value = datetime.fromisoformat(iso)
    except ValueError as exc:
        raise ValueError(f"is not a real date-time ({exc})") from None
    try:
        if leap:
            value += timedelta(seconds=1)
        utc_year = value.astimezone(UTC).year
    except OverflowError:
        raise ValueError("is outside the range of dates poppy-tui can keep") from None
    if not MIN_YEAR <= utc_year <= MAX_YEAR:
        raise ValueError(f"must be between the years {MIN_YEAR} and {MAX_YEAR}")
    return value


def format_rfc3339(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError("naive datetime")
    text = value.isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")


def utcnow() -> datetime:
    return datetime.now(UTC)
