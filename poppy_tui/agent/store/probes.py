"""Finding out another way (Ops 7): the store's side of outcome_probe.py.

An `outcome_unknown` operation whose `next_attempt_at` is set is due to be found out about:
the same approval resent (an attempt row, committed before it leaves, exactly as for a send),
the Company's state read where it offers it. What was found is kept as `observed` events and
summed up in `outcome_detail`; a definite answer settles it. The person's resolution
(`resolve_unknown`) stays possible throughout and wins: every change here is guarded by the
status and the lease.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from poppy_tui.agent.store.connection import now_utc, parse_stamp, stamp
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.operations import OperationStore
from poppy_tui.agent.store.records import AttemptRecord, EventRecord, OperationRecord, Status
from poppy_tui.agent.store.rows import _dumps

OBSERVED = "observed"  # event kind: something found out about an unknown outcome (detail: JSON)


class ProbeStore(OperationStore):
    """Leases, attempts and findings of outcome_unknown operations."""

    def claim_probe(
        self, owner: str, lease_seconds: float, now: datetime | None = None
    ) -> OperationRecord | None:
        """Take the lease on one outcome_unknown operation due to be found out about."""
        now = now or now_utc()
        at = stamp(now)
        due = "status = ? AND next_attempt_at IS NOT NULL AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)"
        params = (Status.OUTCOME_UNKNOWN, at, at)
        while True:
            row = self._db.execute(
                f"SELECT id FROM operations WHERE {due} ORDER BY next_attempt_at LIMIT 1", params
            ).fetchone()
            if row is None:
                return None
            claimed = self._write_one(
                f"UPDATE operations SET lease_owner=?, lease_until=? WHERE id=? AND {due}",
                (owner, stamp(now + timedelta(seconds=lease_seconds)), row[0], *params),
                Durability.LAZY,
            )
            if claimed.rowcount == 1:
                return self.get_operation(row[0])

    def next_probe_at(self) -> datetime | None:
        row = self._db.execute(
            # Not before a live lease lapses: another process is looking at it meanwhile.
            "SELECT min(max(next_attempt_at, coalesce(lease_until, next_attempt_at))) FROM operations"
            " WHERE status=? AND next_attempt_at IS NOT NULL",
            (Status.OUTCOME_UNKNOWN,),
        ).fetchone()
        return None if row is None or row[0] is None else parse_stamp(row[0])

    def start_probe_attempt(self, operation_row: int, owner: str) -> AttemptRecord:
        """The same approval, sent again to find out: committed (fsynced) before it leaves."""
        with self._write() as db:
            approved_id, idem, number = self._next_attempt(
                db,
                operation_row,
                owner,
                (Status.OUTCOME_UNKNOWN,),
                "nothing to find out",
                "another process is finding out about this operation",
            )
            at = stamp()
            db.execute(
                "UPDATE operations SET attempt_count=?, updated_at=? WHERE id=?",
                (number, at, operation_row),
            )
            attempt = self._insert_attempt(db, operation_row, approved_id, number, idem, at, owner)
            self._event(
                operation_row, "attempt", f"#{number} (finding out: the same approval again)"
            )
        return attempt

    def finish_probe(
        self,
        operation_row: int,
        owner: str,
        *,
        detail: str,
        observations: list[dict[str, Any]],
        next_probe_at: datetime | None,
        settle: Status | None = None,
        outcome: Any = None,
    ) -> bool:
        """Keep what was found out and either settle (a definite answer) or say when to look
        again (None: no more). False when the person resolved it meanwhile (their word stands)."""
        at = stamp()
        with self._write(Durability.SOON) as db:
            # What the finding does is the lifecycle's (its rules "found out ..."), decided from
            # the status as it is under this write lock.
            from poppy_tui.agent.lifecycle.events import FoundOut
            from poppy_tui.agent.lifecycle.facts import Facts
            from poppy_tui.agent.lifecycle.machine import Do, step

            row = db.execute(
                "SELECT status FROM operations WHERE id=?", (operation_row,)
            ).fetchone()
            if row is None:
                return False
            now = parse_stamp(at)
            decided = step(Facts(Status(row[0]), 0, now), FoundOut(settle, next_probe_at), now)
            if decided.do == Do.REFUSE:
                return False
            settle = decided.to if decided.do == Do.SETTLE else None
            if settle is not None:
                cursor = db.execute(
                    "UPDATE operations SET status=?, outcome_json=?, outcome_detail=?, lease_owner=NULL,"
                    " lease_until=NULL, next_attempt_at=NULL, updated_at=? WHERE id=? AND status=? AND lease_owner=?",
                    (
                        settle,
                        _dumps(outcome),
                        detail,
                        at,
                        operation_row,
                        Status.OUTCOME_UNKNOWN,
                        owner,
                    ),
                )
            else:
                cursor = db.execute(
                    "UPDATE operations SET outcome_detail=?, next_attempt_at=?, lease_owner=NULL, lease_until=NULL,"
                    " updated_at=? WHERE id=? AND status=? AND lease_owner=?",
                    (
                        detail,
                        stamp(decided.at) if decided.at else None,
                        at,
                        operation_row,
                        Status.OUTCOME_UNKNOWN,
                        owner,
                    ),
                )
            if cursor.rowcount != 1:
                return False
            for observation in observations:
                self._event(
                    operation_row,
                    OBSERVED,
                    json.dumps(observation, ensure_ascii=False, sort_keys=True),
                )
            if settle is not None:
                self._event(operation_row, settle.value, detail)
        return True

    def observations(self, operation_row: int) -> list[dict[str, Any]]:
        """What was found out about an unknown outcome, oldest first (each with its time)."""
        found = []
        for event in self.events(operation_row):
            if event.kind != OBSERVED or not event.detail:
                continue
            try:
                value = json.loads(event.detail)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append({"at": event.at, **value})
        return found

    def unknown_reason(self, operation_row: int) -> str | None:
        """Why the send ended without knowing (the detail it was settled with)."""
        reasons: list[EventRecord] = [
            e for e in self.events(operation_row) if e.kind == Status.OUTCOME_UNKNOWN.value
        ]
        return reasons[-1].detail if reasons else None
