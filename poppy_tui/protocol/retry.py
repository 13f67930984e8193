"""Retry-After (RFC 9110 10.2.3) and capped exponential backoff with jitter."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import datetime, UTC
from email.utils import parsedate_to_datetime

_DELAY_SECONDS = re.compile(r"[0-9]+")  # ASCII digits only: str.isdigit() also accepts '²'.


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait, or None if absent or unreadable. A past date means 0."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if _DELAY_SECONDS.fullmatch(text):
        # A delay longer than any schedule we keep is as good as "very long"; don't build a bignum.
        return float(int(text)) if len(text) <= 12 else float(10**12)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # asctime form comes back naive; HTTP dates are UTC.
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


@dataclass(frozen=True)
class BackoffPolicy:
    base_seconds: float = 0.5
    factor: float = 2.0
    cap_seconds: float = 30.0
    max_retry_after_seconds: float = 300.0
    jitter_low: float = 0.5

    def delay(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Delay before retry number `attempt` (1 = first retry)."""
        uniform = rng.uniform if rng is not None else random.uniform
        return self._delay(attempt, retry_after, uniform(self.jitter_low, 1.0))

    def delay_at(self, attempt: int, retry_after: float | None, jitter: float) -> float:
        """`delay` with its jitter fixed: 0 the shortest the policy allows, 1 the longest. The
        lifecycle (agent/lifecycle) is pure, so the caller draws the jitter and passes it."""
        where = min(1.0, max(0.0, jitter))
        return self._delay(attempt, retry_after, self.jitter_low + (1.0 - self.jitter_low) * where)

    def _delay(self, attempt: int, retry_after: float | None, factor: float) -> float:
        raw = min(self.base_seconds * self.factor ** max(0, attempt - 1), self.cap_seconds)
        delay = raw * factor
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_retry_after_seconds))
        return delay
