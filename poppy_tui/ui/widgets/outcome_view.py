"""Where an operation stands: waiting, the grace period, sending and retries, the outcome."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.content import Content
from textual.widgets import Static

from poppy_tui.agent.store.records import AttemptRecord, OperationRecord, Status
from poppy_tui.ui.format import (
    WAITING_SIGN_IN_MEANING,
    countdown,
    local_time,
    parse_stamp,
    status_meaning,
)
from poppy_tui.ui.safe import json_content, safe_content
from poppy_tui.ui.widgets.countdown import app_now

KeyFor = Callable[[str, str], str]

# The banner's first line says the outcome; the explanation under it only where it adds
# something (what to do, what happens next), so the review says each outcome once.
EXPLAINED = (Status.PENDING, Status.SENDING, Status.OUTCOME_UNKNOWN)


def _default_key(binding_id: str, default: str) -> str:
    return default


class OutcomeBanner(Static):
    """One fixed line (two with the explanation) at the top of the review screen."""

    DEFAULT_CLASSES = "outcome-banner"

    def __init__(self, *, key_for: KeyFor = _default_key, id: str | None = None) -> None:
        super().__init__(id=id)
        self.record: OperationRecord | None = None
        self.key_for = key_for
        # The review's arming delay: while it runs the banner says when approving becomes possible.
        self.arming_left: Callable[[], float] = lambda: 0.0
        # Why approvals can't be signed on this machine (no usable keyring, say), or None.
        self.unsignable: Callable[[], str | None] = lambda: None
        # Why a kept approval waits now because of the sign-in at its Company (Ops 3), from the
        # review (safety/account_owner): ("other", line naming both accounts) or
        # ("unconfirmed", the held line); said instead of the line the wait began with, which
        # the sign-in since may have made untrue ("Sign in to … to continue").
        self.account_hold: tuple[str, str] | None = None

    def on_mount(self) -> None:
        # The grace countdown moves by the second and the arming delay by tenths: a tenth of a
        # second keeps both from lagging visibly.
        self.set_interval(0.1, self._refresh_text)

    def show_record(self, record: OperationRecord) -> None:
        self.record = record
        for status in Status:
            self.set_class(record.status == status, f"-{status.value.replace('_', '-')}")
        self._refresh_text()

    def _held_unconfirmed(self) -> bool:
        return self.account_hold is not None and self.account_hold[0] == "unconfirmed"

    def grace_left(self) -> float | None:
        if self.record is None or self.record.status != Status.APPROVED:
            return None
        send_after = parse_stamp(self.record.send_after)
        return None if send_after is None else (send_after - app_now(self)).total_seconds()

    def _refresh_text(self) -> None:
        if self.record is not None:
            content = self.banner_content()
            if content != getattr(
                self, "_shown", None
            ):  # ten times a second: redraw only on change
                self._shown = content
                self.update(content)

    def banner_content(self) -> Content:
        record = self.record
        assert record is not None
        status = record.status
        key = self.key_for
        arming = self.arming_left()
        approve = (
            f"{key('approve', 'a')}: approve… (available in {arming:.1f} s)"
            if arming > 0
            else f"{key('approve', 'a')}: approve…"
        )
        unsignable = self.unsignable() if status in (Status.PENDING, Status.WITHDRAWN) else None
        if unsignable:
            # Said here, where the person looks, rather than in a toast that covers the review.
            from poppy_tui.ui.safe import plain_line

            return Content.assemble(
                (
                    f"WAITING FOR YOUR DECISION — approving is unavailable on this machine   "
                    f"{key('decline', 'd')}: decline…",
                    "bold",
                ),
                "\n",
                f"Approvals can't be signed here: {plain_line(unsignable, 600)}",
            )
        if status == Status.PENDING:
            head = f"WAITING FOR YOUR DECISION — {approve}   {key('decline', 'd')}: decline…"
        elif status == Status.WITHDRAWN:
            head = (
                f"WITHDRAWN — nothing was sent. {approve.replace('approve…', 'approve again…')}   "
                f"{key('decline', 'd')}: decline…"
            )
        elif status == Status.APPROVED:
            left = self.grace_left()
            if left is not None and left > 0:
                head = (
                    f"APPROVED — sending in {countdown(left)}. Press {key('withdraw', 'w')} to withdraw; "
                    "nothing has been sent yet"
                )
            else:
                head = "APPROVED — the grace period is over; sending now"
        elif status == Status.SENDING and record.waiting_sign_in and self._held_unconfirmed():
            from poppy_tui.ui.safe import plain_line

            assert self.account_hold is not None
            return Content.assemble(
                (
                    f"HELD — is this sign-in the account it belongs to? "
                    f"{key('confirm_account', 'u')}: it is, send it   "
                    f"{key('sign_in_to_send', 's')}: sign in as it",
                    "bold",
                ),
                "\n",
                plain_line(self.account_hold[1], 600),
            )
        elif status == Status.SENDING and record.waiting_sign_in:
            # The approval is kept; the Company wants the person signed in first (Ops 3).
            from poppy_tui.ui.safe import plain_line

            # "waiting for sign-in: why" or, held for its account, "waiting for sign-in as "A": why"
            # (the sign-in now, where it is another account's: both named): the head says the
            # first words once.
            waiting = (
                self.account_hold[1]
                if self.account_hold is not None and self.account_hold[0] == "other"
                else record.waiting_sign_in
            )
            why = waiting.removeprefix("waiting for sign-in").removeprefix(":").strip()
            why = plain_line(why if why.startswith("as ") else f"— {why}")
            head = (
                f"WAITING FOR SIGN-IN {why}. "
                f"Press {key('sign_in_to_send', 's')} to sign in; your approval is then sent again (before it expires)"
            )
        elif status == Status.SENDING:
            head = f"SENDING — attempt {record.attempt_count}"
            if record.next_attempt_at:
                retry_at = parse_stamp(record.next_attempt_at)
                if retry_at is not None:
                    wait = (retry_at - app_now(self)).total_seconds()
                    head += f"; next retry in {countdown(wait)}" if wait > 0 else "; retrying now"
        elif status == Status.PERFORMED:
            head = "PERFORMED — the Company confirmed it did this"
        elif status == Status.NOT_PERFORMED:
            head = "NOT PERFORMED — the Company did not do this"
        elif status == Status.OUTCOME_UNKNOWN:
            head = f"OUTCOME UNKNOWN — press {key('resolve', 'r')} once you have checked with the Company"
        elif status == Status.DECLINED:
            head = "DECLINED — you declined; the action was not performed"
        else:
            head = "EXPIRED — this can no longer be approved; the action was not performed"
        if status == Status.SENDING and record.waiting_sign_in:
            # Not "being sent": nothing goes out until the person signs in.
            return Content.assemble((head, "bold"), "\n", WAITING_SIGN_IN_MEANING)
        if status not in EXPLAINED:
            return Content.assemble((head, "bold"))
        return Content.assemble((head, "bold"), "\n", status_meaning(status))


# Attempt outcomes whose stored word would mislead in the list of attempts.
ATTEMPT_LABELS = {"sign_in_required": "the Company asked for sign-in; nothing performed"}


def _repeats(detail: str, attempt: AttemptRecord) -> bool:
    """Whether `detail` says no more than the attempt's line already does ("Performed" under
    "→ performed (HTTP 201)"): the outcome is said once, by the line and the banner."""
    said = {(attempt.outcome or "").replace("_", " ").lower()}
    if attempt.http_status is not None:
        said |= {f"{word} (http {attempt.http_status})" for word in said}
    return detail.strip().rstrip(".").lower() in said


def progress_content(record: OperationRecord, attempts: Sequence[AttemptRecord]) -> Content:
    """Attempts, retries and the final outcome, as the store recorded them."""
    parts: list[Content | str | tuple[str, str]] = []
    if not attempts:
        parts.append(Content.styled("Nothing has been sent for this operation.", "dim"))
    for attempt in attempts:
        line = f"#{attempt.number}  started {local_time(attempt.started_at)}"
        if attempt.finished_at is None:
            line += "  — no answer recorded yet (in flight, or the sender stopped)"
        else:
            line += f"  → {ATTEMPT_LABELS.get(attempt.outcome or '', attempt.outcome or '?')}"
            if attempt.http_status is not None:
                line += f" (HTTP {attempt.http_status})"
        parts += [line, "\n"]
        if attempt.detail and not _repeats(attempt.detail, attempt):
            # Details can quote a Company's error body.
            parts += ["    ", safe_content(attempt.detail), "\n"]
    if record.outcome_detail and not (attempts and _repeats(record.outcome_detail, attempts[-1])):
        parts += [("Detail: ", "bold"), safe_content(record.outcome_detail), "\n"]
    if record.outcome is not None:
        parts += [("Company's answer\n", "bold"), json_content(record.outcome)]
    return Content.assemble(*parts)


class ProgressView(Static):
    DEFAULT_CLASSES = "progress-view"

    def show_progress(self, record: OperationRecord, attempts: Sequence[AttemptRecord]) -> None:
        self.update(progress_content(record, attempts))
