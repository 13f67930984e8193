"""The facts the lifecycle decides from (agent/lifecycle/facts.py), read from the store.

`facts_of` turns records into `Facts` (no reads); `FactsStore.lifecycle_facts` reads what it
needs for one operation: the approved revision and the interface of the request that returned
it, its attempts, and the holds on it (the same action in doubt, another account signed in).
The store's decisions call these inside their write transaction, so the facts are those the
change is checked against; `Agent.explain` calls them to say where an operation stands.
"""

from __future__ import annotations

from collections.abc import Iterable

from poppy_tui.agent.lifecycle.facts import AttemptFact, Facts, Holds
from poppy_tui.agent.store.connection import parse_stamp
from poppy_tui.agent.store.owning_account import account_standing, other_account
from poppy_tui.agent.store.records import AttemptRecord, OperationRecord, RevisionRecord, Status
from poppy_tui.agent.store.same_action import SameActionStore


def attempt_facts(attempts: Iterable[AttemptRecord]) -> tuple[AttemptFact, ...]:
    return tuple(
        AttemptFact(
            a.revision_id,
            parse_stamp(a.started_at),
            a.outcome if a.finished_at is not None else None,
            a.http_status,
        )
        for a in attempts
    )


def facts_of(
    op: OperationRecord,
    approved: RevisionRecord | None = None,
    interface: str | None = None,
    attempts: Iterable[AttemptRecord] = (),
    holds: Holds | None = None,
    lease_until: str | None = None,
) -> Facts:
    """`approved`: the approved revision when it is not the current one (else read from `op`);
    `interface`: that of the request that returned it (else the operation's)."""
    if approved is None and op.approved_revision_id == op.current.id:
        approved = op.current
    return Facts(
        status=op.status,
        current_revision_id=op.current.id,
        current_revision=op.current.revision,
        current_expires_at=op.current.expires_at,
        interface=interface or op.interface,
        approved_revision_id=op.approved_revision_id,
        approved_revision=approved.revision if approved is not None else None,
        approved_expires_at=approved.expires_at if approved is not None else None,
        send_after=parse_stamp(op.send_after) if op.send_after else None,
        next_attempt_at=parse_stamp(op.next_attempt_at) if op.next_attempt_at else None,
        waiting_sign_in=op.waiting_sign_in,
        outcome_detail=op.outcome_detail,
        attempts=attempt_facts(attempts),
        holds=holds or Holds(),
        lease_until=parse_stamp(lease_until) if lease_until else None,
    )


class FactsStore(SameActionStore):
    def holds_on(self, op: OperationRecord, unsignable: str | None = None) -> Holds:
        """Why the person can't approve `op` now (each as its one line), read afresh."""
        same_action = None
        if op.status.is_open:
            held = self.earlier_in_doubt(op.id)
            if held:
                from poppy_tui.safety.request_reuse import in_doubt_reason

                same_action = in_doubt_reason(held)
        elsewhere = other_account(self._db, op)
        other = None
        if elsewhere is not None and op.account is not None:
            from poppy_tui.safety.account_owner import other_account_reason

            other = other_account_reason(op.company.name, op.account, elsewhere)
        unconfirmed = None
        if op.status in (Status.APPROVED, Status.SENDING) and op.account_owned:
            standing = account_standing(self._db, op)
            if standing is not None and standing.standing == "unconfirmed":
                from poppy_tui.safety.account_owner import account_wait

                unconfirmed = account_wait(op.company.name, op.account, standing)
        return Holds(
            same_action=same_action,
            other_account=other,
            unsignable=unsignable,
            unconfirmed_account=unconfirmed,
        )

    def lifecycle_facts(self, operation_row: int, unsignable: str | None = None) -> Facts:
        """Everything the lifecycle decides from for one operation, as stored now."""
        op = self.get_operation(operation_row)
        approved, interface = None, None
        if op.approved_revision_id is not None and op.approved_revision_id != op.current.id:
            approved = self.get_revision(op.approved_revision_id)
            interface = self.get_request(approved.request_id)[0].interface
        elif op.approved_revision_id is not None:
            interface = op.request.interface
        lease = self._db.execute(
            "SELECT lease_until FROM operations WHERE id=?", (operation_row,)
        ).fetchone()
        return facts_of(
            op,
            approved,
            interface,
            self.attempts(operation_row),
            self.holds_on(op, unsignable),
            lease[0] if lease else None,
        )
