"""RFC 3339 timestamps. An offset is required: a time without one is ambiguous."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, UTC

# RFC 3339 (section 5.6) allows every year from 0000 to 9999, with any offset: all of them are
# valid. Python's datetime counts from year 1 to 9999 in UTC, and a moment in that range's last
# day can't be shown in a time zone east of UTC (nor have a second added) without overflowing.
# So a moment outside [EARLIEST, LATEST] is counted as the nearest of the two; the text the
# Company wrote is kept as written (Operation.expires_at_text) and shown beside it. For an
# expiry this changes nothing a person can see: before EARLIEST it has long passed, after LATEST
# it is 7,900 years away.
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, tzinfo=UTC)

_RFC3339_RE = re.compile(
    r"(?P<date>(?P<year>\d{4})-\d{2}-\d{2})[Tt](?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})"
    r"(?P<frac>\.\d{1,9})?(?P<off>[Zz]|[+-]\d{2}:\d{2})"
)


def parse_rfc3339(text: object) -> datetime:
    """Parse an RFC 3339 date-time into an aware datetime. Raises ValueError with a reason.
    Every date-time RFC 3339 allows is accepted (years 0000 to 9999, any offset); one outside
    [EARLIEST, LATEST] is counted as the nearest of the two (see above)."""
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
    # Year 0000 is valid RFC 3339 but not a Python date: its month and day are checked in year 4
    # (a leap year, as 0000 is), and the moment is before EARLIEST whatever it is.
    year_zero = match["year"] == "0000"
    date = f"0004{match['date'][4:]}" if year_zero else match["date"]
    iso = f"{date}T{match['h']}:{match['m']}:{59 if leap else seconds:02d}{frac[:7]}{offset}"
    try:
        value = datetime.fromisoformat(iso)
    except ValueError as exc:
        raise ValueError(f"is not a real date-time ({exc})") from None
    if year_zero:
        return EARLIEST
    try:
        if leap:
            value += timedelta(seconds=1)
        utc = value.astimezone(UTC)
    except OverflowError:  # outside year 1 to 9999 in UTC: an offset took it over the edge
        return EARLIEST if value.year == 1 else LATEST
    if utc > LATEST:
        return LATEST
    if utc < EARLIEST:
        return EARLIEST
    return value


def format_rfc3339(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError("naive datetime")
    text = value.isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")


def utcnow() -> datetime:
    return datetime.now(UTC)
