"""The second, deliberate step of approving: it repeats who and how much, and only `y` says yes.
The decline and "outcome unknown" dialogs are here too.

Nothing here can take focus, so Enter does nothing; Esc or `n` cancel. The buttons are for
the mouse only.

Every dialog follows the operation it describes while it is open (OperationDialog): on each
change of the store, and as the clock passes its expiry or grace period, it reads the operation
again and says what is true now, or closes with a line that says why. A dialog never offers a
choice the operation no longer has (an approval sent behind a decline dialog, a revision that
expired under the confirmation).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, TypeVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static

from poppy_tui.agent.store.records import Status
from poppy_tui.ui.format import checks_summary, countdown, parse_stamp, plural
from poppy_tui.ui.messages import StoreChanged
from poppy_tui.ui.safe import company_content, first_line, plain_line, safe_line_content, strong
from poppy_tui.ui.screens.base import SCREENS_CSS
from poppy_tui.ui.widgets.countdown import Countdown, app_now
from poppy_tui.ui.who_asked import asked_by_parts

# How often an open dialog looks at the clock (expiry, the grace period) between store changes.
FOLLOW_SECONDS = 0.25
# A screen this short gets the dialogs' compact layout.
SHORT_BELOW_LINES = 24

Answer = TypeVar("Answer")


def company_line(company_name: str, company_domain: str) -> Content:
    """The dialogs' "Company  <name>  at <domain>" line: the name marked when it has look-alike
    letters, both sanitised and cut to one line."""
    return Content.assemble(
        ("Company  ", "dim"),
        company_content(company_name, company_domain, 80, with_domain=False),  # ⚠ look-alikes
        ("  at ", "dim"),
        safe_line_content(company_domain, 80),
    )


def confirm_help(grace_seconds: float) -> str:
    """What y does, and what can still stop it on a line of its own: run together, the sentence
    wrapped at 80 columns as "until then, w" / "withdraws it", as if w were a word."""
    if grace_seconds <= 0:
        return "y approves this revision only; it is sent at once.\nEsc or n: cancel."
    return (
        f"y approves this revision only; it is sent in {grace_seconds:g} s.\n"
        "Until then, w withdraws it.   Esc or n: cancel."
    )


class OperationDialog(ModalScreen[Answer], Generic[Answer]):
    """A dialog about one operation that follows it while open: `follow(record)` is called on
    every change of the store and every FOLLOW_SECONDS (the clock moves expiries and grace
    periods on with no change in the store); it updates the dialog or closes it (`close`)."""

    def __init__(self, operation_row: int | None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.operation_row = operation_row
        self.closed_why: str | None = None  # the line said when it closed by itself

    def on_mount(self) -> None:
        self._fit_height()
        if self.operation_row is not None:
            self.set_interval(FOLLOW_SECONDS, self._look)
            self.call_after_refresh(self._look)

    def on_resize(self) -> None:
        self._fit_height()

    def _fit_height(self) -> None:
        # Below 24 lines the dialog drops its spacing and its mouse buttons, so what it says and
        # its keys (the help line, the footer) stay on screen (walk C7: they were cut off).
        self.set_class(self.app.size.height < SHORT_BELOW_LINES, "-short")

    def on_store_changed(self, message: StoreChanged) -> None:
        self._look()

    def dismiss(self, result: Any = None) -> Any:
        self._answered = True  # nothing more to follow: a look after this would close it again
        return super().dismiss(result)

    def _look(self) -> None:
        if (
            self.operation_row is None
            or getattr(self, "_answered", False)
            or not self.is_attached
            or self.app.screen is not self
        ):
            return
        try:
            record = self.app.agent.store.get_operation(self.operation_row)  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a locked database: the next look reads it again
            return
        self.follow(record, app_now(self))

    def follow(self, record: Any, now: datetime) -> None:
        """Say what is true now, or close: the subclass's."""

    def close(self, why: str | None, answer: Any, severity: str = "warning") -> None:
        """Close by itself, saying why (None: the review says it already, in its own toast)."""
        self.closed_why = why or ""
        if why:
            self.app.notify(why, severity=severity, markup=False, timeout=10)  # type: ignore[arg-type]
        self.dismiss(answer)


