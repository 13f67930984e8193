"""Waiting for the wall clock to pass a moment the code under test stored (an expiry, the end of a
grace period, the next whole second): a test about time itself waits exactly until then, in short
steps, instead of sleeping a guessed duration that a loaded machine may not have covered."""

from __future__ import annotations

from datetime import datetime, UTC

from tests.waiting import wait_until, wait_until_blocking

STEP_SECONDS = 0.02


def _left(moment: datetime) -> float:
    return (moment - datetime.now(UTC)).total_seconds()


def _check(moment: datetime, limit: float) -> None:
    if _left(moment) > limit:
        raise AssertionError(
            f"{moment.isoformat()} is more than {limit} s away: the test would wait too long"
        )


async def until_past(moment: datetime, limit: float = 30.0) -> None:
    """Return once the wall clock is past `moment` (aware); fail if it is more than `limit` s away."""
    _check(moment, limit)
    await wait_until(
        lambda: _left(moment) < 0, timeout=limit + 1, step=STEP_SECONDS, describe=f"past {moment}"
    )


def until_past_blocking(moment: datetime, limit: float = 30.0) -> None:
    """until_past, for tests outside an event loop."""
    _check(moment, limit)
    wait_until_blocking(
        lambda: _left(moment) < 0, timeout=limit + 1, step=STEP_SECONDS, describe=f"past {moment}"
    )
