"""Where an operation stands: waiting, the grace period, sending and retries, the outcome."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

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
        # When the person declined an earlier revision of this operation (agent/earlier_decline.py).
        self.declined_before: str | None = None
        # Its Company ran in a demo that has ended (agent/demo_marker.py): the line to say, or None.
        self.company_stopped: str | None = None
        # An approval's agent/lifecycle Explanation (Agent.explain), the words `show` prints.
        self.where_it_stands: Any = None

    def on_mount(self) -> None:
        # The grace countdown moves by the second and the arming delay by tenths: a tenth of a
        # second keeps both from lagging visibly.
        self.set_interval(0.1, self._refresh_text)

    def show_record(self, record: OperationRecord) -> None:
        self.record = record
        for status in Status:
            self.set_class(record.status == status, f"-{status.value.replace('_', '-')}")
        self._refresh_text()

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
            from poppy_tui.ui.safe import plain_error

            return Content.assemble(
                (
                    f"WAITING FOR YOUR DECISION — approving is unavailable on this machine   "
                    f"{key('decline', 'd')}: decline…",
                    "bold",
                ),
                "\n",
                f"Approvals can't be signed here: {plain_error(unsignable, 600)}",
            )
        if self.company_stopped and status in (Status.APPROVED, Status.SENDING):
            # Not "SENDING — attempt 6": nothing can reach a demo Company that has stopped.
            return Content.assemble(
                (
                    "NOT SENT — the demo Company has stopped, so this approval will not be sent",
                    "bold",
                ),
                "\n",
                self.company_stopped,
            )
        if status == Status.PENDING:
            head = f"WAITING FOR YOUR DECISION — {approve}   {key('decline', 'd')}: decline…"
        elif status == Status.WITHDRAWN:
            head = (
                f"WITHDRAWN — nothing was sent. {approve.replace('approve…', 'approve again…')}   "
                f"{key('decline', 'd')}: decline…"
            )
            if self.declined_before:
                return Content.assemble(
                    (head, "bold"), "\n", declined_before_line(self.declined_before)
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
                where = self.where_it_stands
                if where is not None and not where.on_its_way:
                    # Held (another account, unsignable here, expired): said, not "sending now".
                    return Content.assemble(
                        ("APPROVED — not sent", "bold"), "\n", where_line(where)
                    )
        elif status == Status.SENDING and record.waiting_sign_in:
            # The approval is kept; the Company wants the person signed in first (Ops 3).
            from poppy_tui.ui.safe import plain_line

            # "waiting for sign-in: why" or, held for its account, "waiting for sign-in as "A": why":
            # the head says the first words once.
            why = (
                record.waiting_sign_in.removeprefix("waiting for sign-in").removeprefix(":").strip()
            )
            if not why.startswith("as "):
                # The Company's ask once, under a short head (walk K7: six lines at 80x24, the
                # ask said in the head, the meaning, the attempt and the detail).
                return Content.assemble(
                    (
                        f"WAITING FOR SIGN-IN — {key('sign_in_to_send', 's')}: sign in, and your "
                        "approval is sent",
                        "bold",
                    ),
                    "\n",
                    f"You approved; the Company asked: {plain_line(why, 300)}. Nothing is sent "
                    "until then; your approval is kept until the terms expire.",
                )
            why = plain_line(why)
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
        if status == Status.PENDING and self.declined_before:
            # Not a plain "waiting": the person said no to this action once already.
            return Content.assemble(
                (head, "bold"),
                "\n",
                declined_before_line(self.declined_before),
            )
        if status == Status.SENDING and self.where_it_stands is not None:
            # Where it stands as the lifecycle explains it (as `show` says it), then the promise.
            return Content.assemble(
                (head, "bold"),
                "\n",
                f"{where_line(self.where_it_stands)}. Retries reuse the same approval, so it is "
                "done at most once.",
            )
        return Content.assemble((head, "bold"), "\n", status_meaning(status))


def where_line(where: Any) -> str:
    """An Explanation's sentence (Company-written detail in it made one safe line), with its
    time as every screen writes one."""
    from poppy_tui.ui.safe import plain_line

    said = plain_line(where.sentence(local_time), 400)
    return said[:1].upper() + said[1:]


def declined_before_line(stamp: str) -> str:
    return (
        f"You declined an earlier revision on {local_time(stamp)}; the Company sent this new one "
        "(to a later request). Nothing has been done."
    )


# Attempt outcomes whose stored word would mislead in the list of attempts.
ATTEMPT_LABELS = {
    "sign_in_required": "the Company asked for sign-in; nothing performed",
    "not_sent": "not delivered: nothing reached the Company",
}


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
    if (
        record.outcome_detail
        and not (attempts and _repeats(record.outcome_detail, attempts[-1]))
        and not (record.waiting_sign_in and record.outcome_detail in record.waiting_sign_in)
    ):  # (a sign-in ask the banner says already: once)
        parts += [("Detail: ", "bold"), safe_content(record.outcome_detail), "\n"]
    if record.outcome is not None:
        parts += [("Company's answer\n", "bold"), json_content(record.outcome)]
    return Content.assemble(*parts)


class ProgressView(Static):
    DEFAULT_CLASSES = "progress-view"

    def show_progress(self, record: OperationRecord, attempts: Sequence[AttemptRecord]) -> None:
        self.update(progress_content(record, attempts))
