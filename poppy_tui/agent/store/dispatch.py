"""The dispatcher's side: expiry, leases, attempts (committed before the request leaves), settling."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from poppy_tui.agent.store.connection import StateError, now_utc, parse_stamp, stamp
from poppy_tui.agent.store.operations import OperationStore
from poppy_tui.agent.store.owning_account import account_held
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.expiry import ExpiryStore
from poppy_tui.agent.store.records import AttemptRecord, OperationRecord, Status
from poppy_tui.agent.store.rows import _OPERATION_SELECT, _dumps, _operation


# Due to be sent, for claim_due_many (named parameter :at). Status values are written out so that
# SQLite can use the partial index operations_due, whose WHERE names them.
# An approval never sent whose terms have expired is not due: expire_due records it as expired.
_DUE = (
    "status IN ('approved', 'sending') AND (lease_until IS NULL OR lease_until <= :at)"
    " AND ((status = 'approved' AND send_after <= :at"
    " AND (SELECT r.expires_at FROM revisions r WHERE r.id = current_revision_id) > :at)"
    " OR (status = 'sending' AND (next_attempt_at IS NULL OR next_attempt_at <= :at)))"
)
assert Status.APPROVED.value == "approved" and Status.SENDING.value == "sending"


class DispatchStore(OperationStore, ExpiryStore):
    """Leases, attempts and outcomes (and expiry: expiry.py)."""

    def claim_due(
        self,
        owner: str,
        lease_seconds: float,
        now: datetime | None = None,
        operation_row: int | None = None,
    ) -> OperationRecord | None:
        """Take the lease on one operation that is due to be sent, atomically across processes."""
        claimed = self.claim_due_many(owner, lease_seconds, 1, now, operation_row)
        return claimed[0] if claimed else None

    def claim_due_many(
        self,
        owner: str,
        lease_seconds: float,
        limit: int,
        now: datetime | None = None,
        operation_row: int | None = None,
    ) -> list[OperationRecord]:
        """Take the leases on up to `limit` operations due to be sent (oldest change first), in
        one statement: one transaction, atomic across processes. A row another process leased
        first is not taken (the UPDATE checks it is still due and unleased under the write lock)."""
        rows = self._claim(owner, lease_seconds, limit, now, operation_row, Durability.LAZY)
        return self._claimed([r[0] for r in rows])

    def claim_due_starting_alone(
        self,
        owner: str,
        lease_seconds: float,
        limit: int,
        now: datetime | None = None,
    ) -> tuple[list[OperationRecord], AttemptRecord | None]:
        """claim_due_many, and when that claims a single operation, fewer than `limit` (so it is
        the only one due), whose approval was never sent, that operation's first attempt too, in
        the same transaction. That attempt is an AWAITED commit: take_awaited() then
        sync_through() must return before its request leaves, as after start_attempts. The
        dispatcher's lone send is spared a commit of its own this way; the claim's checks (due,
        unleased, terms not expired) and the attempt's (our lease, approved) hold in one
        transaction, so nothing can change between them. Returns the claimed operations, read
        before the attempt (approved, attempt_count 0), and the attempt or None."""
        attempt: AttemptRecord | None = None
        with self._write(Durability.LAZY) as db:
            rows = self._claim(owner, lease_seconds, limit, now, None, None)
            claimed = self._claimed([r[0] for r in rows])
            if (
                len(rows) == 1
                and len(rows) < limit
                and rows[0][1] == Status.APPROVED
                and rows[0][2] == 0
            ):
                try:
                    attempt = self._start_attempt(db, rows[0][0], owner)
                except StateError:  # raised before its first write: the claim alone is kept
                    attempt = None
        if attempt is not None:
            # Committed as LAZY (a claim alone needs no fsync); with an attempt it is AWAITED.
            self._committed(Durability.AWAITED)
        return claimed, attempt

    def _claim(
        self,
        owner: str,
        lease_seconds: float,
        limit: int,
        now: datetime | None,
        operation_row: int | None,
        durability: Durability | None,
    ) -> list[tuple[int, str, int]]:
        """The claim's one statement: (id, status, attempt_count) of each operation leased.
        `durability` None: inside a transaction the caller holds."""
        now = now or now_utc()
        only = " AND id = :row" if operation_row is not None else ""
        # operations_due (migration 6) holds only approved and sending rows, in updated_at order:
        # the walk stops after `limit` due rows instead of sorting every open approval per claim.
        sql = (
            f"UPDATE operations SET lease_owner=:owner, lease_until=:until WHERE id IN"
            f" (SELECT id FROM operations INDEXED BY operations_due WHERE {_DUE}{only} ORDER BY updated_at LIMIT :n)"
            f" AND {_DUE} RETURNING id, status, attempt_count"
        )
        params = {
            "owner": owner,
            "until": stamp(now + timedelta(seconds=lease_seconds)),
            "at": stamp(now),
            "n": max(0, limit),
            "row": operation_row,
        }
        if durability is None:
            return self._db.execute(sql, params).fetchall()
        return self._write_one(sql, params, durability).fetchall()

    def _claimed(self, ids: list[int]) -> list[OperationRecord]:
        if not ids:
            return []
        found = self._db.execute(
            f"{_OPERATION_SELECT} WHERE o.id IN ({','.join('?' * len(ids))}) ORDER BY o.updated_at, o.id",
            ids,
        ).fetchall()
        return [_operation(r) for r in found]

    def next_due_at(self) -> datetime | None:
        """The soonest moment claim_due could return something: a grace period ending, a
        scheduled retry, or a lease lapsing. None when nothing is approved or sending."""
        rows = self._db.execute(
            "SELECT status, send_after, next_attempt_at, lease_until FROM operations WHERE status IN (?,?)",
            (Status.APPROVED, Status.SENDING),
        ).fetchall()
        times = []
        for status, send_after, next_at, lease_until in rows:
            candidates = [
                t
                for t in ((send_after if status == Status.APPROVED else next_at), lease_until)
                if t
            ]
            times.append(max(candidates) if candidates else stamp())
        return parse_stamp(min(times)) if times else None

    def release_lease(self, operation_row: int, owner: str) -> None:
        """Give a lease back without sending (the operation changed under us); others may claim at once."""
        self._write_one(
            "UPDATE operations SET lease_owner=NULL, lease_until=NULL WHERE id=? AND lease_owner=?",
            (operation_row, owner),
            Durability.LAZY,
        )

    def renew_lease(self, operation_row: int, owner: str, lease_seconds: float) -> bool:
        cursor = self._write_one(
            "UPDATE operations SET lease_until=? WHERE id=? AND lease_owner=?",
            (stamp(now_utc() + timedelta(seconds=lease_seconds)), operation_row, owner),
            Durability.LAZY,
        )
        return cursor.rowcount == 1

    def start_attempt(self, operation_row: int, owner: str) -> AttemptRecord:
        """Commit the attempt (and approved -> sending) BEFORE the request leaves."""
        with self._write() as db:
            return self._start_attempt(db, operation_row, owner)

    def start_attempts(
        self, operation_rows: list[int], owner: str, durability: Durability = Durability.NOW
    ) -> list[AttemptRecord | StateError]:
        """start_attempt for several operations in one transaction: one fsync puts every one of
        these attempts on disk before any of their requests leaves. Each operation gets its
        attempt, or the StateError saying why it can't be sent (that one changes nothing).
        With Durability.AWAITED the fsync is the caller's: take_awaited() then sync_through()
        (in a worker thread) must return before any of these requests leaves (the dispatcher)."""
        results: list[AttemptRecord | StateError] = []
        with self._write(durability) as db:
            for operation_row in operation_rows:
                try:
                    results.append(self._start_attempt(db, operation_row, owner))
                except StateError as exc:  # raised before that operation's first write
                    results.append(exc)
        return results

    def _start_attempt(self, db: Any, operation_row: int, owner: str) -> AttemptRecord:
        at = stamp()
        # The checks _next_attempt makes (sendable, approved, our lease), in the UPDATE itself:
        # one statement instead of a read and a write, in the same transaction as the attempt row.
        row = db.execute(
            "UPDATE operations SET status=?, attempt_count=attempt_count+1, updated_at=? WHERE id=? AND lease_owner=?"
            " AND status IN (?,?) AND approved_revision_id IS NOT NULL"
            " RETURNING approved_revision_id, idempotency_key, attempt_count",
            (Status.SENDING, at, operation_row, owner, Status.APPROVED, Status.SENDING),
        ).fetchall()
        if not row:
            # Nothing was written: say why, as the outcome probe's resends do.
            self._next_attempt(
                db,
                operation_row,
                owner,
                (Status.APPROVED, Status.SENDING),
                "nothing to send",
                "another sender holds this operation",
            )
            raise StateError("nothing to send")  # pragma: no cover - _next_attempt raised already
        approved_id, idem, number = row[0]
        attempt = self._insert_attempt(db, operation_row, approved_id, number, idem, at, owner)
        self._event(operation_row, "attempt", f"#{number}")
        return attempt

    def finish_attempt(
        self,
        attempt_id: int,
        outcome: str,
        http_status: int | None = None,
        response: Any = None,
        detail: str | None = None,
    ) -> None:
        with self._write(Durability.SOON):
            self._finish_attempt(attempt_id, outcome, http_status, _dumps(response), detail)

    def _finish_attempt(
        self,
        attempt_id: int,
        outcome: str,
        http_status: int | None,
        response_json: str,
        detail: str | None,
    ) -> None:
        self._db.execute(
            "UPDATE attempts SET finished_at=?, outcome=?, http_status=?, response_json=?, detail=? WHERE id=?",
            (stamp(), outcome, http_status, response_json, detail, attempt_id),
        )

    def schedule_retry(
        self, operation_row: int, owner: str, delay_seconds: float, detail: str | None = None
    ) -> None:
        with self._write(Durability.SOON) as db:
            db.execute(
                "UPDATE operations SET next_attempt_at=?, lease_owner=NULL, lease_until=NULL, outcome_detail=?,"
                " updated_at=? WHERE id=? AND lease_owner=? AND status=?",
                (
                    stamp(now_utc() + timedelta(seconds=delay_seconds)),
                    detail,
                    stamp(),
                    operation_row,
                    owner,
                    Status.SENDING,
                ),
            )

    def wait_for_sign_in(
        self,
        attempt: tuple[int, str, int | None, Any, str | None],
        operation_row: int,
        owner: str,
        until: datetime,
        detail: str,
        new_key: str | None = None,
        signed_in_since: bool = False,
    ) -> None:
        """The send was answered with a sign-in challenge: finish the attempt and keep the approval
        (status stays sending) until the person signs in (resume_after_sign_in) or `until` (the
        approved revision's expiry), when the dispatcher settles it. One commit. `new_key`: the
        key (a conversation's message ID) the approval is sent with after sign-in.
        `signed_in_since`: a sign-in newer than the refused request's token is held already (it
        was renewed while the request was out): due again now, never shown waiting."""
        attempt_id, attempt_outcome, http_status, response, attempt_detail = attempt
        now = stamp()
        with self._write(Durability.SOON) as db:
            self._finish_attempt(
                attempt_id, attempt_outcome, http_status, _dumps(response), attempt_detail
            )
            cursor = db.execute(
                "UPDATE operations SET next_attempt_at=?, waiting_sign_in=?, outcome_detail=?, lease_owner=NULL,"
                " lease_until=NULL, idempotency_key=COALESCE(?, idempotency_key), updated_at=?"
                " WHERE id=? AND lease_owner=? AND status=?",
                (
                    now if signed_in_since else stamp(until),
                    None if signed_in_since else detail,
                    detail,
                    new_key,
                    now,
                    operation_row,
                    owner,
                    Status.SENDING,
                ),
            )
            if cursor.rowcount != 1:
                raise StateError(self._why_not(operation_row, "kept waiting for sign-in"))
            if signed_in_since:
                self._event(
                    operation_row,
                    "signed_in",
                    "signed in with a newer token already: the approval will be sent again",
                )
            else:
                self._event(operation_row, "waiting_sign_in", detail)

    def waiting_for_sign_in(self) -> dict[int, list[int]]:
        """company_id -> operation rows whose approval waits for sign-in."""
        waiting: dict[int, list[int]] = {}
        for op_row, company_id in self._db.execute(
            "SELECT id, company_id FROM operations WHERE status=? AND waiting_sign_in IS NOT NULL ORDER BY id",
            (Status.SENDING,),
        ).fetchall():
            waiting.setdefault(company_id, []).append(op_row)
        return waiting

    def for_other_account(self, rows: list[int]) -> set[int]:
        """Those of these operations whose account the sign-in now at their Company is not shown
        to be (owning_account.account_held: another account, or not confirmed): not to be sent yet (Ops 3)."""
        found = self._db.execute(
            f"{_OPERATION_SELECT} WHERE o.id IN ({','.join('?' * len(rows))}) AND o.account_owned=1",
            rows,
        ).fetchall()
        return {op.id for op in map(_operation, found) if account_held(self._db, op)}

    def resume_after_sign_in(self, company_id: int, only: list[int] | None = None) -> list[int]:
        """The person signed in at this Company: its waiting approvals (or `only` these) are due now."""
        rows = [
            r for r in self.waiting_for_sign_in().get(company_id, []) if only is None or r in only
        ]
        if not rows:
            return []
        at = stamp()
        with self._write(Durability.SOON) as db:
            for op_row in rows:
                db.execute(
                    "UPDATE operations SET next_attempt_at=?, waiting_sign_in=NULL, updated_at=?"
                    " WHERE id=? AND status=? AND waiting_sign_in IS NOT NULL",
                    (at, at, op_row, Status.SENDING),
                )
                self._event(op_row, "signed_in", "the approval will be sent again")
        return rows

    def postpone(self, operation_row: int, owner: str, delay_seconds: float, detail: str) -> None:
        """Nothing could leave the machine (the approval can't be signed): no attempt is
        recorded, the approval is kept, and the send is tried again after `delay_seconds`
        (approved: a later send_after, so it still expires; sending: a later next_attempt_at)."""
        later = stamp(now_utc() + timedelta(seconds=delay_seconds))
        with self._write(Durability.SOON) as db:
            cursor = db.execute(
                "UPDATE operations SET send_after=CASE WHEN status=? THEN ? ELSE send_after END,"
                " next_attempt_at=CASE WHEN status=? THEN ? ELSE next_attempt_at END,"
                " lease_owner=NULL, lease_until=NULL, outcome_detail=?, updated_at=?"
                " WHERE id=? AND lease_owner=? AND status IN (?,?)",
                (
                    Status.APPROVED,
                    later,
                    Status.SENDING,
                    later,
                    detail,
                    stamp(),
                    operation_row,
                    owner,
                    Status.APPROVED,
                    Status.SENDING,
                ),
            )
            if cursor.rowcount == 1:
                self._event(operation_row, "not_sent", detail)

    def settle(
        self,
        operation_row: int,
        owner: str,
        status: Status,
        outcome: Any = None,
        detail: str | None = None,
        probe_after: float | None = None,
    ) -> None:
        """End a send: performed, not performed, or outcome unknown (or pending again after a new revision).
        An unknown outcome with `probe_after` is found out about from then on (outcome_probe.py)."""
        self._settle_one((None, operation_row, owner, status, outcome, detail, probe_after))

    def finish_and_settle(
        self,
        attempt: tuple[int, str, int | None, Any, str | None],
        operation_row: int,
        owner: str,
        status: Status,
        outcome: Any = None,
        detail: str | None = None,
        probe_after: float | None = None,
    ) -> None:
        """finish_attempt(*attempt) and settle(...) in one commit: the last answer and the
        operation's final state are kept together or not at all."""
        self._settle_one((attempt, operation_row, owner, status, outcome, detail, probe_after))

    def _settle_one(self, settle: tuple[Any, ...]) -> None:
        (problem,) = self.settle_many([settle])
        if problem is not None:
            raise problem

    def settle_many(
        self,
        settles: list[
            tuple[
                tuple[int, str, int | None, Any, str | None] | None,
                int,
                str,
                Status,
                Any,
                str | None,
                float | None,
            ]
        ],
    ) -> list[StateError | None]:
        """Several (attempt or None, operation_row, owner, status, outcome, detail, probe_after):
        finish_and_settle (or settle, without an attempt) for each, all in one commit (SOON, so one
        background fsync for the group). Each gets None, or the StateError saying why it could
        not be settled; that one writes nothing (its attempt stays unfinished), the rest are kept."""
        results: list[StateError | None] = []
        with self._write(Durability.SOON):
            for attempt, operation_row, owner, status, outcome, detail, probe_after in settles:
                if attempt is not None:
                    attempt_id, attempt_outcome, http_status, response, attempt_detail = attempt
                    response_json = _dumps(response)
                    # The outcome is usually the last answer itself: encode it once.
                    outcome_json = response_json if outcome is response else _dumps(outcome)
                else:
                    outcome_json = _dumps(outcome)
                try:
                    # The operation first: when it can't be settled, nothing of this one is written.
                    self._settle(operation_row, owner, status, outcome_json, detail, probe_after)
                except StateError as exc:
                    results.append(exc)
                    continue
                if attempt is not None:
                    self._finish_attempt(
                        attempt_id, attempt_outcome, http_status, response_json, attempt_detail
                    )
                results.append(None)
        return results

    def _settle(
        self,
        operation_row: int,
        owner: str,
        status: Status,
        outcome_json: str,
        detail: str | None,
        probe_after: float | None = None,
    ) -> None:
        # next_attempt_at of an outcome_unknown operation is when to find out next (outcome_probe.py).
        probe_at = (
            stamp(now_utc() + timedelta(seconds=probe_after))
            if status == Status.OUTCOME_UNKNOWN and probe_after is not None
            else None
        )
        cursor = self._db.execute(
            "UPDATE operations SET status=?, outcome_json=?, outcome_detail=?, lease_owner=NULL, lease_until=NULL,"
            " next_attempt_at=?, waiting_sign_in=NULL, updated_at=? WHERE id=? AND lease_owner=? AND status=?",
            (status, outcome_json, detail, probe_at, stamp(), operation_row, owner, Status.SENDING),
        )
        if cursor.rowcount != 1:
            raise StateError(self._why_not(operation_row, f"settled as {status.value}"))
        self._event(operation_row, status.value, detail)
