"""What a sender is waiting for, for each approval it has not settled yet, read from the store
(the dispatcher records every fact it acts on there): the grace period, a retry after an
attempt that reached nothing or was told "busy", the person's sign-in. `poppy-tui send` says
each wait as it begins (which operation, why, until when), so it never waits in silence."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from poppy_tui.agent.store import OperationRecord, Status
from poppy_tui.agent.store.connection import parse_stamp

# What an attempt's stored outcome means, in the words of a line about waiting after it.
ATTEMPT_WORDS = {
    "not_sent": "reached nothing (not delivered)",
    "retry_later": "was answered 'busy, try later'",
    "unknown": "got no definite answer",
    "interrupted": "was cut off before an answer",
    "sign_in_required": "was answered with a sign-in challenge",
}


@dataclass(frozen=True)
class Wait:
    key: tuple[Any, ...]  # the same key: the same wait, said once
    why: str  # poppy-tui's words; the detail it quotes is the caller's to sanitise
    until: datetime | None  # when it ends by itself (None: when the person acts)
    detail: str | None = None  # the last attempt's detail (may quote the Company)


def _stamp(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return parse_stamp(text)
    except ValueError:
        return None


def current_wait(
    store: Any,
    record: OperationRecord,
    now: datetime,
    retry_window: float,
    request_timeout: float = 30.0,
    inline_retry: float = 15.0,
) -> Wait | None:
    """The wait `record` is in now, or None when it is due (or settled). `inline_retry`: the
    longest retry delay the dispatcher waits for within one pass (no next_attempt_at is stored
    for it, so the line says "within")."""
    if record.status == Status.APPROVED:
        send_after = _stamp(record.send_after)
        if send_after is not None and send_after > now:
            return Wait(
                ("grace", record.send_after),
                "in its grace period (w in the TUI withdraws it)",
                send_after,
            )
        return None
    if record.status != Status.SENDING:
        return None
    expires = record.current.expires_at
    if record.waiting_sign_in:
        return Wait(
            ("sign-in", record.waiting_sign_in),
            "kept until you sign in to the Company",
            expires,
            record.waiting_sign_in,
        )
    attempts = store.attempts(record.id)
    last = attempts[-1] if attempts else None
    if last is None:
        return None
    if last.finished_at is None:
        started = _stamp(last.started_at)
        return Wait(
            ("answer", last.id),
            f"attempt {last.number} sent; waiting for the Company's answer",
            None if started is None else started + timedelta(seconds=request_timeout),
        )
    words = ATTEMPT_WORDS.get(last.outcome or "", f"ended {last.outcome}")
    status = f" (HTTP {last.http_status})" if last.http_status else ""
    # The retry window is the approved revision's own (Ops §7; audit A52): counted from its
    # first attempt, not from an earlier revision's.
    first = _stamp(next(a for a in attempts if a.revision_id == last.revision_id).started_at)
    resend_until = (
        expires if first is None else min(expires, first + timedelta(seconds=retry_window))
    )
    retry_at = _stamp(record.next_attempt_at)
    if retry_at is not None and retry_at <= now:
        return None  # due now
    again = "trying again" if retry_at is not None else f"trying again within {inline_retry:g}s"
    return Wait(
        ("retry", last.id),
        f"attempt {last.number} {words}{status}; {again}, resending until {_clock(resend_until)}",
        retry_at,
        last.detail,
    )


def _clock(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def wait_line(wait: Wait, now: datetime) -> str:
    """'waiting: <why>; until <time> (in 4s)'."""
    if wait.until is None:
        return f"waiting: {wait.why}"
    left = max(0, int((wait.until - now).total_seconds()))
    if wait.key[0] == "retry":
        return f"waiting: {wait.why}; next try at {_clock(wait.until)} (in {left}s)"
    if wait.key[0] == "answer":
        return f"waiting: {wait.why}, until {_clock(wait.until)} at the latest"
    if wait.key[0] == "sign-in":
        return f"waiting: {wait.why}, until its terms expire at {_clock(wait.until)}"
    return f"waiting: {wait.why}; sent at {_clock(wait.until)} (in {left}s)"