class MouseButton(Button, can_focus=False):
    """Clickable, never focused: a focused button would make Enter a decision."""


class ConfirmApproveScreen(OperationDialog[bool]):
    CSS_PATH = SCREENS_CSS
    AUTO_FOCUS = None
    BINDINGS = [
        Binding("y", "confirm", "Yes, approve", id="confirm_approve"),
        Binding("escape,n", "cancel", "Cancel", id="cancel_approve"),
    ]

    def __init__(
        self,
        *,
        operation_row: int | None = None,
        company_name: str,
        company_domain: str,
        amount: str | None,
        dangers: int,
        warnings: int,
        operation_id: str,
        revision: str,
        revision_id: int,
        expires_at: datetime,
        grace_seconds: float,
        resource_note: tuple[Content, bool] | None = None,
        unseen: bool = False,
        asked_by: tuple[Any, ...] = (),
    ) -> None:
        super().__init__(operation_row, id="confirm-approve")
        # Part of the summary and terms was never on screen (a small window): said, not refused.
        self.unseen = unseen
        self.asked_by = asked_by  # who asked (ui/who_asked.py)
        self.expired = False  # the revision expired while the dialog was open: nothing to approve
        # The resource as read again just before this dialog (review.py): (line, changed since
        # the review opened).
        self.resource_note = resource_note
        self.company_name = company_name
        self.company_domain = company_domain
        self.amount = amount
        self.dangers = dangers
        self.warnings = warnings
        self.operation_id = operation_id
        self.revision = revision
        self.revision_id = revision_id
        self.expires_at = expires_at
        self.grace_seconds = grace_seconds

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(Content("Approve this operation?"), id="confirm-title")
            yield Static(
                company_line(self.company_name, self.company_domain),
                id="confirm-company",
            )
            if self.asked_by:
                yield Static(
                    Content.assemble(*asked_by_parts(self.asked_by, label="Asked by ")),
                    id="confirm-asked",
                )
            amount = (
                Content.assemble(("Amount   ", "dim"), strong(self.amount, 60))
                if self.amount
                else Content.assemble(
                    ("Amount   ", "dim"), "no amount in the terms — check the summary"
                )
            )
            yield Static(amount, id="confirm-amount")
            if self.dangers or self.warnings:
                yield Static(
                    Content(
                        f"DANGER: {checks_summary(self.dangers, self.warnings)} on the review "
                        "screen. Approve only if you have read them and still agree."
                        if self.dangers
                        else f"WARNING: {plural(self.warnings, 'warning')} on the review screen."
                    ),
                    id="confirm-findings",
                    classes="-danger" if self.dangers else "-warning",
                )
            if self.resource_note is not None:
                note, changed = self.resource_note
                yield Static(note, id="confirm-resource", classes="-danger" if changed else "")
            if self.unseen:
                yield Static(
                    Content(
                        "NOTE: part of the summary and terms was not on screen. Esc, then PgDn on "
                        "the review, to read all of it."
                    ),
                    id="confirm-unseen",
                )
            yield Static(
                Content.assemble(
                    ("Revision ", "dim"),
                    safe_line_content(self.revision, 80),
                    (" of ", "dim"),
                    safe_line_content(self.operation_id, 80),
                ),
                id="confirm-revision",
            )
            yield Countdown(self.expires_at, id="confirm-expiry")
            yield Static(Content(confirm_help(self.grace_seconds)), id="confirm-help")
            with Horizontal(id="confirm-buttons"):
                yield MouseButton(Content("Approve (y)"), variant="error", id="confirm-yes")
                yield MouseButton(Content("Cancel (Esc)"), id="confirm-no")
        # Its own keys only: the review's keys behind it do nothing while it is open.
        yield Footer()

    def follow(self, record: Any, now: datetime) -> None:
        from poppy_tui.ui.format import record_status_label

        if record.current.id != self.revision_id:
            # The review behind says so in its own toast ("The Company sent new terms…").
            self.close(None, False)
        elif not record.status.is_open:
            self.close(
                f"Nothing was approved: it is {record_status_label(record)} now "
                "(it changed while you were confirming).",
                False,
            )
        elif record.current.expires_at <= now and not self.expired:
            self._show_expired()

    def _show_expired(self) -> None:
        """Past expires_at the revision can't be approved, and nothing would be sent: say so, and
        take away what says otherwise (the grace period, "it is sent in", the approve button)."""
        self.expired = True
        self.query_one("#confirm-title", Static).update(
            Content.styled("EXPIRED — this revision can no longer be approved", "bold")
        )
        self.query_one("#confirm-help", Static).update(
            Content(
                "It expired while this dialog was open: nothing was approved and nothing is "
                "sent.\nEsc or n: close."
            )
        )
        self.query_one("#confirm-yes").display = False
        self.query_one("#confirm-expiry", Countdown).set_target(self.expires_at)  # now, not in 1 s
        self.set_class(True, "-expired")
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "confirm":
            return not self.expired
        return True

    def action_confirm(self) -> None:
        if not self.expired:
            self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes" and not self.expired)


