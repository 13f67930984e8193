"""Review one operation, then approve or decline it, deliberately.

- The Company's identity comes from the store's company record, shown in a fixed header
  above and outside the scrolling summary, so no summary can imitate it.
- Findings come first; focus starts on the scrollable body, never on a button.
- Approve (`a`) is dimmed for `arm_delay_seconds` after the screen opens or the terms
  change, and while the operation is expired or not open; it then asks for `y` in a modal.

This module lays the screen out, loads the operation, gathers the findings and says which keys
work when; its parts are the bases of ReviewScreen, each in a module of its own:
review_header.py (the fixed header), review_changes.py (what a new revision changed),
review_status.py (the banner and the sending-and-outcome section), review_decisions.py
(approve, decline, withdraw, resolve, sign in, and their dialogs), review_account.py (the
sign-in's account), review_resource.py (the resource as read now) and review_fit.py (a small
window's "more below" line).
"""

from __future__ import annotations

import time
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from poppy_tui.agent.store.records import OperationRecord, Status
from poppy_tui.ui.checks import Checked, check_record
from poppy_tui.ui.safe import json_content
from poppy_tui.ui.screens.base import PoppyScreen
from poppy_tui.ui.screens.review_account import AccountSection
from poppy_tui.ui.screens.review_changes import RevisionChanges, revision_change
from poppy_tui.ui.screens.review_decisions import DECLINABLE, ReviewDecisions
from poppy_tui.ui.screens.review_fit import ReviewFit
from poppy_tui.ui.screens.review_header import ReviewHeader
from poppy_tui.ui.screens.review_resource import ResourceSection
from poppy_tui.ui.screens.review_status import StatusSection
from poppy_tui.ui.widgets.countdown import Countdown, app_now
from poppy_tui.ui.widgets.discrepancy_panel import DiscrepancyPanel
from poppy_tui.ui.widgets.footer import PoppyFooter
from poppy_tui.ui.widgets.outcome_view import OutcomeBanner, ProgressView
from poppy_tui.ui.widgets.request_view import RequestView
from poppy_tui.ui.widgets.resource_view import ResourceView
from poppy_tui.ui.widgets.summary_view import SummaryText, SummaryView
from poppy_tui.ui.widgets.terms_table import TermsTable

__all__ = ["DECLINABLE", "ReviewScreen", "revision_change"]


