"""Review one operation, then approve or decline it, deliberately.

- The Company's identity comes from the store's company record, shown in a fixed header
  above and outside the scrolling summary, so no summary can imitate it.
- Findings come first; focus starts on the scrollable body, never on a button.
- Approve (`a`) is dimmed for `arm_delay_seconds` after the screen opens or the terms
  change, and while the operation is expired or not open; it then asks for `y` in a modal.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from poppy_tui.agent.store.records import OperationRecord, Status
from poppy_tui.safety.account_owner import owner_line
from poppy_tui.ui.checks import Checked, check_record
from poppy_tui.ui.format import interface_label, local_time, status_label
from poppy_tui.ui.safe import (
    company_content,
    company_label,
    diff_revisions,
    json_content,
    plain_error,
    plain_line,
    safe_content,
    safe_line_content,
    strong,
)
from poppy_tui.ui.screens.base import PoppyScreen
from poppy_tui.ui.who_asked import asked_by_parts
from poppy_tui.ui.widgets.footer import PoppyFooter
from poppy_tui.ui.widgets.countdown import Countdown, app_now
from poppy_tui.ui.widgets.discrepancy_panel import DiscrepancyPanel, badge_counts
from poppy_tui.ui.widgets.outcome_view import OutcomeBanner, ProgressView
from poppy_tui.ui.widgets.request_view import RequestView
from poppy_tui.ui.widgets.resource_view import ResourceView
from poppy_tui.ui.screens.review_fit import ReviewFit
from poppy_tui.ui.screens.review_account import AccountSection
from poppy_tui.ui.screens.review_resource import ResourceSection
from poppy_tui.ui.widgets.summary_view import SummaryText, SummaryView
from poppy_tui.ui.widgets.terms_table import TermsTable

DECLINABLE = (Status.PENDING, Status.WITHDRAWN, Status.APPROVED)


def revision_change(diff: Any) -> str:
    """ "new terms" when the summary or terms changed, "new expiry" when only the expiry did
    (poppy_tui.safety's RevisionKind), "same" otherwise."""
    label = diff.kind.label
    return label if label in ("new terms", "new expiry") else "same"


log = logging.getLogger(__name__)


class ReviewScreen(AccountSection, ResourceSection, ReviewFit, PoppyScreen):
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
                what = self._change_kind()
                self.notify(
                    "The Company sent a new expiry for the same terms. An approval covers one revision only, "
                    "so this one needs your decision."
                    if what == "new expiry"
                    else "The Company sent new terms. Read them again; an approval covers one revision only.",
                    title="New revision",
                    severity="warning",
                    markup=False,
                    timeout=8,
                )
        elif held_changed and self.checked is not None:
            await self._show_findings()
        self._show_status(record)

    def refresh_data(self) -> None:
        self.run_exclusive(self.load, "review-load")

    async def _show_revision(self, record: OperationRecord) -> None:
        current = record.current
        company = record.company
        revisions = self.store.revisions(record.id)
        self.checked = check_record(
            self.store, record, app_now(self), self.agent.config.min_read_seconds
        )

        self.query_one("#company-line", Static).update(
            Content.assemble(
                ("Company  ", "dim"),
                company_content(
                    company.name, company.domain, 80, with_domain=False
                ),  # the domain follows
                ("   discovered at  ", "dim"),
                strong(company.domain, 80),
                ("   ", ""),
                safe_line_content(company.base_url, 80).stylize("dim"),
                "" if company.supports_operations else "   (does not advertise operations v2)",
                "\n" + warning
                if (warning := company_label(company.name, company.domain).warning)
                else "",
            )
        )
        number = next((i for i, r in enumerate(revisions, 1) if r.id == current.id), len(revisions))
        what = self._change_kind()
        of = f"  ({number} of {len(revisions)}" + (
            f", {what} only)" if what == "new expiry" else ")"
        )
        self.query_one("#operation-line", Static).update(
            Content.assemble(
                ("Operation  ", "dim"),
                safe_line_content(record.operation_id, 80),
                ("   revision  ", "dim"),
                safe_line_content(current.revision, 80),
                (of, "dim"),
                # A line of its own: run on, it wrapped at 80 columns wherever the IDs' lengths put
                # the edge, "via" / "MCP" among others (Textual breaks at any space, no-break ones too).
                ("\nvia ", "dim"),
                interface_label(record.interface),
                ("   received ", "dim"),
                local_time(current.received_at),
                *asked_by_parts(self.store.asked_by(record.id)),  # ui/who_asked.py
                # Returned signed in: the account's (Ops 3), and which one, where known.
                *(
                    (("\nbelongs to ", "dim"), owner_line(record.account))
                    if record.account_owned
                    else ()
                ),
            )
        )
        self.query_one("#review-expiry", Countdown).set_target(current.expires_at)
        self.opened_read = None
        self.resource_findings = ()
        await self._show_findings()
        changes = self.query_one("#changes", Static)
        checked = self.checked
        if (
            checked.previous_operation is not None
        ):  # implies a readable current and a previous revision
            changes.update(
                self._changes_content(
                    checked.previous, checked.previous_operation, checked.operation
                )
            )
            changes.display = True
        else:
            changes.display = False
        self.query_one("#summary", SummaryText).show_summary(current.summary)
        self.query_one("#terms", TermsTable).show_terms(current.terms)
        self.query_one("#request", RequestView).show_request(record.request)
        self.query_one("#operation-json", Static).update(json_content(current.raw))
        self.shown_revision_id = current.id
        self.new_revision_shown()
        self.store.mark_seen(current.id)
        self.arm()
        await self._begin_resource(record)

    # ---- the resource, as read now ---------------------------------------------------------

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

    def _change_kind(self) -> str | None:
        checked = self.checked
        if checked is None or checked.previous_operation is None or checked.operation is None:
            return None
        return revision_change(diff_revisions(checked.previous_operation, checked.operation))

    def _changes_content(self, previous: Any, previous_operation: Any, operation: Any) -> Content:
        seen = "you saw" if previous.seen_at else "before this one (you did not open it)"
        what = revision_change(diff_revisions(previous_operation, operation))
        label = {"new terms": "NEW TERMS: ", "new expiry": "NEW EXPIRY: "}.get(
            what, "NEW REVISION: "
        )
        lines: list[Content | str | tuple[str, str]] = [
            (label, "bold"),
            "only the expiry changed since revision "
            if what == "new expiry"
            else "changed since revision ",
            safe_line_content(previous.revision, 80),
            f" {seen}. An approval covers one revision, so this one needs your decision.\n",
        ]
        diff = diff_revisions(previous_operation, operation)
        if not diff.changed:
            lines.append(Content.styled("The summary, terms and expiry are the same.", "dim"))
        for change in diff.terms_changes:
            old = (
                safe_content(change.old)
                if change.old is not None
                else Content.styled("(absent)", "dim")
            )
            new = (
                safe_content(change.new)
                if change.new is not None
                else Content.styled("(absent)", "dim")
            )
            lines += [
                ("  " + change.path, "bold"),
                f"  {change.kind}\n",
                ("    was  ", "dim"),
                old,
                "\n",
                ("    now  ", "dim"),
                new,
                "\n",
            ]
        if diff.expires_changed:
            lines += [
                ("  expires_at", "bold"),
                "  changed\n",
                ("    was  ", "dim"),
                safe_content(previous_operation.expires_at_text),
                (f"  = {local_time(previous_operation.expires_at)}", "dim"),
                "\n",
                ("    now  ", "dim"),
                safe_content(operation.expires_at_text),
                (f"  = {local_time(operation.expires_at)}", "dim"),
                "\n",
            ]
        if diff.summary_diff:
            lines.append(("  summary (- was, + now)\n", "bold"))
            for line in diff.summary_diff:
                if line.startswith(("--- ", "+++ ")):
                    continue
                style = (
                    "$error"
                    if line.startswith("-")
                    else "$success"
                    if line.startswith("+")
                    else "dim"
                )
                lines += ["    ", safe_content(line).stylize(style), "\n"]
        return Content.assemble(*lines)

    def _show_status(self, record: OperationRecord) -> None:
        expiry = self.query_one("#review-expiry", Countdown)
        # Once decided for good, the expiry no longer matters: a live countdown would say it does.
        expiry.settle(
            status_label(record.status)
            if record.status.is_final and record.status != Status.EXPIRED
            else None
        )
        banner = self.query_one("#outcome", OutcomeBanner)
        banner.arming_left = self.arming_left
        banner.unsignable = lambda: getattr(self.app, "unsignable", None)
        from poppy_tui.agent.earlier_decline import declined_earlier

        banner.declined_before = declined_earlier(self.store, record)
        banner.company_stopped = self._company_stopped(record)
        banner.where_it_stands = self._where_it_stands(record)
        banner.account_hold = self._account_hold(record)
        banner.show_record(record)
        self.query_one("#progress", ProgressView).show_progress(
            record, self.store.attempts(record.id)
        )
        self._follow_status()
        self._update_footer()

    def _where_it_stands(self, record: OperationRecord) -> Any:
        """The lifecycle's explanation of an approval on its way or held (Agent.explain): the
        words `poppy-tui show` prints, so the two can't disagree. None for other states."""
        explain = getattr(self.agent, "explain", None)
        if explain is None or record.status not in (Status.APPROVED, Status.SENDING):
            return None
        try:
            return explain(record.id)
        except Exception:  # logged: a locked store; the banner says the status alone
            log.warning("explaining operation %s failed", record.id, exc_info=True)
            return None

    def _company_stopped(self, record: OperationRecord) -> str | None:
        """Its Company ran in a demo that has ended (agent/demo_marker.py): what to say, or None."""
        stopped = getattr(self.app, "stopped_demo", None)
        if stopped is None or not self.poppy.stopped_company(record.company.base_url):
            return None
        from poppy_tui.agent.demo_marker import stopped_demo_line

        return stopped_demo_line(stopped, plain_line(record.company.name, 60))

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

    def action_sign_in(self) -> None:
        """The approval met a sign-in challenge and is kept: sign in, and the dispatcher sends it
        again (it checks on every pass whether the agent is signed in at that Company)."""
        record = self.record
        if record is None or not (
            record.waiting_sign_in or self.other_account or self._unconfirmed()
        ):
            return
        from poppy_tui.ui.screens.signin import open_sign_in

        def done(signed_in: bool | None) -> None:
            if signed_in and record.waiting_sign_in:
                self.notify("Signed in. The approval is being sent again.", markup=False)
            self.refresh_data()

        open_sign_in(self.app, record.company.id, None, done)

    # ---- decisions ------------------------------------------------------------------------

    def on_key(self, event: Any) -> None:
        # A dimmed binding lets its key through to here: a key that does nothing says why, or a
        # person who pressed it early may think they approved.
        if event.key != self.poppy.key_for("approve", "a") or self.app.screen is not self:
            return
        blocked = self._approve_blocked()
        if blocked is not None:
            event.stop()
            self._say_why_not_approved(blocked)

    def _say_why_not_approved(self, blocked: tuple[str, bool]) -> None:
        from poppy_tui.agent.review_words import not_approved_message

        self.notify(not_approved_message(blocked), severity="warning", markup=False, timeout=3)

    def action_approve(self) -> None:
        blocked = self._approve_blocked()
        if blocked is not None:
            # A key that does nothing says why: a person who pressed it early may think it approved.
            self._say_why_not_approved(blocked)
            return
        if self.record is None or self.checked is None or self.shown_revision_id is None:
            return
        # Refused at `a` when nothing could sign (so send) the approval; the message says the fix.
        signing_problem = getattr(self.agent, "signing_problem", None)
        problem = signing_problem() if signing_problem is not None else None
        if problem:
            self.poppy.unsignable = (
                problem  # the banner says why, and the fix, where the person looks
            )
            self.refresh_data()
            self.notify(
                "Can't approve: approvals can't be signed on this machine (the banner above says "
                "why and how to fix it). Nothing was approved.",
                severity="error",
                markup=False,
                timeout=8,
            )
            return
        if self._can_read():
            # Read the resource again first, so the person confirms against a read seconds old.
            self.run_worker(
                self._confirm_after_reading(self.record.id, self.shown_revision_id),
                group="confirm-read",
                exclusive=True,
            )
            return
        self._open_confirm(None)

    def _open_confirm(self, resource_note: tuple[Content, bool] | None) -> None:
        if self.record is None or self.checked is None or self.shown_revision_id is None:
            return
        from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen

        record = self.record
        revision_id = self.shown_revision_id
        dangers, warnings = badge_counts(self.findings)

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._approve(record.id, revision_id)

        self.app.push_screen(
            ConfirmApproveScreen(
                operation_row=record.id,
                company_name=record.company.name,
                company_domain=record.company.domain,
                amount=self.checked.amount,
                dangers=dangers,
                warnings=warnings,
                operation_id=record.operation_id,
                revision=record.current.revision,
                revision_id=revision_id,
                expires_at=record.current.expires_at,
                grace_seconds=self.agent.config.grace_seconds,
                resource_note=resource_note,
                asked_by=tuple(self.store.asked_by(record.id)),
                unseen=self.is_short() and not self.summary_seen,
            ),
            confirmed,
        )

    def _approve(self, operation_row: int, revision_id: int) -> None:
        # The modal showed one revision; if another replaced it meanwhile, that one is unreviewed.
        if revision_id != self.shown_revision_id:
            self.notify(
                "New terms arrived while you were confirming; nothing was approved.",
                severity="warning",
                markup=False,
            )
            return
        try:
            self.agent.approve(operation_row, revision_id)
        except Exception as exc:  # noqa: BLE001 - said in a toast (StateError: expired, superseded, decided elsewhere)
            self.notify(f"Not approved: {plain_error(exc)}", severity="error", markup=False)
        else:
            # No number here: a toast can't count down, and the banner above does.
            self.notify(
                f"Approved. It is sent when the countdown above ends; press "
                f"{self.poppy.key_for('withdraw', 'w')} to withdraw before then.",
                markup=False,
            )
        self.refresh_data()

    def action_decline(self) -> None:
        """Declining is final, so it asks once (one key) with the Company and summary repeated."""
        if self.record is None or self.record.status not in DECLINABLE:
            return
        from poppy_tui.ui.screens.confirm_approve import ConfirmDeclineScreen

        record = self.record
        revision_id = record.current.id

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._decline(record.id, revision_id)

        self.app.push_screen(
            ConfirmDeclineScreen(
                company_name=record.company.name,
                company_domain=record.company.domain,
                summary=record.current.summary,
                approved=record.status == Status.APPROVED,
                operation_row=record.id,
                revision_id=revision_id,
                send_after=record.send_after,
            ),
            confirmed,
        )

    def _decline(self, operation_row: int, revision_id: int) -> None:
        try:
            self.agent.decline(operation_row, revision_id)
        except Exception as exc:  # noqa: BLE001 - said in a toast; nothing was decided
            self.notify(f"Not declined: {plain_error(exc)}", severity="error", markup=False)
        # Done: the banner says so, once.
        self.refresh_data()

    def action_withdraw(self) -> None:
        if self.record is None or self.record.status != Status.APPROVED:
            return
        try:
            self.agent.withdraw(self.record.id)
        except Exception as exc:  # noqa: BLE001 - said in a toast: too late, the first attempt started
            self.notify(f"Could not withdraw: {plain_error(exc)}", severity="error", markup=False)
        else:
            # The "Approved. It is sent when the countdown ends" toast would outlive what it says.
            self.app.clear_notifications()
        # Done: the banner says "WITHDRAWN — nothing was sent", once.
        self.refresh_data()

    def action_resolve(self) -> None:
        if self.record is None or self.record.status != Status.OUTCOME_UNKNOWN:
            return
        from poppy_tui.ui.screens.confirm_approve import ResolveOutcomeScreen

        row = self.record.id

        def answered(performed: bool | None) -> None:
            if performed is None:
                return
            try:
                self.agent.resolve_unknown(row, performed)
            except Exception as exc:  # noqa: BLE001 - said in a toast; nothing was recorded
                self.notify(f"Not recorded: {plain_error(exc)}", severity="error", markup=False)
            self.refresh_data()

        self.app.push_screen(ResolveOutcomeScreen(self.record.company.name, row), answered)

    def _cancel_confirm(self) -> None:
        from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen

        from poppy_tui.ui.screens.confirm_approve import ConfirmDeclineScreen

        for screen in self.app.screen_stack:
            if isinstance(screen, (ConfirmApproveScreen, ConfirmDeclineScreen)):
                screen.dismiss(False)

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
