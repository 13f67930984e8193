"""Words and numbers every face of poppy-tui shows for an operation: countdowns, times, what each
status means. One place, so the TUI, `poppy-tui web` and the CLI say them alike.

No Textual here, so it is cheap to import and trivial to test.
"""

from __future__ import annotations

from datetime import datetime, UTC

from poppy_tui.agent.store.connection import parse_stamp as store_stamp
from poppy_tui.agent.store.status import Status
from poppy_tui.safety import wording

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INTERFACE_LABELS = {"api": "API", "mcp": "MCP", "conversation": "conversation"}

# Short label for tables, then what it means for the person, in their terms.
STATUS_TEXT: dict[Status, tuple[str, str]] = {
    Status.PENDING: (
        "waiting for you",
        "The Company is waiting for your decision. Nothing has been done.",
    ),
    Status.WITHDRAWN: (
        "withdrawn",
        "You withdrew your approval before it was sent. Nothing was sent and nothing was done. "
        "You can approve again or decline.",
    ),
    Status.APPROVED: (
        "approved",
        "You approved. Nothing has been sent yet: until the grace period ends you can withdraw.",
    ),
    Status.SENDING: (
        "sending",
        "Your approval is being sent to the Company. Retries reuse the same approval, so it is done at most once.",
    ),
    Status.PERFORMED: ("performed", "The Company confirmed it performed the action."),
    Status.NOT_PERFORMED: (
        "not performed",
        "The Company did not perform the action.",
    ),
    Status.OUTCOME_UNKNOWN: (
        "outcome unknown",
        "Your approval was sent but no definite answer came back, so poppy does not know whether the "
        "Company performed the action. Nothing more is sent. Check with the Company (for example your "
        "order page or e-mail), then tell poppy what you found.",
    ),
    Status.DECLINED: (
        "declined",
        "You declined. Nothing was sent and the action was not performed.",
    ),
    Status.EXPIRED: (
        "expired",
        "This revision expired before an approval was sent. The action was not performed.",
    ),
}

INBOX_STATUSES = (Status.PENDING, Status.WITHDRAWN)
IN_PROGRESS_STATUSES = (Status.APPROVED, Status.SENDING, Status.OUTCOME_UNKNOWN)


def status_label(status: Status) -> str:
    return STATUS_TEXT[status][0]


def status_meaning(status: Status) -> str:
    return STATUS_TEXT[status][1]


# An approval the Company answered with a sign-in request is kept (status sending, waiting_sign_in
# set) but not on its way: every screen calls it this, never "sending".
WAITING_SIGN_IN_LABEL = "waiting for sign-in"
WAITING_SIGN_IN_MEANING = (
    "You approved. The Company asked for sign-in before it does this, so nothing is being sent: your "
    "approval is kept until the terms expire and goes out once you are signed in."
)


def record_status_label(record: Any) -> str:
    """status_label for an operation (or a list row), saying "waiting for sign-in" while it waits."""
    return (
        WAITING_SIGN_IN_LABEL
        if getattr(record, "waiting_sign_in", None)
        else status_label(record.status)
    )


def record_status_meaning(record: Any) -> str:
    return (
        WAITING_SIGN_IN_MEANING
        if getattr(record, "waiting_sign_in", None)
        else status_meaning(record.status)
    )


def interface_label(interface: str) -> str:
    return INTERFACE_LABELS.get(interface, interface)


def countdown(seconds: float) -> str:
    """'4m 05s', '2h 03m', '3d 04h', '7973 years' (from a thousand days on: an expiry in the
    year 9999 must fit the inbox's column); 'expired' once it has passed."""
    if seconds <= 0:
        return "expired"
    total = int(seconds)
    days, rest = divmod(total, 86400)
    if days >= 1000:
        return f"{days // 365} years"
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def parse_stamp(text: str | None) -> datetime | None:
    """A store stamp (send_after, decided_at, …), or None where the store has none."""
    return store_stamp(text) if text else None


TIME_FORMAT = "%Y-%m-%d %H:%M:%S %Z"


def _moment(value: datetime | str | None) -> datetime | None:
    """A stored stamp or a datetime as an aware datetime (naive ones are UTC); None stays None."""
    if isinstance(value, str):
        value = parse_stamp(value)
    if value is not None and value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


def local_time(value: datetime | str | None) -> str:
    """The one way poppy writes a moment: local time with its zone, '2026-12-03 07:14:27 UTC'."""
    value = _moment(value)
    return "—" if value is None else value.astimezone().strftime(TIME_FORMAT)


def local_date(value: datetime | str | None) -> str:
    """The day of a moment, in local time ('2026-12-03'), where a list has no room for the time."""
    value = _moment(value)
    return "—" if value is None else value.astimezone().strftime("%Y-%m-%d")


def relative(value: datetime | str | None, now: datetime) -> str:
    """'in 14m 57s', '3m 02s ago', 'now': said beside a local_time, never instead of it."""
    value = _moment(value)
    if value is None:
        return ""
    seconds = (value - now).total_seconds()
    if abs(seconds) < 1:
        return "now"
    return f"in {countdown(seconds)}" if seconds > 0 else f"{countdown(-seconds)} ago"


def time_with_relative(value: datetime | str | None, now: datetime) -> str:
    """'2026-12-03 07:14:27 UTC (in 14m 57s)'."""
    shown = local_time(value)
    near = relative(value, now)
    return f"{shown} ({near})" if near else shown


def plural(count: int, word: str, many: str | None = None) -> str:
    """'1 warning', '2 warnings', '0 dangers' (poppy_tui.safety.wording says it the same way)."""
    return wording.count(count, word, many)


def possessive(name: str) -> str:
    """ "Larkspur Air's", "Manzanita Outfitters'"."""
    return wording.possessive(name)


def checks_summary(dangers: int, warnings: int) -> str:
    """'1 danger and 2 warnings', '2 warnings', 'no dangers or warnings'."""
    parts = [plural(dangers, "danger")] if dangers else []
    if warnings:
        parts.append(plural(warnings, "warning"))
    return " and ".join(parts) if parts else "no dangers or warnings"


# Attempt outcomes whose stored word would mislead in the list of attempts.
ATTEMPT_LABELS = {"sign_in_required": "the Company asked for sign-in; nothing performed"}