class ResolveOutcomeScreen(OperationDialog["bool | None"]):
    """For an outcome nobody knows: the person checked with the Company and says what happened."""

    CSS_PATH = SCREENS_CSS

    AUTO_FOCUS = None
    BINDINGS = [
        Binding("p", "performed", "It was performed", id="resolve_performed"),
        Binding("x", "not_performed", "It was NOT performed", id="resolve_not_performed"),
        Binding("escape", "cancel", "Cancel", id="cancel_resolve"),
    ]

    def __init__(self, company_name: str, operation_row: int | None = None) -> None:
        super().__init__(operation_row, id="resolve-outcome")
        self.company_name = company_name

    def follow(self, record: Any, now: datetime) -> None:
        from poppy_tui.ui.format import record_status_label

        if record.status != Status.OUTCOME_UNKNOWN:
            # Found out meanwhile (poppy-tui asked the Company again), or recorded elsewhere.
            self.close(
                f"Nothing to record: it is {record_status_label(record)} now "
                "(found out while this dialog was open).",
                None,
                "information",
            )

    def compose(self) -> ComposeResult:
        with Vertical(id="resolve-dialog"):
            yield Static(Content("What did you find out?"), id="resolve-title")
            yield Static(
                Content.assemble(
                    "poppy sent your approval to ",
                    strong(self.company_name, 80),
                    " but never got a definite answer. Check with the Company (your order page, an e-mail, "
                    "their support) before you answer: if you say it was not performed and approve new terms, "
                    "the action could happen twice.",
                ),
                id="resolve-explain",
            )
            yield Static(
                Content(
                    "p: I checked — it WAS performed      x: I checked — it was NOT performed      Esc: not yet"
                ),
                id="resolve-help",
            )
            with Horizontal(id="resolve-buttons"):
                yield MouseButton(Content("It was performed (p)"), id="resolve-yes")
                yield MouseButton(Content("It was not performed (x)"), id="resolve-no")
                yield MouseButton(Content("Cancel (Esc)"), id="resolve-cancel")
        yield Footer()

    def action_performed(self) -> None:
        self.dismiss(True)

    def action_not_performed(self) -> None:
        self.dismiss(False)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss({"resolve-yes": True, "resolve-no": False}.get(event.button.id or ""))


