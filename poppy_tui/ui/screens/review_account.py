"""The review's account part (Ops 3, "while signed in to the same account"): what the sign-in at
the operation's Company now is to it (agent/store/owning_account.py), the finding and the banner
line that say so, and `u`, the person's word that this sign-in is its account, where poppy-tui
can't tell. A part of ReviewScreen, kept apart from the decisions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from poppy_tui.agent.store.connection import StateError
from poppy_tui.agent.store.records import OperationRecord, Status
from poppy_tui.ui.safe import plain_line


class AccountSection(Screen):
    """A base of ReviewScreen, which provides what is declared below."""

    if TYPE_CHECKING:
        record: OperationRecord | None
        other_account: str | None
        account_standing: Any
        agent: Any
        store: Any

        def arming_left(self) -> float: ...
        def refresh_data(self) -> None: ...

    def _standing_of(self, record: OperationRecord) -> tuple[Any, str | None]:
        """(the sign-in's standing to this operation, or None for a Session's or a settled one;
        the other account signed in, while it waits for a decision): agent/review_words.py's,
        which the web page reads too."""
        from poppy_tui.agent.review_words import account_standing_of

        return account_standing_of(self.store, record)

    def _account_findings(self) -> list[Any]:
        """Another account: a DANGER while it waits for a decision; a sign-in not shown to be its
        account: a WARNING (its approval is held) until settled."""
        from poppy_tui.agent.review_words import account_findings_of

        return account_findings_of(self.record, self.account_standing, self.other_account)

    def _unconfirmed(self) -> bool:
        standing = self.account_standing
        return standing is not None and standing.standing == "unconfirmed"

    def _account_hold(self, record: OperationRecord) -> tuple[str, str] | None:
        """What the banner says of the sign-in now, for a kept approval (OutcomeBanner.account_hold)."""
        from poppy_tui.agent.review_words import account_hold_of

        return account_hold_of(record, self.account_standing)

    def action_confirm_account(self) -> None:
        """The person says the sign-in now is this operation's account: kept, and a held
        approval goes with it. Not while the review is arming: a key typed before reading."""
        record = self.record
        if record is None or not self._unconfirmed():
            return
        left = self.arming_left()
        if left > 0:
            self.notify(
                f"Not yet: read the operation first ({left:.1f} s). Nothing was recorded.",
                severity="warning",
                markup=False,
                timeout=3,
            )
            return
        try:
            self.agent.confirm_account(record.id)
        except StateError as exc:  # the sign-in changed, or it was settled meanwhile
            self.notify(f"Not recorded: {plain_line(exc)}", severity="error", markup=False)
        else:
            self.notify(
                "Recorded: this sign-in is its account. "
                + (
                    "Its approval goes with it now."
                    if record.status in (Status.APPROVED, Status.SENDING)
                    else "An approval goes with it."
                ),
                markup=False,
            )
        self.refresh_data()
