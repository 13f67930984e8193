"""Where an operation stands: waiting, the grace period, sending and retries, the outcome."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from textual.content import Content
from textual.widgets import Static

from poppy_tui.agent.store.records import AttemptRecord, OperationRecord, Status
from poppy_tui.ui.format import local_time, parse_stamp
from poppy_tui.ui.safe import json_content, safe_content
from poppy_tui.ui.widgets.countdown import app_now

KeyFor = Callable[[str, str], str]


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
        from poppy_tui.agent.review_words import banner

        record = self.record
        assert record is not None
        said = banner(
            record,
            app_now(self),
            key_for=self.key_for,
            arming_left=self.arming_left(),
            unsignable=self.unsignable(),
            company_stopped=self.company_stopped,
            declined_before=self.declined_before,
            where_it_stands=self.where_it_stands,
            account_hold=self.account_hold,
        )
        if said.meaning is None:
            return Content.assemble((said.head(), "bold"))
        return Content.assemble((said.head(), "bold"), "\n", said.meaning)


# Attempt outcomes whose stored word would mislead in the list of attempts (shared with the web page).
from poppy_tui.agent.status_words import ATTEMPT_LABELS  # noqa: E402


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
