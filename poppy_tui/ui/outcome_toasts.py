"""Tell the person when a send they approved ends, wherever they are in the app.

Without this an approval completing while the person looks at the inbox only makes its row
vanish. The watcher remembers which operations were on their way (approved, sending) and
reports each one that reaches an outcome: performed, not performed, or unknown; and each one
that starts waiting for sign-in (the Company asked for it: the person has to act before anything
is sent). No Textual here: the app turns what it returns into toasts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from poppy_tui.agent.store.status import Status
from poppy_tui.ui.format import IN_PROGRESS_STATUSES
from poppy_tui.ui.safe import plain_line

ON_THE_WAY = (Status.APPROVED, Status.SENDING)
OUTCOMES = (Status.PERFORMED, Status.NOT_PERFORMED, Status.OUTCOME_UNKNOWN)
WATCH_LIMIT = 500


@dataclass(frozen=True)
class Toast:
    operation_row: int
    message: str
    severity: str  # "information", "warning", "error": Textual's notify severities


def outcome_toast(record: Any) -> Toast | None:
    """The words for an outcome, Company named and every Company string sanitised."""
    company = plain_line(record.company.name, 60)
    summary = plain_line(record.current.summary, 90)
    if record.status == Status.PERFORMED:
        return Toast(
            record.id, f"Performed: {company} confirmed it did this. {summary}", "information"
        )
    if record.status == Status.NOT_PERFORMED:
        return Toast(record.id, f"Not performed: {company} did not do this. {summary}", "warning")
    if record.status == Status.OUTCOME_UNKNOWN:
        return Toast(
            record.id,
            f"Outcome unknown: no definite answer from {company}. Check with them, then open it and "
            f"say what happened. {summary}",
            "error",
        )
    return None


def waiting_toast(row: Any) -> Toast:
    company = plain_line(row.company_name, 60)
    summary = plain_line(row.summary, 90)
    line = getattr(row, "waiting_sign_in", None) or ""
    from poppy_tui.safety.account_owner import (
        OTHER_ACCOUNT_WAIT_PREFIX,
        UNCONFIRMED_WAIT_PREFIX,
    )

    if line.startswith(UNCONFIRMED_WAIT_PREFIX):
        # Held by poppy-tui for the person's word: it can't tell whether this sign-in is the
        # account the operation belongs to (Ops 3).
        return Toast(
            row.id,
            f"Not sent: {company} — is this sign-in the account it belongs to? Open it and press u "
            f"if it is, or s to sign in as it. {summary}",
            "warning",
        )
    if line.startswith(OTHER_ACCOUNT_WAIT_PREFIX):
        # Held by poppy-tui, not asked by the Company: signed in there as another account (Ops 3).
        return Toast(
            row.id,
            f"Not sent, {plain_line(line, 400)}. Open it and press s to sign in. {summary}",
            "warning",
        )
    return Toast(
        row.id,
        f"Waiting for sign-in: {company} asked you to sign in before it does this. Open it and press s; "
        f"your approval is kept until the terms expire. {summary}",
        "warning",
    )


class OutcomeWatcher:
    def __init__(self) -> None:
        self._on_the_way: set[int] | None = (
            None  # None until the first look: old outcomes aren't news
        )
        self._waiting: set[int] = set()

    def check(self, store: Any) -> list[Toast]:
        rows = store.list_operations(IN_PROGRESS_STATUSES, limit=WATCH_LIMIT)
        now_on_the_way = {r.id for r in rows if r.status in ON_THE_WAY}
        waiting = {
            r.id: r for r in rows if r.status in ON_THE_WAY and getattr(r, "waiting_sign_in", None)
        }
        before, self._on_the_way = self._on_the_way, now_on_the_way
        waited, self._waiting = self._waiting, set(waiting)
        if before is None:
            return []
        toasts: list[Toast] = [waiting_toast(waiting[row]) for row in sorted(set(waiting) - waited)]
        for row in sorted(before - now_on_the_way):
            try:
                record = store.get_operation(row)
            except KeyError:
                continue
            if record.status in OUTCOMES:
                toast = outcome_toast(record)
                if toast is not None:
                    toasts.append(toast)
        return toasts
