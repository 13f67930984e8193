"""`poppy-tui send`'s wait line counts the retry window from the approved revision's own first
attempt (Ops §7; audit A52), as the lifecycle does: an earlier revision's attempts, long ago,
would have made it say "resending until" a time already past."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from poppy_tui.agent.send_waits import current_wait
from poppy_tui.agent.store import Status
from poppy_tui.agent.store.connection import stamp
from poppy_tui.agent.store.records import AttemptRecord

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def _attempt(number: int, revision: int, started: datetime) -> AttemptRecord:
    return AttemptRecord(
        id=number,
        operation_row=1,
        revision_id=revision,
        number=number,
        idempotency_key="k",
        started_at=stamp(started),
        finished_at=stamp(started + timedelta(seconds=1)),
        outcome="retry_later",
        http_status=503,
        response=None,
        detail=None,
        owner=None,
    )


def test_the_resend_window_is_the_approved_revisions_own():
    attempts = [
        _attempt(1, revision=1, started=NOW - timedelta(hours=2)),  # the first terms, long ago
        _attempt(2, revision=2, started=NOW - timedelta(seconds=5)),  # the approved new terms
    ]
    store = SimpleNamespace(attempts=lambda row: attempts)
    record = SimpleNamespace(
        id=1,
        status=Status.SENDING,
        waiting_sign_in=None,
        next_attempt_at=stamp(NOW + timedelta(seconds=30)),
        current=SimpleNamespace(expires_at=NOW + timedelta(days=1)),
    )
    wait = current_wait(store, record, NOW, retry_window=600)
    assert wait is not None and wait.until == NOW + timedelta(seconds=30)
    until = (NOW - timedelta(seconds=5) + timedelta(seconds=600)).astimezone()
    assert f"resending until {until.strftime('%Y-%m-%d %H:%M:%S')}" in wait.why, wait.why
