"""The store's side of an account-owned operation's sign-in (Ops 3): its standing now, read
through owning_account.py's one rule, and the person's word that the sign-in now is its account."""

from __future__ import annotations

from poppy_tui.agent.store.connection import StateError, stamp
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.operations import OperationStore
from poppy_tui.agent.store.owning_account import (
    CONFIRMED,
    SIGN_IN_PREFIX,
    AccountStanding,
    account_standing,
    not_to_confirm,
    signed_in_account,
)
from poppy_tui.agent.store.records import OperationRecord, Status


class OwningAccountStore(OperationStore):
    """The store's side: the standing of an operation's account, and the person's word on it."""

    def account_standing(self, op: OperationRecord) -> AccountStanding | None:
        return account_standing(self._db, op)

    def signed_in_account_at(self, company_id: int) -> str | None:
        return signed_in_account(self._db, company_id)

    def confirm_account(self, operation_row: int) -> AccountStanding:
        """The person said, in poppy-tui's own interface, that the sign-in now is the account
        this operation belongs to: kept (an `account_confirmed` event naming that sign-in), and
        an approval held for it is due again at once. Refused (StateError, nothing kept) unless
        the sign-in now can't be shown to be its account: a named other account stays another."""
        op = self.get_operation(operation_row)
        standing = account_standing(self._db, op)
        if standing is None or standing.standing != "unconfirmed" or standing.sign_in is None:
            raise StateError(not_to_confirm(standing))
        if op.status.is_final:
            raise StateError(f"the operation is {op.status.value}; there is nothing to send")
        at = stamp()
        with self._write(Durability.NOW) as db:
            # The sign-in may have changed since it was read: vouch only for the one still current.
            row = db.execute(
                "SELECT signed_in_at FROM sign_ins WHERE company_id=?", (op.company.id,)
            ).fetchone()
            if row is None or row[0] != standing.sign_in:
                raise StateError("the sign-in changed meanwhile; look at the operation again")
            self._event(operation_row, CONFIRMED, SIGN_IN_PREFIX + standing.sign_in)
            # Held at the send (agent/account_hold.py), the approval waits as for sign-in: due now.
            if (
                db.execute(
                    "UPDATE operations SET next_attempt_at=?, waiting_sign_in=NULL, updated_at=?"
                    " WHERE id=? AND status=? AND waiting_sign_in IS NOT NULL",
                    (at, at, operation_row, Status.SENDING),
                ).rowcount
                == 1
            ):
                self._event(operation_row, "signed_in", "you said it is its account: sent now")
        return AccountStanding("same", standing.current, standing.sign_in)
