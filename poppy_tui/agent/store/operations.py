"""Operations and their revisions, as Companies returned them, and what happened to each."""

from __future__ import annotations

from typing import Any

from poppy_tui.agent.store.connection import StateError, parse_stamp, stamp
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.records import (
    AttemptRecord,
    DecisionRecord,
    EventRecord,
    OperationRecord,
    RecordResult,
    RevisionRecord,
    Status,
    request_of,
)
from poppy_tui.agent.store.rows import (
    _ATTEMPT_COLUMNS,
    _OPERATION_SELECT,
    _REVISION_COLUMNS,
    _attempt,
    _dumps,
    _operation,
    _revision,
)
from poppy_tui.agent.store.requesters import RequesterStore
from poppy_tui.agent.store.requests import RequestStore
from poppy_tui.protocol.operation import Operation
from poppy_tui.protocol.requests import RequestDescription


class OperationStore(RequestStore, RequesterStore):
    """Operations, revisions, and the decisions, attempts and events of one operation."""

    def _next_attempt(
        self,
        db: Any,
        operation_row: int,
        owner: str,
        sendable: tuple[Status, ...],
        nothing_to: str,
        held_by: str,
    ) -> tuple[int, str, int]:
        """(approved revision id, idempotency key, next attempt number) of an approval `owner`
        may send now, read in the transaction that records the attempt; else StateError, with
        nothing written: `nothing_to` ends "the operation is <status>; ...", `held_by` says
        who else holds the lease. The dispatcher's sends and the outcome probe's resends share it."""
        row = db.execute(
            "SELECT status, approved_revision_id, idempotency_key, attempt_count, lease_owner FROM operations WHERE id=?",
            (operation_row,),
        ).fetchone()
        if row is None:
            raise StateError("no such operation")
        status, approved_id, idem, count, lease_owner = row
        if status not in sendable or approved_id is None:
            raise StateError(f"the operation is {status}; {nothing_to}")
        if lease_owner != owner:
            raise StateError(held_by)
        return approved_id, idem, count + 1

    def _insert_attempt(
        self,
        db: Any,
        operation_row: int,
        approved_id: int,
        number: int,
        idem: str,
        at: str,
        owner: str,
    ) -> AttemptRecord:
        """The attempt row every send writes before its request leaves: the dispatcher's sends
        and the outcome probe's resends of the same approval share it."""
        cursor = db.execute(
            "INSERT INTO attempts (operation_row, revision_id, number, idempotency_key, started_at, owner)"
            " VALUES (?,?,?,?,?,?)",
            (operation_row, approved_id, number, idem, at, owner),
        )
        return AttemptRecord(
            id=int(cursor.lastrowid),
            operation_row=operation_row,
            revision_id=approved_id,
            number=number,
            idempotency_key=idem,
            started_at=at,
            finished_at=None,
            outcome=None,
            http_status=None,
            response=None,
            detail=None,
            owner=owner,
        )

    def record_operation(
        self,
        company_id: int,
        request_id: int,
        session_id: str,
        operation: Operation,
        carrier_text: str | None = None,
        interface: str | None = None,
        first_response: tuple[int | None, Any] | None = None,
        account_owned: bool = False,
        account: str | None = None,
    ) -> RecordResult:
        """Keep an operation (or a new revision of one) that a request returned.

        A new revision replaces the current one. Where no approval is under way it reopens
        the operation for a decision; while sending, the caller decides (see engine).
        `first_response` (status, response) is kept for the request in the same commit.
        `account_owned`: the request was signed in, so the operation is the account's (Ops 3);
        once an operation is the account's it stays so. `account`: the account the request was
        signed in as, where the agent knows it (sign_ins.account); the operation then belongs to
        that account, as returned with its current revision (None: unknown, approvable from any
        signed-in Session as before).
        """
        if interface is None:
            interface = self.get_request(request_id)[0].interface
        at = stamp()
        with self._write(Durability.SOON):
            result, superseded = self._record_operation(
                company_id,
                request_id,
                session_id,
                operation,
                carrier_text,
                interface,
                first_response,
                at,
            )
            if account_owned:
                # Whose it is changes only while nobody's approval of it is under way: a Company
                # that gives one operation_id to two accounts (Ops 3 forbids it) must not turn an
                # approval one account made into the other's, to be sent with its token.
                self._db.execute(
                    "UPDATE operations SET account_owned=1, account=CASE "
                    "WHEN status IN ('pending', 'withdrawn') OR account_owned=0 THEN ? "
                    "ELSE account END WHERE id=?",
                    (account, result.operation_row),
                )
                # Which sign-in carried it (Ops 3), for when its account is not named.
                from poppy_tui.agent.store.owning_account import note_returned_sign_in

                note_returned_sign_in(self._db, result.operation_row, company_id, request_id)
        if superseded:
            # An approval that must no longer be sent: on disk before anyone is told.
            self._flusher.sync_now()
        return result

    def _record_operation(
        self,
        company_id: int,
        request_id: int,
        session_id: str,
        operation: Operation,
        carrier_text: str | None,
        interface: str,
        first_response: tuple[int | None, Any] | None,
        at: str,
    ) -> tuple[RecordResult, bool]:
        """record_operation's transaction body; also says whether it superseded an approval."""
        db = self._db
        if first_response is not None:
            self._first_response(request_id, *first_response)
        row = db.execute(
            "SELECT id, status, current_revision_id FROM operations WHERE company_id=? AND operation_id=?",
            (company_id, operation.operation_id),
        ).fetchone()
        new_operation = row is None
        if new_operation:
            cursor = db.execute(
                "INSERT INTO operations (company_id, operation_id, interface, session_id, status,"
                " created_at, updated_at) VALUES (?,?,?,?,?,?,?)",
                (company_id, operation.operation_id, interface, session_id, Status.PENDING, at, at),
            )
            assert cursor.lastrowid is not None  # set by every INSERT
            op_row, status, previous = cursor.lastrowid, Status.PENDING, None
            self._event(op_row, "received", f"revision {operation.revision}")
        else:
            op_row, status, previous = int(row[0]), Status(row[1]), row[2]
        self.link_request_operation(db, request_id, op_row)  # who asked (requesters.py)
        existing = (
            None
            if new_operation
            else db.execute(
                "SELECT id FROM revisions WHERE operation_row=? AND revision=?",
                (op_row, operation.revision),
            ).fetchone()
        )
        if existing is not None:
            return RecordResult(op_row, int(existing[0]), False, False, previous, status), False
        cursor = db.execute(
            "INSERT INTO revisions (operation_row, revision, request_id, summary, terms_json, expires_at,"
            " expires_at_text, raw_json, carrier_text, received_at, session_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                op_row,
                operation.revision,
                request_id,
                operation.summary,
                operation.terms_json,
                stamp(operation.expires_at),
                operation.expires_at_text,
                _dumps(operation.raw),
                carrier_text,
                at,
                session_id,
            ),
        )
        assert cursor.lastrowid is not None  # set by every INSERT
        revision_id = cursor.lastrowid
        new_status, superseded = status, False
        if not new_operation:
            self._event(op_row, "new_revision", f"revision {operation.revision}")
            # What the new terms do is the lifecycle's (its rules "new terms ..."): an approval of
            # other terms must not be sent (spec 5); once sent, the revision is only recorded.
            from poppy_tui.agent.lifecycle.events import NewRevision
            from poppy_tui.agent.lifecycle.facts import Facts
            from poppy_tui.agent.lifecycle.machine import Do, step

            decided = step(
                Facts(status, previous or 0, operation.expires_at), NewRevision(), parse_stamp(at)
            )
            new_status, superseded = decided.to, decided.do == Do.SUPERSEDE
            if superseded:
                self._event(op_row, "superseded", decided.detail)
        # `interface` follows the current revision: an approval of it goes back through the
        # interface of the request that returned it (Ops 6), whichever returned the first one.
        # So does `session_id`: a revision returned signed out is approved in its own Session
        # (Ops 3), which after an invalid_session is a later one than the first revision's.
        db.execute(
            "UPDATE operations SET current_revision_id=?, status=?, updated_at=?, interface=?, session_id=?,"
            " approved_revision_id=CASE WHEN ? THEN NULL ELSE approved_revision_id END,"
            " send_after=CASE WHEN ? THEN NULL ELSE send_after END"
            " WHERE id=?",
            (
                revision_id,
                new_status,
                at,
                interface,
                session_id,
                int(superseded),
                int(superseded),
                op_row,
            ),
        )
        return RecordResult(
            op_row, revision_id, new_operation, True, previous, new_status
        ), superseded

    def get_operation(self, operation_row: int) -> OperationRecord:
        row = self._db.execute(f"{_OPERATION_SELECT} WHERE o.id=?", (operation_row,)).fetchone()
        if row is None:
            raise KeyError(operation_row)
        return _operation(row)

    def find_operation(self, key: str) -> OperationRecord | None:
        """By row number or by the Company's operation_id (the newest if several Companies reuse one)."""
        if key.isdigit():
            try:
                return self.get_operation(int(key))
            except KeyError:
                pass
        row = self._db.execute(
            f"{_OPERATION_SELECT} WHERE o.operation_id=? ORDER BY o.id DESC LIMIT 1", (key,)
        ).fetchone()
        return None if row is None else _operation(row)

    def get_revision(self, revision_id: int) -> RevisionRecord:
        row = self._db.execute(
            f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE id=?", (revision_id,)
        ).fetchone()
        if row is None:
            raise KeyError(revision_id)
        return _revision(row)

    def revisions(self, operation_row: int) -> list[RevisionRecord]:
        rows = self._db.execute(
            f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE operation_row=? ORDER BY id",
            (operation_row,),
        ).fetchall()
        return [_revision(r) for r in rows]

    def revision_requests(
        self, operation_row: int
    ) -> list[tuple[int, str, int, RequestDescription]]:
        """(revision row, revision, request row, request) for each revision, oldest first: which
        request returned which terms."""
        rows = self._db.execute(
            "SELECT r.id, r.revision, q.id, q.request_json FROM revisions r JOIN requests q ON q.id = r.request_id"
            " WHERE r.operation_row=? ORDER BY r.id",
            (operation_row,),
        ).fetchall()
        return [(r[0], r[1], r[2], request_of(r[3])) for r in rows]

    def previous_seen_revision(
        self, operation_row: int, before_revision_id: int
    ) -> RevisionRecord | None:
        """The latest revision the person opened before this one: what 'changed since' compares with."""
        row = self._db.execute(
            f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE operation_row=? AND id<? AND seen_at IS NOT NULL"
            " ORDER BY id DESC LIMIT 1",
            (operation_row, before_revision_id),
        ).fetchone()
        if row is None:
            row = self._db.execute(
                f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE operation_row=? AND id<? ORDER BY id DESC LIMIT 1",
                (operation_row, before_revision_id),
            ).fetchone()
        return None if row is None else _revision(row)

    def mark_seen(self, revision_id: int) -> None:
        with self._write(Durability.SOON) as db:
            db.execute(
                "UPDATE revisions SET seen_at=? WHERE id=? AND seen_at IS NULL",
                (stamp(), revision_id),
            )

    def decisions(self, operation_row: int) -> list[DecisionRecord]:
        rows = self._db.execute(
            "SELECT id, operation_row, revision_id, decision, decided_at, actor, note FROM decisions"
            " WHERE operation_row=? ORDER BY id",
            (operation_row,),
        ).fetchall()
        return [DecisionRecord(*r) for r in rows]

    def attempts(self, operation_row: int) -> list[AttemptRecord]:
        rows = self._db.execute(
            f"SELECT {_ATTEMPT_COLUMNS} FROM attempts WHERE operation_row=? ORDER BY id",
            (operation_row,),
        ).fetchall()
        return [_attempt(r) for r in rows]

    def events(self, operation_row: int) -> list[EventRecord]:
        rows = self._db.execute(
            "SELECT id, operation_row, at, kind, detail FROM events WHERE operation_row=? ORDER BY id",
            (operation_row,),
        ).fetchall()
        return [EventRecord(*r) for r in rows]
