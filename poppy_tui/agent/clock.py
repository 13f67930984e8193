"""The time the agent reads: every "now" of the store, the dispatcher, the outcome probe and the
resource reader comes from here (store/connection.now_utc, which stamps every record).

A process has one clock. Outside tests it is the system's. The lifecycle simulation
(tests/simulation) puts a clock it moves by hand in its place with `use`, so grace periods,
retry windows, Retry-After and expiries pass in a step, deterministically, without waiting.
Timers that only pace the event loop (lease renewal, gathering commits) stay on the loop's
own monotonic time: they decide nothing about an operation.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class Clock(Protocol):
        def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


SYSTEM_CLOCK = SystemClock()
_clock: Clock = SYSTEM_CLOCK


def now_utc() -> datetime:
    """Now, timezone-aware, in UTC, by the process's clock."""
    return _clock.now()


@contextmanager
def use(clock: Clock) -> Iterator[None]:
    """Read time from `clock` until the block ends (the simulation's controlled clock)."""
    global _clock
    before, _clock = _clock, clock
    try:
        yield
    finally:
        _clock = before
