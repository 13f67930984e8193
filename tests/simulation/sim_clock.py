"""The one clock of a simulated world: the agent reads it (poppy_tui.agent.clock.use), and so does
the simulated Company (its expiries, what it remembers). It moves only when the simulation moves
it, so a grace period, a retry window, a Retry-After or an expiry passes in one step."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

# A fixed start: the same example replays the same stamps.
EPOCH = datetime(2031, 3, 1, 9, 0, 0, tzinfo=UTC)


class SimClock:
    def __init__(self, start: datetime = EPOCH) -> None:
        self._now = start
        self._lock = threading.Lock()  # read from the Company's thread too

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        with self._lock:
            self._now += timedelta(seconds=seconds)
            return self._now

    def seconds_since(self, moment: datetime) -> float:
        return (self.now() - moment).total_seconds()