class ConfirmDeclineScreen(OperationDialog[bool]):
    """Declining is final for this revision: one key (`y`) confirms, with the Company and the
    summary repeated so the person knows which request they are turning down. Opened during the
    grace period, it counts the grace period down, and once the approval is sent it closes and
    says how it went: what it said until then ("nothing is sent") is no longer true."""

    CSS_PATH = SCREENS_CSS

    AUTO_FOCUS = None
    BINDINGS = [
        Binding("y", "confirm", "Yes, decline", id="confirm_decline"),
        Binding("escape,n", "cancel", "Cancel", id="cancel_decline"),
    ]

    def __init__(
        self,
        *,
        company_name: str,
        company_domain: str,
        summary: str,
        approved: bool = False,
        operation_row: int | None = None,
        revision_id: int | None = None,
        send_after: str | None = None,
    ) -> None:
        super().__init__(operation_row, id="confirm-decline")
        self.company_name = company_name
        self.company_domain = company_domain
        self.summary = summary
        self.approved = approved
        self.revision_id = revision_id
        self.send_after = send_after  # while approved: when the grace period ends
        self.too_late = False  # the approval is being sent: y declines nothing any more

    def consequence(self, now: datetime | None = None) -> str:
        if not self.approved:
            return (
                "Nothing will be done: nothing is sent and the action is not performed. "
                "This is final for this revision."
            )
        ends = parse_stamp(self.send_after)
        left = None if ends is None or now is None else (ends - now).total_seconds()
        when = (
            f"Your approval is sent in {countdown(left)} unless you decline now. "
            if left is not None and left > 0
            else "The grace period is over: your approval may be on its way now. "
        )
        return (
            when + "Declined, your approval is withdrawn before it is sent: nothing is sent, and "
            "the action is not performed. This is final for this revision."
        )

    def compose(self) -> ComposeResult:
        with Vertical(id="decline-dialog"):
            yield Static(Content("Decline this operation?"), id="decline-title")
            yield Static(
                company_line(self.company_name, self.company_domain),
                id="decline-company",
            )
            yield Static(
                Content.assemble(("Summary  ", "dim"), first_line(self.summary, 240)),
                id="decline-summary",
            )
            yield Static(Content(self.consequence(app_now(self))), id="decline-explain")
            yield Static(Content("y declines.   Esc or n: keep it waiting."), id="decline-help")
            with Horizontal(id="decline-buttons"):
                yield MouseButton(Content("Decline (y)"), id="decline-yes")
                yield MouseButton(Content("Cancel (Esc)"), id="decline-no")
        yield Footer()

    def follow(self, record: Any, now: datetime) -> None:
        status = record.status
        if self.revision_id is not None and record.current.id != self.revision_id:
            self.close(None, False)  # new terms: the review behind says so in its own toast
            return
        if status in (Status.PENDING, Status.WITHDRAWN, Status.APPROVED):
            if record.current.expires_at <= now:
                self.close("Nothing to decline: it expired; the action is not performed.", False)
                return
            self.approved = status == Status.APPROVED
            self.send_after = record.send_after if self.approved else None
            self._say(self.consequence(now))
            return
        if status == Status.SENDING and not record.waiting_sign_in:
            # Too late to decline, and not over yet: said here, closed with how it ends.
            if not self.too_late:
                self.too_late = True
                self.query_one("#decline-title", Static).update(
                    Content.styled("Too late to decline: your approval is being sent", "bold")
                )
                self.query_one("#decline-help", Static).update(Content("Esc or n: close."))
                self.query_one("#decline-yes").display = False
                self.refresh_bindings()
            self._say(
                "The grace period ended while this dialog was open, and your approval is being "
                "sent now; it can no longer be declined. This closes with how it ends."
            )
            return
        self.close(declined_too_late(status, record), False)

    def _say(self, text: str) -> None:
        explain = self.query_one("#decline-explain", Static)
        if str(explain.render()) != text:
            explain.update(Content(text))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "confirm":
            return not self.too_late
        return True

    def action_confirm(self) -> None:
        if not self.too_late:
            self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "decline-yes" and not self.too_late)


def declined_too_late(status: Status, record: Any) -> str:
    """Why a decline dialog closed by itself: what happened to the operation while it was open."""
    name = plain_line(record.company.name, 60)
    if status == Status.SENDING:
        if record.waiting_sign_in:
            return (
                "Not declined: your approval was sent, and the Company asked for sign-in first; "
                "it is kept until its terms expire (the review says what to do)."
            )
        return (
            "Not declined: the grace period ended while the dialog was open, and your approval is "
            "being sent now; the review says how it ends."
        )
    if status == Status.PERFORMED:
        return (
            f"Not declined: your approval was sent when the grace period ended, and {name} "
            "performed it."
        )
    if status == Status.NOT_PERFORMED:
        return f"Nothing to decline: your approval was sent and {name} did not perform it."
    if status == Status.OUTCOME_UNKNOWN:
        return (
            "Not declined: your approval was sent, and whether it was performed is not known; "
            "check with the Company, then press r on the review."
        )
    if status == Status.DECLINED:
        return "It is declined already (elsewhere): nothing is sent."
    return "Nothing to decline: it expired; the action is not performed."
