"""Decisions: only the person at the TUI makes these.

Each is decided by the lifecycle (agent/lifecycle: `step` with the person's event) from the
operation as read under this transaction's write lock, and persisted here; the UPDATE's WHERE
repeats the state it moves from, so a change another process made first can't be overwritten.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from poppy_tui.agent.lifecycle.events import (
    Approve,
    Decline,
    Event,
    ResolveUnknown,
    SendNow,
    Withdraw,
)
from poppy_tui.agent.lifecycle.machine import Do, Step, step
from poppy_tui.agent.store.connection import StateError, now_utc, stamp
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.lifecycle_facts import FactsStore, facts_of
from poppy_tui.agent.store.records import OperationRecord, Status
from poppy_tui.agent.store.rows import _OPERATION_SELECT, _operation
from poppy_tui.protocol.ids import new_id


class DecisionStore(FactsStore):
    """Approve, decline, withdraw, resolve an unknown outcome, end a grace period."""

    def _decided(
        self,
        db: Any,
        operation_row: int,
        event: Event,
        now: datetime,
        verb: str,
        holds: bool = False,
    ) -> tuple[OperationRecord, Step]:
        """The operation as it is under the write lock, and the lifecycle's Step for `event`;
        StateError (nothing written) when the lifecycle refuses it."""
        row = db.execute(f"{_OPERATION_SELECT} WHERE o.id=?", (operation_row,)).fetchone()
        if row is None:
            raise StateError("no such operation")
        op = _operation(row)
        decided = step(facts_of(op, holds=self.holds_on(op) if holds else None), event, now)
        if decided.do == Do.REFUSE:
            raise StateError(decided.detail or self._why_not(operation_row, verb))
        return op, decided

    def approve(
        self,
        operation_row: int,
        revision_id: int,
        grace_seconds: float,
        actor: str = "tui",
        now: datetime | None = None,
    ) -> OperationRecord:
        now = now or now_utc()
        with self._write(Durability.SOON) as db:
            # The holds (the same action in doubt, Ops 7; another account signed in, Ops 3) are
            # read in the same transaction: the approval is refused while either holds.
            op, decided = self._decided(
                db, operation_row, Approve(revision_id, grace_seconds), now, "approved", True
            )
            interface = op.request.interface
            # The key is generated once per approval and reused on every resend. For a
            # conversation it is the approval message's own ID (at least 128 random bits, as
            # message IDs need); elsewhere a bare UUID (conventions.IDEMPOTENCY_KEY_QUOTED).
            import uuid  # here: uuid loads platform, which read-only commands don't need

            key = new_id("msg_") if interface == "conversation" else str(uuid.uuid4())
            assert decided.at is not None
            # The approved revision's own timers start now: its send time here; its retry
            # window at its first attempt (lifecycle/facts.py), never an earlier revision's.
            send_after, updated_at = stamp(decided.at), stamp(now)
            db.execute(
                "UPDATE operations SET status=?, approved_revision_id=?, send_after=?, idempotency_key=?,"
                " next_attempt_at=NULL, waiting_sign_in=NULL, lease_owner=NULL, lease_until=NULL,"
                " updated_at=? WHERE id=? AND status IN (?,?)",
                (
                    decided.to,
                    revision_id,
                    send_after,
                    key,
                    updated_at,
                    operation_row,
                    Status.PENDING,
                    Status.WITHDRAWN,
                ),
            )
            self._decision(operation_row, revision_id, "approved", actor, None, now)
            self._event(operation_row, "approved", decided.detail, now)
        return dataclasses.replace(
            op,
            status=decided.to,
            approved_revision_id=revision_id,
            send_after=send_after,
            idempotency_key=key,
            next_attempt_at=None,
            waiting_sign_in=None,
            updated_at=updated_at,
        )

    def send_now(
        self, operation_rows: list[int], actor: str = "tui", now: datetime | None = None
    ) -> list[int]:
        """End the grace period of these approvals at once (the person asked to send them now, e.g.
        quitting with "send now and wait"): `send_after` becomes now, committed (fsynced) like the
        decision, so the next dispatcher pass, of this process or any other, claims them.

        Only approvals still in their grace period change; those already sending or settled, or
        taken back meanwhile, are left alone. Returns the rows whose grace period was ended."""
        now = now or now_utc()
        at = stamp(now)
        ended: list[int] = []
        with self._write() as db:
            for operation_row in operation_rows:
                try:
                    _, decided = self._decided(db, operation_row, SendNow(), now, "sent now")
                except StateError:
                    continue  # gone meanwhile
                if decided.do != Do.END_GRACE:
                    continue
                cursor = db.execute(
                    "UPDATE operations SET send_after=?, updated_at=? WHERE id=? AND status=? AND send_after > ?",
                    (at, at, operation_row, Status.APPROVED, at),
                )
                if cursor.rowcount == 1:
                    self._event(operation_row, "grace_ended", f"send now, by {actor}", now)
                    ended.append(operation_row)
        return ended

    def decline(
        self, operation_row: int, revision_id: int, actor: str = "tui", note: str | None = None
    ) -> OperationRecord:
        with self._write() as db:
            _, decided = self._decided(
                db, operation_row, Decline(revision_id), now_utc(), "declined"
            )
            cursor = db.execute(
                "UPDATE operations SET status=?, approved_revision_id=NULL, send_after=NULL, lease_owner=NULL,"
                " lease_until=NULL, updated_at=? WHERE id=? AND current_revision_id=? AND status IN (?,?,?)",
                (
                    decided.to,
                    stamp(),
                    operation_row,
                    revision_id,
                    Status.PENDING,
                    Status.WITHDRAWN,
                    Status.APPROVED,
                ),
            )
            if cursor.rowcount != 1:
                raise StateError(self._why_not(operation_row, "declined"))
            self._decision(operation_row, revision_id, "declined", actor, note)
            self._event(operation_row, "declined", note)
        return self.get_operation(operation_row)

    def withdraw(self, operation_row: int, actor: str = "tui") -> OperationRecord:
        """Take an approval back. Possible only until the first send attempt starts."""
        with self._write() as db:
            op, decided = self._decided(db, operation_row, Withdraw(), now_utc(), "withdrawn")
            db.execute(
                "UPDATE operations SET status=?, approved_revision_id=NULL, send_after=NULL, lease_owner=NULL,"
                " lease_until=NULL, updated_at=? WHERE id=? AND status=?",
                (decided.to, stamp(), operation_row, Status.APPROVED),
            )
            assert op.approved_revision_id is not None
            self._decision(operation_row, op.approved_revision_id, "withdrawn", actor, None)
            self._event(operation_row, "withdrawn")
        return self.get_operation(operation_row)

    def resolve_unknown(
        self, operation_row: int, performed: bool, actor: str = "tui", note: str | None = None
    ) -> OperationRecord:
        """The person found out (e.g. from the order) whether an unknown send took effect."""
        with self._write() as db:
            op, decided = self._decided(
                db, operation_row, ResolveUnknown(performed), now_utc(), "resolved"
            )
            self._resolve(db, op, decided, note)
            self._decision(
                operation_row,
                op.approved_revision_id or op.current.id,
                "resolved_performed" if performed else "resolved_not_performed",
                actor,
                note,
            )
            self._event(operation_row, "resolved", decided.to.value)
        return self.get_operation(operation_row)

    def _resolve(self, db: Any, op: OperationRecord, decided: Step, note: str | None) -> None:
        db.execute(
            "UPDATE operations SET status=?, lease_owner=NULL, lease_until=NULL, next_attempt_at=NULL,"
            " outcome_detail=?, updated_at=? WHERE id=? AND status=?",
            (decided.to, note or decided.detail, stamp(), op.id, Status.OUTCOME_UNKNOWN),
        )

    def _decision(
        self,
        operation_row: int,
        revision_id: int,
        decision: str,
        actor: str,
        note: str | None,
        at: datetime | None = None,
    ) -> None:
        self._db.execute(
            "INSERT INTO decisions (operation_row, revision_id, decision, decided_at, actor, note) VALUES (?,?,?,?,?,?)",
            (operation_row, revision_id, decision, stamp(at), actor, note),
        )