class ReviewScreen(
    ReviewDecisions,
    StatusSection,
    RevisionChanges,
    ReviewHeader,
    AccountSection,
    ResourceSection,
    ReviewFit,
    PoppyScreen,
):
    TITLE_TEXT = "Review"
    AUTO_FOCUS = "#summary-view"
    BINDINGS = [
        Binding("a", "approve", "Approve…", id="approve"),
        Binding("d", "decline", "Decline…", id="decline"),
        Binding("w", "withdraw", "Withdraw", id="withdraw"),
        Binding("r", "resolve", "I checked…", id="resolve"),
        Binding("j", "toggle_json", "Operation JSON", id="toggle_json"),
        # Not in the footer (at 80 columns it would push Back, Help and Quit off): the section's
        # title names both keys, and Help lists them.
        Binding("v", "toggle_resource", "Now: show/hide", id="toggle_resource", show=False),
        Binding("g", "read_resource", "Read it again", id="read_resource", show=False),
        Binding("s", "sign_in", "Sign in, then send", id="sign_in_to_send"),
        # The person's word that the sign-in now is the operation's account (Ops 3), where
        # poppy-tui can't tell: its held approval then goes with it.
        Binding("u", "confirm_account", "Same account, send", id="confirm_account"),
        Binding("escape", "back", "Back", id="back"),
    ]

    def __init__(self, operation_row: int) -> None:
        super().__init__()
        self.operation_row = operation_row
        self.record: OperationRecord | None = None
        self.shown_revision_id: int | None = None
        self.checked: Checked | None = None
        self._armed_at = float("inf")
        self._arm_timer: Timer | None = None
        self._footer_state: tuple[object, ...] | None = None
        # Earlier operations for the same action whose approval's outcome is not known yet (Ops 7):
        # read on every load, so the hold lifts as soon as their outcome is known.
        self.held: list[Any] = []
        # Earlier operations for the same action that were performed: a warning, not a hold.
        self.done_before: list[Any] = []
        # The account signed in now at the Company, when it is another known account than the
        # one this account-owned operation belongs to (Ops 3): approving waits for sign-in as it.
        self.other_account: str | None = None
        # What the sign-in now is to this account-owned operation (store/owning_account.py):
        # another account, or not shown to be its own (then its approval is held until the
        # person says, with `confirm_account`); None for a Session's operation or once settled.
        self.account_standing: Any = None
        # The resource the operation changes, as read from the Company (agent/resource_read.py):
        # the latest read, the first one since the review opened (or new terms came), what the
        # terms name in it, and whether the section is folded (the person's choice wins).
        self.resource_read: Any = None
        self.opened_read: Any = None
        self.resource_findings: tuple[Any, ...] = ()
        self._resource_named: frozenset[str] = frozenset()
        self._resource_flagged: frozenset[str] = frozenset()
        self._resource_folded: bool | None = None
        self._reading = False

    # ---- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="review-header"):
            yield Static(id="company-line")
            yield Static(id="operation-line")
            yield Countdown(id="review-expiry")
        yield OutcomeBanner(id="outcome", key_for=self.poppy.key_for)
        with SummaryView(id="summary-view"):
            yield DiscrepancyPanel(id="discrepancies")
            yield Static(id="changes", classes="changes")
            yield Static(Content("Summary — written by the Company"), classes="section-title")
            yield SummaryText(id="summary")
            yield Static(Content("Terms — written by the Company"), classes="section-title")
            yield TermsTable(id="terms")
            yield Static(
                Content("Now"), classes="section-title resource-title", id="resource-title"
            )
            yield ResourceView(id="resource")
            yield Static(Content("What you asked for"), classes="section-title")
            yield RequestView(id="request")
            yield Static(Content("Sending and outcome"), classes="section-title")
            yield ProgressView(id="progress")
            yield Static(
                Content("Operation as received (j hides)"), classes="section-title", id="json-title"
            )
            yield Static(id="operation-json", classes="operation-json")
        yield Static(id="review-more", classes="review-more")  # ui/screens/review_fit.py
        yield PoppyFooter()

    async def on_mount(self) -> None:
        self.query_one("#operation-json").display = False
        self.query_one("#json-title").display = False
        self.query_one("#review-more").display = False
        self._follow_fit()
        self.set_interval(0.5, self._update_footer)
        # Not awaited here: a screen still mounting shows no footer, and its keys wait unanswered.
        self.refresh_data()

    # ---- loading --------------------------------------------------------------------------

    async def load(self) -> None:
        try:
            record = self.store.get_operation(self.operation_row)
        except KeyError:
            self.notify("That operation is not in the store.", severity="error", markup=False)
            return
        previous_id = self.shown_revision_id
        self.record = record
        held = self.store.earlier_in_doubt(record.id) if record.status.is_open else []
        done_before = self.store.same_action_performed(record.id) if record.status.is_open else []
        standing, other = self._standing_of(record)
        held_changed = (held, done_before, other, standing) != (
            self.held,
            self.done_before,
            self.other_account,
            self.account_standing,
        )
        self.held, self.done_before, self.other_account = held, done_before, other
        self.account_standing = standing
        if record.current.id != previous_id:
            await self._show_revision(record)
            if previous_id is not None:
                self._cancel_confirm()
                self._say_new_revision()  # ui/screens/review_changes.py
        elif held_changed and self.checked is not None:
            await self._show_findings()
        self._show_status(record)

    def refresh_data(self) -> None:
        self.run_exclusive(self.load, "review-load")

    async def _show_revision(self, record: OperationRecord) -> None:
        current = record.current
        self.checked = check_record(
            self.store, record, app_now(self), self.agent.config.min_read_seconds
        )
        self._show_header(record)  # ui/screens/review_header.py
        self.opened_read = None
        self.resource_findings = ()
        await self._show_findings()
        self._show_changes()  # ui/screens/review_changes.py
        self.query_one("#summary", SummaryText).show_summary(current.summary)
        self.query_one("#terms", TermsTable).show_terms(current.terms)
        self.query_one("#request", RequestView).show_request(record.request)
        self.query_one("#operation-json", Static).update(json_content(current.raw))
        self.shown_revision_id = current.id
        self.new_revision_shown()
        self.store.mark_seen(current.id)
        self.arm()
        await self._begin_resource(record)

    # ---- findings -----------------------------------------------------------------------

    @property
    def findings(self) -> tuple[Any, ...]:
        """Everything the panel shows, danger first: what holds the approval back (first among the
        dangers), the revision's checks and those of its resource as read now."""
        from poppy_tui.agent.review_words import review_findings

        return review_findings(
            self.record,
            held=self.held,
            done_before=self.done_before,
            other_account=self.other_account,
            account=self._account_findings(),
            checked=self.checked.findings if self.checked is not None else (),
            resource=self.resource_findings,
        )

    async def _show_findings(self) -> None:
        """The checks of the revision shown, after what holds it back (a DANGER, so it goes first)."""
        await self.query_one("#discrepancies", DiscrepancyPanel).set_findings(self.findings)

    # ---- arming ---------------------------------------------------------------------------

    def arm(self) -> None:
        """Start the arming delay again: keys typed before the person could read are not a decision."""
        delay = self.agent.config.arm_delay_seconds
        self._armed_at = time.monotonic() + delay
        if self._arm_timer is not None:
            self._arm_timer.stop()
        self._arm_timer = self.set_timer(delay + 0.02, self._update_footer)
        self._update_footer()

    def can_approve(self) -> bool:
        return self.approve_blocker() is None

    def arming_left(self) -> float:
        """Seconds until `a` works, after the screen opened or new terms arrived."""
        return max(0.0, self._armed_at - time.monotonic())

    def approve_blocker(self) -> str | None:
        """Why `a` does nothing now, in the person's words; None when it opens the confirmation."""
        blocked = self._approve_blocked()
        return None if blocked is None else blocked[0]

    def _approve_blocked(self) -> tuple[str, bool] | None:
        """(why, for good): for good when waiting won't help (unreadable, settled, expired)."""
        from poppy_tui.agent.review_words import approve_blocked

        return approve_blocked(
            self.record,
            loaded=self.checked is not None,
            readable=self.checked is not None and self.checked.operation is not None,
            shown_revision_id=self.shown_revision_id,
            now=app_now(self),
            held=self.held,
            other_account=self.other_account,
            arming_left=self.arming_left(),
        )

    def _update_footer(self) -> None:
        """Re-show the footer when what the keys can do changed: arming completed, the revision
        expired on screen, the status moved. Only then: each refresh rebuilds the footer."""
        state = (
            self.record.status if self.record else None,
            self.can_approve(),
            self.arming_left() > 0,
            bool(self.record and self.record.waiting_sign_in),
            self.other_account,
            self._unconfirmed(),
        )
        if state != self._footer_state:
            self._footer_state = state
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        status = self.record.status if self.record is not None else None
        if action == "approve":
            # None, not False: the footer keeps showing Approve, dimmed, so its absence never surprises.
            # The key, pressed while dimmed, still says why (on_key).
            return True if self.can_approve() else None
        if action == "decline":
            return status in DECLINABLE
        if action == "withdraw":
            return status == Status.APPROVED
        if action == "resolve":
            return status == Status.OUTCOME_UNKNOWN
        if action == "sign_in":
            # Waiting for sign-in, or held while signed in as another account than its own (Ops 3).
            return bool(
                self.record is not None
                and (self.record.waiting_sign_in or self.other_account or self._unconfirmed())
            )
        if action == "confirm_account":
            return self._unconfirmed()
        if action == "read_resource":
            return self._can_read()
        if action == "toggle_resource":
            return bool(self.resource_read is not None and self.resource_read.ok)
        return True

    # ---- viewing --------------------------------------------------------------------------

    def action_toggle_json(self) -> None:
        raw = self.query_one("#operation-json")
        raw.display = not raw.display
        self.query_one("#json-title").display = raw.display
        if raw.display:
            self.query_one("#summary-view", SummaryView).scroll_to_widget(
                self.query_one("#json-title")
            )

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.app.switch_mode("inbox")
