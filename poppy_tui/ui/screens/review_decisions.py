"""The review's decisions: approve (refused with a reason while `a` is dimmed, read the resource
again, then confirmed with `y` in a modal), decline (asked once), withdraw within the grace
period, the person's answer to an outcome poppy-tui can't know, and sign-in for an approval that
waits for it; the dialogs they open, and closing them when new terms arrive. A part of
ReviewScreen, kept apart from what it shows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.content import Content
from textual.screen import Screen

from poppy_tui.agent.store.records import OperationRecord, Status
from poppy_tui.ui.safe import plain_error
from poppy_tui.ui.widgets.discrepancy_panel import badge_counts

if TYPE_CHECKING:
    from poppy_tui.ui.checks import Checked

# What a person may still decline: waiting, withdrawn, or approved and not yet sent.
DECLINABLE = (Status.PENDING, Status.WITHDRAWN, Status.APPROVED)


class ReviewDecisions(Screen):
    """A base of ReviewScreen, which provides what is declared below."""

    if TYPE_CHECKING:
        record: OperationRecord | None
        checked: Checked | None
        shown_revision_id: int | None
        other_account: str | None
        agent: Any
        store: Any
        poppy: Any
        summary_seen: bool

        @property
        def findings(self) -> tuple[Any, ...]: ...
        def _approve_blocked(self) -> tuple[str, bool] | None: ...
        def _unconfirmed(self) -> bool: ...
        def _can_read(self) -> bool: ...
        async def _confirm_after_reading(self, operation_row: int, revision_id: int) -> None: ...
        def is_short(self) -> bool: ...
        def refresh_data(self) -> None: ...

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
