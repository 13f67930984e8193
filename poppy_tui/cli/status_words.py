"""Where an operation is, and when, in the command line's words: its status as people read it
(`waiting for sign-in` rather than `sending` while an approval waits for it), and its times in
UTC. Import these from cli/output.py, like the rest of what the command line prints."""

from __future__ import annotations

from datetime import datetime, UTC

from poppy_tui.cli.safe_text import safe_line

TYPE_CHECKING = False  # typing is not imported on a command's path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

STATUS_TEXT = {
    "pending": "needs your approval: open poppy-tui to review",
    "withdrawn": "approval withdrawn before anything was sent; waiting for a decision: open poppy-tui to review",
    "approved": "approved; it will be sent when the grace period ends",
    "sending": "approved; being sent to the Company",
    "performed": "performed by the Company",
    "declined": "declined; nothing was sent",
    "not_performed": "not performed: the Company did not do it",
    "outcome_unknown": (
        "sent, but whether it took effect is unknown; check with the Company, then record what happened in poppy-tui"
    ),
    "expired": "expired before it was approved; nothing was sent",
}
# An approval held back because the Company asked for sign-in (status sending, waiting_sign_in set):
# not on its way, so never "being sent".
WAITING_SIGN_IN_TEXT = (
    "approved; waiting for you to sign in to the Company, then it is sent (until the terms expire)"
)


def status_name(record: Any) -> str:
    """The state as people read it: `waiting for sign-in` rather than `sending` while it waits."""
    return (
        "waiting for sign-in" if getattr(record, "waiting_sign_in", None) else record.status.value
    )


def status_text(record: Any) -> str:
    """STATUS_TEXT for a record, saying "waiting for sign-in" for an approval that waits for it."""
    if getattr(record, "waiting_sign_in", None):
        return WAITING_SIGN_IN_TEXT
    return STATUS_TEXT.get(record.status.value, record.status.value)


# ---- times ----------------------------------------------------------------------------------


def utc_text(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def stamp_text(value: object) -> str:
    """A stored time ("2026-12-04T18:57:04.386595Z") as every line of `show` writes a time:
    "2026-12-04 18:57:04 UTC". What doesn't parse is shown as it is, sanitised."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            return safe_line(value, 60)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # the store writes UTC
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def expiry_text(value: datetime, now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    shown = value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    seconds = (value - now).total_seconds()
    if seconds <= 0:
        return f"{shown} (passed)"
    return f"{shown} (in {_duration(seconds)})"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{int(seconds)} seconds"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} minutes"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} hours"
    return f"{round(seconds / 86400)} days"


def settled_expiry_text(status: Any, value: datetime) -> str:
    """A decided operation's expiry no longer counts down: say so instead of 'in 14 minutes'."""
    if getattr(status, "is_final", False) and getattr(status, "value", "") != "expired":
        shown = value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"expiry {shown} (no longer matters: {status.value.replace('_', ' ')})"
    return f"expires {expiry_text(value)}"
