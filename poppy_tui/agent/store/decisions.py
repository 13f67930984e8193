"""Decisions: only the person at the TUI makes these."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from poppy_tui.agent.store.connection import StateError, now_utc, stamp
from poppy_tui.agent.store.same_action import SameActionStore
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.owning_account import other_account
from poppy_tui.agent.store.records import OperationRecord, Status
from poppy_tui.agent.store.rows import _OPERATION_SELECT, _operation
from poppy_tui.protocol.ids import new_id


class DecisionStore(SameActionStore):
    """Approve, decline, withdraw, resolve an unknown outcome."""

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
            # The whole record, read under the write lock: checked here, and returned as the
            # UPDATE below leaves it, without reading it again.
            row = db.execute(f"{_OPERATION_SELECT} WHERE o.id=?", (operation_row,)).fetchone()
            if row is None:
                raise StateError("no such operation")
            op = _operation(row)
            if op.current.id != revision_id:
                raise StateError(
                    "a newer revision of these terms arrived; review it before approving"
                )
            if not op.status.is_open:
                raise StateError(f"the operation is {op.status.value}; it can't be approved now")
            if op.current.expires_at <= now:
                raise StateError("this revision has expired; it can no longer be approved")
            held = self.earlier_in_doubt(operation_row)
            if held:
                # Ops 7: no approval for the same action until the earlier outcome is known.
                from poppy_tui.safety.request_reuse import in_doubt_reason

                raise StateError(in_doubt_reason(held))
            elsewhere = other_account(db, op)
            if elsewhere is not None and op.account is not None:
                # Ops 3: the account's operation is approved while signed in to the same account.
                from poppy_tui.safety.account_owner import other_account_reason

                raise StateError(other_account_reason(op.company.name, op.account, elsewhere))
            interface = op.request.interface
            # The key is generated once per approval and reused on every resend. For a
            # conversation it is the approval message's own ID (at least 128 random bits, as
            # message IDs need); elsewhere a bare UUID (conventions.IDEMPOTENCY_KEY_QUOTED).
            import uuid  # here: uuid loads platform, which read-only commands don't need

            key = new_id("msg_") if interface == "conversation" else str(uuid.uuid4())
            send_after, updated_at = (
                stamp(now + timedelta(seconds=max(0.0, grace_seconds))),
                stamp(now),
            )
            db.execute(
                "UPDATE operations SET status=?, approved_revision_id=?, send_after=?, idempotency_key=?,"
                " next_attempt_at=NULL, lease_owner=NULL, lease_until=NULL, updated_at=? WHERE id=?",
                (Status.APPROVED, revision_id, send_after, key, updated_at, operation_row),
            )
            self._decision(operation_row, revision_id, "approved", actor, None, now)
            self._event(operation_row, "approved", f"grace {grace_seconds:g}s", now)
        return dataclasses.replace(
            op,
            status=Status.APPROVED,
            approved_revision_id=revision_id,
            send_after=send_after,
            idempotency_key=key,
            next_attempt_at=None,
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
            cursor = db.execute(
                "UPDATE operations SET status=?, approved_revision_id=NULL, send_after=NULL, lease_owner=NULL,"
                " lease_until=NULL, updated_at=? WHERE id=? AND current_revision_id=? AND status IN (?,?,?)",
                (
                    Status.DECLINED,
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
            row = db.execute(
                "SELECT approved_revision_id FROM operations WHERE id=? AND status=?",
                (operation_row, Status.APPROVED),
            ).fetchone()
            if row is None:
                raise StateError(self._why_not(operation_row, "withdrawn"))
            db.execute(
                "UPDATE operations SET status=?, approved_revision_id=NULL, send_after=NULL, lease_owner=NULL,"
                " lease_until=NULL, updated_at=? WHERE id=?",
                (Status.WITHDRAWN, stamp(), operation_row),
            )
            self._decision(operation_row, row[0], "withdrawn", actor, None)
            self._event(operation_row, "withdrawn")
        return self.get_operation(operation_row)

    def resolve_unknown(
        self, operation_row: int, performed: bool, actor: str = "tui", note: str | None = None
    ) -> OperationRecord:
        """The person found out (e.g. from the order) whether an unknown send took effect."""
        with self._write() as db:
            row = db.execute(
                "SELECT approved_revision_id, current_revision_id FROM operations WHERE id=? AND status=?",
                (operation_row, Status.OUTCOME_UNKNOWN),
            ).fetchone()
            if row is None:
                raise StateError(self._why_not(operation_row, "resolved"))
            approved_id, current_id = row
            if performed:
                status = Status.PERFORMED
            elif current_id != approved_id:
                status = Status.PENDING  # a newer revision may now be decided on
            else:
                status = Status.NOT_PERFORMED
            db.execute(
                "UPDATE operations SET status=?, lease_owner=NULL, lease_until=NULL, next_attempt_at=NULL,"
                " outcome_detail=?, updated_at=? WHERE id=?",
                (
                    status,
                    note or ("confirmed performed" if performed else "confirmed not performed"),
                    stamp(),
                    operation_row,
                ),
            )
            self._decision(
                operation_row,
                approved_id or current_id,
                "resolved_performed" if performed else "resolved_not_performed",
                actor,
                note,
            )
            self._event(operation_row, "resolved", status.value)
        return self.get_operation(operation_row)

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
