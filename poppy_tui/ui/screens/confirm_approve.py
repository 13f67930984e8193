"""The second, deliberate step of approving: it repeats who and how much, and only `y` says yes.

Nothing here can take focus, so Enter does nothing; Esc or `n` cancel. The buttons are for
the mouse only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static

from poppy_tui.ui.format import checks_summary, plural
from poppy_tui.ui.safe import company_content, first_line, safe_line_content, strong
from poppy_tui.ui.screens.base import SCREENS_CSS
from poppy_tui.ui.widgets.countdown import Countdown
from poppy_tui.ui.who_asked import asked_by_parts


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


class MouseButton(Button, can_focus=False):
    """Clickable, never focused: a focused button would make Enter a decision."""


class ConfirmApproveScreen(ModalScreen[bool]):
    CSS_PATH = SCREENS_CSS
    AUTO_FOCUS = None
    BINDINGS = [
        Binding("y", "confirm", "Yes, approve", id="confirm_approve"),
        Binding("escape,n", "cancel", "Cancel", id="cancel_approve"),
    ]

    def __init__(
        self,
        *,
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
        asked_by: tuple[Any, ...] = (),
    ) -> None:
        super().__init__(id="confirm-approve")
        self.asked_by = asked_by  # who asked (ui/who_asked.py)
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

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")


class ResolveOutcomeScreen(ModalScreen["bool | None"]):
    """For an outcome nobody knows: the person checked with the Company and says what happened."""

    CSS_PATH = SCREENS_CSS

    AUTO_FOCUS = None
    BINDINGS = [
        Binding("p", "performed", "It was performed", id="resolve_performed"),
        Binding("x", "not_performed", "It was NOT performed", id="resolve_not_performed"),
        Binding("escape", "cancel", "Cancel", id="cancel_resolve"),
    ]

    def __init__(self, company_name: str) -> None:
        super().__init__(id="resolve-outcome")
        self.company_name = company_name

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


class ConfirmDeclineScreen(ModalScreen[bool]):
    """Declining is final for this revision: one key (`y`) confirms, with the Company and the
    summary repeated so the person knows which request they are turning down."""

    CSS_PATH = SCREENS_CSS

    AUTO_FOCUS = None
    BINDINGS = [
        Binding("y", "confirm", "Yes, decline", id="confirm_decline"),
        Binding("escape,n", "cancel", "Cancel", id="cancel_decline"),
    ]

    def __init__(
        self, *, company_name: str, company_domain: str, summary: str, approved: bool = False
    ) -> None:
        super().__init__(id="confirm-decline")
        self.company_name = company_name
        self.company_domain = company_domain
        self.summary = summary
        self.approved = approved

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
            consequence = (
                "Nothing will be done: your approval is withdrawn before it is sent, nothing is sent, "
                "and the action is not performed."
                if self.approved
                else "Nothing will be done: nothing is sent and the action is not performed."
            )
            yield Static(
                Content(consequence + " This is final for this revision."), id="decline-explain"
            )
            yield Static(Content("y declines.   Esc or n: keep it waiting."), id="decline-help")
            with Horizontal(id="decline-buttons"):
                yield MouseButton(Content("Decline (y)"), id="decline-yes")
                yield MouseButton(Content("Cancel (Esc)"), id="decline-no")
        yield Footer()

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "decline-yes")
