"""Expiry: an operation past or near its `expires_at` (Ops §3). No Textual."""

from __future__ import annotations

from datetime import datetime, UTC

from poppy_tui.protocol.operation import Operation
from poppy_tui.safety.findings import _Findings
from poppy_tui.safety.sanitize import sanitize_line
from poppy_tui.safety.terms_values import _QUOTE_CHARS
from poppy_tui.safety.wording import count, plural


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _check_expiry(
    findings: _Findings, operation: Operation, now: datetime | None, min_read_seconds: float
) -> None:
    now = _aware(now) if now is not None else datetime.now(UTC)
    expires = _aware(operation.expires_at)
    remaining = (expires - now).total_seconds()
    when = sanitize_line(
        getattr(operation, "expires_at_text", "") or expires.isoformat(), _QUOTE_CHARS
    ).text
    if remaining <= 0:
        findings.add(
            "expired",
            f"This operation expired at {when}; an approval would be refused.",
            "expires_at",
        )
    elif remaining < min_read_seconds:
        findings.add(
            "expires_soon",
            f"Only {count(int(remaining), 'second')} {plural('is', int(remaining))} left before this expires at {when}; "
            "don't let the deadline rush you.",
            "expires_at",
        )
