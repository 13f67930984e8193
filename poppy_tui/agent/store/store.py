"""The durable record: SQLite on disk, WAL, file mode 0600; when each commit is fsynced: durability.py.

Every state change is one short `BEGIN IMMEDIATE` transaction whose WHERE clause
checks the state it moves from, so several processes (the TUI, CLI agents) can
share one file and a change only happens once. A decision is committed before
anything is sent; an attempt row is committed before the request leaves.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sqlite3
import uuid
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from poppy_tui.agent.store.records import (
    AttemptRecord,
    CompanyRecord,
    DecisionRecord,
    EventRecord,
    OperationRecord,
    OperationRow,
    RecordResult,
    RevisionRecord,
    Status,
    loads,
    request_of,
)
from poppy_tui.agent.store.durability import Durability, WalFlusher
from poppy_tui.agent.store.schema import MIGRATIONS, SCHEMA_VERSION
from poppy_tui.protocol.discovery import CompanyDocument
from poppy_tui.protocol.ids import new_id
from poppy_tui.protocol.operation import Operation
from poppy_tui.protocol.requests import RequestDescription, request_to_json

BUSY_TIMEOUT_SECONDS = 10.0
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
STAMP_LENGTH = len("2026-01-01T00:00:00.000000Z")


class StoreError(RuntimeError):
    """The database can't be used (corrupt, locked, newer, unwritable). Nothing was changed."""


class StateError(RuntimeError):
    """The operation is not in a state that allows this (e.g. approving an expired revision)."""


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def stamp(value: datetime | None = None) -> str:
    """UTC, fixed width (YYYY-MM-DDTHH:MM:SS.ffffffZ), so text comparison in SQL is time comparison."""
    value = (value or now_utc()).astimezone(timezone.utc)
    return value.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def parse_stamp(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    if value.tzinfo is None or len(text) != STAMP_LENGTH:
        raise ValueError(f"not a stored time stamp: {text!r}")
    return value


def _create_private_file(path: Path) -> None:
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def store_error(exc: sqlite3.Error, path: Path) -> StoreError:
    message = str(exc)
    if "not a database" in message or "malformed" in message:
        return StoreError(
            f"the database {path} is damaged ({message}). It was left untouched; "
            "move it aside to start a new one, or restore a backup."
        )
    if "locked" in message or "busy" in message:
        return StoreError(f"the database {path} is busy or locked by another process ({message}); nothing was changed")
    if "disk" in message or "full" in message:
        return StoreError(f"the database {path} could not be written ({message}); nothing was changed")
    return StoreError(f"the database {path} can't be used: {message}")


class _Cursor:
    __slots__ = ("_cursor", "_path")

    def __init__(self, cursor: sqlite3.Cursor, path: Path) -> None:
        self._cursor = cursor
        self._path = path

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    def fetchone(self) -> Any:
        try:
            return self._cursor.fetchone()
        except (sqlite3.IntegrityError, sqlite3.ProgrammingError):
            raise
        except sqlite3.DatabaseError as exc:
            raise store_error(exc, self._path) from None

    def fetchall(self) -> list[Any]:
        try:
            return self._cursor.fetchall()
        except (sqlite3.IntegrityError, sqlite3.ProgrammingError):
            raise
        except sqlite3.DatabaseError as exc:
            raise store_error(exc, self._path) from None


class _Connection:
    """The connection as the store uses it: a damaged page, a lock or a full disk surfaces as a
    StoreError wherever a statement meets it, instead of a raw sqlite3 error mid-screen. Constraint
    violations and API misuse (IntegrityError, ProgrammingError) are our bugs and raise as themselves."""

    __slots__ = ("_connection", "_path")

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        self._path = path

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Cursor:
        try:
            return _Cursor(self._connection.execute(sql, params), self._path)
        except UnicodeEncodeError:
            # A lone surrogate (JSON can spell "\ud800") is no character and has no UTF-8 form.
            # Keep the record anyway, with U+FFFD in its place. (Operations holding one are
            # refused earlier, by parse_operation; this is for everything else a Company says.)
            return self.execute(sql, [_LONE_SURROGATE.sub("\ufffd", p) if isinstance(p, str) else p for p in params])
        except (sqlite3.IntegrityError, sqlite3.ProgrammingError):
            raise
        except sqlite3.DatabaseError as exc:
            raise store_error(exc, self._path) from None

    @property
    def total_changes(self) -> int:
        return self._connection.total_changes

    def close(self) -> None:
        self._connection.close()


class Store:
    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._db = _Connection(connection, path)
        self.path = path
        self._flusher = WalFlusher(path)

    # ---- opening -------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> "Store":
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _create_private_file(path)
        except OSError as exc:
            raise StoreError(f"cannot create the database {path}: {exc.strerror or exc}") from None
        try:
            connection = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the database {path}: {exc}") from None
        store = cls(connection, path)
        try:
            store._configure()
            store._migrate()
        except StoreError:
            connection.close()
            raise
        except sqlite3.DatabaseError as exc:
            connection.close()
            raise store_error(exc, path) from None
        return store

    def _configure(self) -> None:
        mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"the database {self.path} could not switch to WAL mode (got {mode})")
        # NORMAL between transactions; _write raises it to FULL around each NOW commit (durability.py).
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_SECONDS * 1000)}")

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the database {self.path} was written by a newer poppy-tui (schema {version}, "
                f"this one knows {SCHEMA_VERSION}); upgrade poppy-tui."
            )
        if version == SCHEMA_VERSION:
            return
        with self._write():
            current = self._db.execute("PRAGMA user_version").fetchone()[0]
            for number in range(current, SCHEMA_VERSION):
                for statement in _split_sql(MIGRATIONS[number]):
                    self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def check_integrity(self) -> list[str]:
        """SQLite's quick_check: ["ok"], or what is damaged. Reads the whole file, so it is not
        run on every open; damage met by a read raises StoreError anyway."""
        return [row[0] for row in self._db.execute("PRAGMA quick_check(5)").fetchall()]

    def close(self) -> None:
        self._flusher.close()
        self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self, durability: Durability = Durability.NOW) -> Iterator[_Connection]:
        """One write transaction, on disk when `durability` says (durability.py explains the three)."""
        now = durability is Durability.NOW
        changes = self._db.total_changes
        if now:
            self._db.execute("PRAGMA synchronous=FULL")
        try:
            with self._transaction() as db:
                yield db
        finally:
            if now:
                self._db.execute("PRAGMA synchronous=NORMAL")
        if self._db.total_changes == changes:
            return  # nothing was written, so nothing was synced either
        if durability is Durability.NOW:
            self._flusher.committed_now()
        elif durability is Durability.SOON:
            self._flusher.committed_soon()

    def _write_one(self, sql: str, params: Sequence[Any], durability: Durability) -> _Cursor:
        """One statement as its own transaction (SQLite's autocommit): as atomic as a _write, and
        spared the BEGIN and COMMIT round trips. For SOON and LAZY commits; NOW ones use _write."""
        assert durability is not Durability.NOW
        try:
            cursor = self._db.execute(sql, params)
        except StoreError as exc:
            if "nothing was changed" in str(exc):
                raise  # a lock or a full disk, already said so
            raise StoreError(f"could not save to the database ({exc}); nothing was changed") from None
        if cursor.rowcount > 0 and durability is Durability.SOON:
            self._flusher.committed_soon()
        return cursor

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every commit so far is on disk (SOON commits are fsynced in the background)."""
        return self._flusher.wait(timeout)

    @contextmanager
    def _transaction(self) -> Iterator[_Connection]:
        self._db.execute("BEGIN IMMEDIATE")  # a lock held elsewhere past the busy timeout: StoreError
        try:
            yield self._db
        except BaseException:
            try:
                self._db.execute("ROLLBACK")
            except StoreError:
                pass  # SQLite already rolled back (e.g. after a full disk)
            raise
        else:
            try:
                self._db.execute("COMMIT")
            except StoreError as exc:
                try:
                    self._db.execute("ROLLBACK")
                except StoreError:
                    pass
                raise StoreError(f"could not save to the database ({exc}); nothing was changed") from None

    def _event(self, operation_row: int, kind: str, detail: str | None = None, at: datetime | None = None) -> None:
        self._db.execute(
            "INSERT INTO events (operation_row, at, kind, detail) VALUES (?, ?, ?, ?)",
            (operation_row, stamp(at), kind, detail),
        )

    def change_token(self) -> tuple[int, int]:
        """Changes when any connection (this or another process) commits; cheap to poll."""
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        return version, self._db.total_changes

    # ---- companies -----------------------------------------------------------------------

    def upsert_company(
        self, base_url: str, document: CompanyDocument, cache: tuple[str | None, datetime] | None = None
    ) -> CompanyRecord:
        """Keep a Company's poppy.json; `cache` is (ETag, fresh until) from the answer that
        carried it. Adding a removed Company again brings it back, with its old identity."""
        at = stamp()
        with self._write(Durability.SOON) as db:
            row = db.execute("SELECT id FROM companies WHERE base_url = ?", (base_url,)).fetchone()
            doc_json = _dumps(document.raw)
            if row is None:
                db.execute(
                    "INSERT INTO companies (base_url, domain, name, document_json, supports_operations,"
                    " user_id, session_id, discovered_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        base_url,
                        document.domain,
                        document.name,
                        doc_json,
                        int(document.supports_operations),
                        new_id("usr_"),
                        new_id("ses_"),
                        at,
                        at,
                    ),
                )
            else:
                db.execute(
                    "UPDATE companies SET domain=?, name=?, document_json=?, supports_operations=?,"
                    " updated_at=?, removed_at=NULL WHERE id=?",
                    (document.domain, document.name, doc_json, int(document.supports_operations), at, row[0]),
                )
            if cache is not None:
                company_id = db.execute("SELECT id FROM companies WHERE base_url = ?", (base_url,)).fetchone()[0]
                self._keep_document_cache(db, company_id, cache[0], cache[1], at)
        company = self.find_company(base_url)
        assert company is not None
        return company

    @staticmethod
    def _keep_document_cache(db: sqlite3.Connection, company_id: int, etag: str | None, fresh_until: datetime, at: str) -> None:
        db.execute(
            "INSERT INTO company_documents (company_id, etag, fetched_at, fresh_until) VALUES (?,?,?,?)"
            " ON CONFLICT (company_id) DO UPDATE SET etag=excluded.etag, fetched_at=excluded.fetched_at,"
            " fresh_until=excluded.fresh_until",
            (company_id, etag, at, stamp(fresh_until)),
        )

    def document_cache(self, company_id: int) -> tuple[str | None, datetime] | None:
        """(ETag, fresh until) of the Company's stored poppy.json, or None if never recorded."""
        row = self._db.execute(
            "SELECT etag, fresh_until FROM company_documents WHERE company_id=?", (company_id,)
        ).fetchone()
        return None if row is None else (row[0], parse_stamp(row[1]))

    def keep_document_fresh(self, company_id: int, etag: str | None, fresh_until: datetime) -> None:
        """The Company said its poppy.json is unchanged (304): it stays fresh until `fresh_until`."""
        with self._write(Durability.SOON) as db:
            self._keep_document_cache(db, company_id, etag, fresh_until, stamp())

    def unsettled_operations(self, company_id: int) -> int:
        """Operations with this Company that still wait for a person or for an outcome."""
        return self._db.execute(
            "SELECT count(*) FROM operations WHERE company_id=? AND status IN (?,?,?,?,?)",
            (company_id, "pending", "withdrawn", "approved", "sending", "outcome_unknown"),
        ).fetchone()[0]

    def remove_company(self, company_id: int) -> CompanyRecord:
        """Forget a Company for lists and look-ups. Its records (requests, operations, decisions)
        stay, so history still names it; adding it again brings it back."""
        unsettled = self.unsettled_operations(company_id)
        if unsettled:
            raise StateError(
                f"{unsettled} operation(s) with this Company still wait for a decision or an outcome; "
                "settle them first (poppy-tui pending)"
            )
        with self._write(Durability.SOON) as db:
            db.execute("UPDATE companies SET removed_at=? WHERE id=?", (stamp(), company_id))
        return self.get_company(company_id)

    def new_session(self, company_id: int) -> CompanyRecord:
        """Start a new Session with a Company (after invalid_session)."""
        with self._write(Durability.SOON) as db:
            db.execute(
                "UPDATE companies SET session_id=?, updated_at=? WHERE id=?",
                (new_id("ses_"), stamp(), company_id),
            )
        return self.get_company(company_id)

    def get_company(self, company_id: int) -> CompanyRecord:
        row = self._db.execute(f"SELECT {_COMPANY_COLUMNS} FROM companies WHERE id=?", (company_id,)).fetchone()
        if row is None:
            raise KeyError(company_id)
        return _company(row)

    def find_company(self, key: str) -> CompanyRecord | None:
        """By base URL, domain or name (case-insensitive), in that order; then by the start of a
        name ("manzanita"), but only when exactly one Company's name starts that way."""
        matches = self.match_companies(key)
        return matches[0] if len(matches) == 1 else None

    def match_companies(self, key: str) -> list[CompanyRecord]:
        """Every Company `key` could mean, by the first rule that matches any: base URL, domain,
        name (case-insensitive), then the start of a name. More than one is ambiguous."""
        for column in ("base_url", "domain", "name"):
            rows = self._db.execute(
                f"SELECT {_COMPANY_COLUMNS} FROM companies WHERE lower({column}) = lower(?)"
                " AND removed_at IS NULL ORDER BY id",
                (key.rstrip("/") if column == "base_url" else key,),
            ).fetchall()
            if rows:
                return [_company(r) for r in rows]
        if not key.strip():
            return []
        prefix = key.strip().lower()
        return [c for c in self.list_companies() if c.name.lower().startswith(prefix)]

    def list_companies(self) -> list[CompanyRecord]:
        rows = self._db.execute(
            f"SELECT {_COMPANY_COLUMNS} FROM companies WHERE removed_at IS NULL ORDER BY name, id"
        ).fetchall()
        return [_company(r) for r in rows]

    # ---- requests ------------------------------------------------------------------------

    def add_request(self, company_id: int, request: RequestDescription, origin: str) -> int:
        cursor = self._write_one(
            "INSERT INTO requests (company_id, interface, request_json, origin, created_at) VALUES (?,?,?,?,?)",
            (company_id, request.interface, request_to_json(request), origin, stamp()),
            Durability.SOON,
        )
        return int(cursor.lastrowid)

    def set_first_response(self, request_id: int, status: int | None, response: Any) -> None:
        with self._write(Durability.SOON):
            self._first_response(request_id, status, response)

    def _first_response(self, request_id: int, status: int | None, response: Any) -> None:
        self._db.execute(
            "UPDATE requests SET first_status=?, first_response_json=? WHERE id=? AND first_response_json IS NULL",
            (status, _dumps(response), request_id),
        )

    def get_request(self, request_id: int) -> tuple[RequestDescription, int | None, Any]:
        row = self._db.execute(
            "SELECT request_json, first_status, first_response_json FROM requests WHERE id=?", (request_id,)
        ).fetchone()
        if row is None:
            raise KeyError(request_id)
        return request_of(row[0]), row[1], loads(row[2])

    # ---- operations and revisions ----------------------------------------------------------

    def record_operation(
        self,
        company_id: int,
        request_id: int,
        session_id: str,
        operation: Operation,
        carrier_text: str | None = None,
        interface: str | None = None,
        first_response: tuple[int | None, Any] | None = None,
    ) -> RecordResult:
        """Keep an operation (or a new revision of one) that a request returned.

        A new revision replaces the current one. Where no approval is under way it reopens
        the operation for a decision; while sending, the caller decides (see engine).
        `first_response` (status, response) is kept for the request in the same commit.
        """
        if interface is None:
            interface = self.get_request(request_id)[0].interface
        at = stamp()
        with self._write(Durability.SOON):
            result, superseded = self._record_operation(
                company_id, request_id, session_id, operation, carrier_text, interface, first_response, at
            )
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
            op_row, status, previous = int(cursor.lastrowid), Status.PENDING, None
            self._event(op_row, "received", f"revision {operation.revision}")
        else:
            op_row, status, previous = int(row[0]), Status(row[1]), row[2]
        existing = None if new_operation else db.execute(
            "SELECT id FROM revisions WHERE operation_row=? AND revision=?", (op_row, operation.revision)
        ).fetchone()
        if existing is not None:
            return RecordResult(op_row, int(existing[0]), False, False, previous, status), False
        cursor = db.execute(
            "INSERT INTO revisions (operation_row, revision, request_id, summary, terms_json, expires_at,"
            " expires_at_text, raw_json, carrier_text, received_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
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
            ),
        )
        revision_id = int(cursor.lastrowid)
        new_status = status
        if not new_operation:
            self._event(op_row, "new_revision", f"revision {operation.revision}")
            if status in (Status.PENDING, Status.WITHDRAWN, Status.DECLINED, Status.EXPIRED, Status.NOT_PERFORMED):
                new_status = Status.PENDING
            elif status == Status.APPROVED:
                # The approval was for other terms: it must not be sent (spec 5).
                new_status = Status.PENDING
                self._event(op_row, "superseded", "a new revision arrived before sending; approve again")
        db.execute(
            "UPDATE operations SET current_revision_id=?, status=?, updated_at=?,"
            " approved_revision_id=CASE WHEN ? THEN NULL ELSE approved_revision_id END,"
            " send_after=CASE WHEN ? THEN NULL ELSE send_after END"
            " WHERE id=?",
            (
                revision_id,
                new_status,
                at,
                int(status == Status.APPROVED),
                int(status == Status.APPROVED),
                op_row,
            ),
        )
        return RecordResult(op_row, revision_id, new_operation, True, previous, new_status), status == Status.APPROVED

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
        row = self._db.execute(f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE id=?", (revision_id,)).fetchone()
        if row is None:
            raise KeyError(revision_id)
        return _revision(row)

    def revisions(self, operation_row: int) -> list[RevisionRecord]:
        rows = self._db.execute(
            f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE operation_row=? ORDER BY id", (operation_row,)
        ).fetchall()
        return [_revision(r) for r in rows]

    def previous_seen_revision(self, operation_row: int, before_revision_id: int) -> RevisionRecord | None:
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
            db.execute("UPDATE revisions SET seen_at=? WHERE id=? AND seen_at IS NULL", (stamp(), revision_id))

    def decisions(self, operation_row: int) -> list[DecisionRecord]:
        rows = self._db.execute(
            "SELECT id, operation_row, revision_id, decision, decided_at, actor, note FROM decisions"
            " WHERE operation_row=? ORDER BY id",
            (operation_row,),
        ).fetchall()
        return [DecisionRecord(*r) for r in rows]

    def attempts(self, operation_row: int) -> list[AttemptRecord]:
        rows = self._db.execute(
            f"SELECT {_ATTEMPT_COLUMNS} FROM attempts WHERE operation_row=? ORDER BY id", (operation_row,)
        ).fetchall()
        return [_attempt(r) for r in rows]

    def events(self, operation_row: int) -> list[EventRecord]:
        rows = self._db.execute(
            "SELECT id, operation_row, at, kind, detail FROM events WHERE operation_row=? ORDER BY id",
            (operation_row,),
        ).fetchall()
        return [EventRecord(*r) for r in rows]

    def list_operations(
        self,
        statuses: Iterable[Status | str] | None = None,
        company_id: int | None = None,
        text: str | None = None,
        limit: int = 200,
        offset: int = 0,
        newest_first: bool = True,
    ) -> list[OperationRow]:
        where, params = self._filters(statuses, company_id, text)
        order = "DESC" if newest_first else "ASC"
        rows = self._db.execute(
            f"""
            SELECT o.id, o.company_id, c.name, c.domain, o.operation_id, o.interface, o.status,
                   r.revision, r.summary, r.terms_json, r.expires_at,
                   (SELECT count(*) FROM revisions rr WHERE rr.operation_row = o.id),
                   o.created_at, o.updated_at,
                   (SELECT max(d.decided_at) FROM decisions d WHERE d.operation_row = o.id),
                   (SELECT ar.revision FROM revisions ar WHERE ar.id = o.approved_revision_id),
                   o.outcome_detail
            FROM operations o
            JOIN companies c ON c.id = o.company_id
            JOIN revisions r ON r.id = o.current_revision_id
            {where}
            ORDER BY o.updated_at {order}, o.id {order}
            LIMIT ? OFFSET ?
            """,
            (*params, limit, offset),
        ).fetchall()
        return [
            OperationRow(
                id=r[0], company_id=r[1], company_name=r[2], company_domain=r[3], operation_id=r[4],
                interface=r[5], status=Status(r[6]), revision=r[7], summary=r[8], terms=loads(r[9]),
                expires_at=parse_stamp(r[10]), revision_count=r[11], created_at=r[12], updated_at=r[13],
                decided_at=r[14], approved_revision=r[15], outcome_detail=r[16],
            )
            for r in rows
        ]

    def count_operations(
        self, statuses: Iterable[Status | str] | None = None, company_id: int | None = None, text: str | None = None
    ) -> int:
        where, params = self._filters(statuses, company_id, text)
        return self._db.execute(
            f"SELECT count(*) FROM operations o JOIN companies c ON c.id = o.company_id"
            f" JOIN revisions r ON r.id = o.current_revision_id {where}",
            params,
        ).fetchone()[0]

    @staticmethod
    def _filters(
        statuses: Iterable[Status | str] | None, company_id: int | None, text: str | None
    ) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if statuses is not None:
            values = [str(Status(s)) for s in statuses]
            clauses.append(f"o.status IN ({','.join('?' * len(values))})" if values else "0")
            params.extend(values)
        if company_id is not None:
            clauses.append("o.company_id = ?")
            params.append(company_id)
        if text:
            pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            clauses.append(
                "(r.summary LIKE ? ESCAPE '\\' OR o.operation_id LIKE ? ESCAPE '\\' OR c.name LIKE ? ESCAPE '\\')"
            )
            params.extend([pattern] * 3)
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", params

    # ---- decisions (only the person at the TUI makes these) --------------------------------

    def approve(
        self, operation_row: int, revision_id: int, grace_seconds: float, actor: str = "tui", now: datetime | None = None
    ) -> OperationRecord:
        now = now or now_utc()
        with self._write(Durability.SOON) as db:
            row = db.execute(
                "SELECT o.status, o.current_revision_id, r.expires_at, o.interface FROM operations o"
                " JOIN revisions r ON r.id = o.current_revision_id WHERE o.id=?",
                (operation_row,),
            ).fetchone()
            if row is None:
                raise StateError("no such operation")
            status, current_id, expires_at, interface = Status(row[0]), row[1], parse_stamp(row[2]), row[3]
            if current_id != revision_id:
                raise StateError("a newer revision of these terms arrived; review it before approving")
            if not status.is_open:
                raise StateError(f"the operation is {status.value}; it can't be approved now")
            if expires_at <= now:
                raise StateError("this revision has expired; it can no longer be approved")
            # The key is generated once per approval and reused on every resend. For a
            # conversation it is the approval message's own ID (at least 128 random bits, as
            # message IDs need); elsewhere a bare UUID (conventions.IDEMPOTENCY_KEY_QUOTED).
            key = new_id("msg_") if interface == "conversation" else str(uuid.uuid4())
            db.execute(
                "UPDATE operations SET status=?, approved_revision_id=?, send_after=?, idempotency_key=?,"
                " next_attempt_at=NULL, lease_owner=NULL, lease_until=NULL, updated_at=? WHERE id=?",
                (
                    Status.APPROVED,
                    revision_id,
                    stamp(now + timedelta(seconds=max(0.0, grace_seconds))),
                    key,
                    stamp(now),
                    operation_row,
                ),
            )
            self._decision(operation_row, revision_id, "approved", actor, None, now)
            self._event(operation_row, "approved", f"grace {grace_seconds:g}s", now)
        return self.get_operation(operation_row)

    def decline(self, operation_row: int, revision_id: int, actor: str = "tui", note: str | None = None) -> OperationRecord:
        with self._write() as db:
            cursor = db.execute(
                "UPDATE operations SET status=?, approved_revision_id=NULL, send_after=NULL, lease_owner=NULL,"
                " lease_until=NULL, updated_at=? WHERE id=? AND current_revision_id=? AND status IN (?,?,?)",
                (Status.DECLINED, stamp(), operation_row, revision_id, Status.PENDING, Status.WITHDRAWN, Status.APPROVED),
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
                "SELECT approved_revision_id FROM operations WHERE id=? AND status=?", (operation_row, Status.APPROVED)
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

    def resolve_unknown(self, operation_row: int, performed: bool, actor: str = "tui", note: str | None = None) -> OperationRecord:
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
                (status, note or ("confirmed performed" if performed else "confirmed not performed"), stamp(), operation_row),
            )
            self._decision(
                operation_row, approved_id or current_id,
                "resolved_performed" if performed else "resolved_not_performed", actor, note,
            )
            self._event(operation_row, "resolved", status.value)
        return self.get_operation(operation_row)

    def _decision(
        self, operation_row: int, revision_id: int, decision: str, actor: str, note: str | None, at: datetime | None = None
    ) -> None:
        self._db.execute(
            "INSERT INTO decisions (operation_row, revision_id, decision, decided_at, actor, note) VALUES (?,?,?,?,?,?)",
            (operation_row, revision_id, decision, stamp(at), actor, note),
        )

    def _why_not(self, operation_row: int, verb: str) -> str:
        row = self._db.execute("SELECT status FROM operations WHERE id=?", (operation_row,)).fetchone()
        if row is None:
            return "no such operation"
        return f"the operation is {row[0]}; it can't be {verb} now"

    # ---- the dispatcher's side -------------------------------------------------------------

    def expire_due(self, now: datetime | None = None) -> list[int]:
        """Undecided (or approved, never sent) operations whose revision expired."""
        at = stamp(now)
        query = (
            "SELECT o.id FROM operations o JOIN revisions r ON r.id = o.current_revision_id"
            " WHERE o.status IN (?,?,?) AND r.expires_at <= ?"
        )
        params = (Status.PENDING, Status.WITHDRAWN, Status.APPROVED, at)
        # Looked up outside a write transaction first: the dispatcher asks on every pass,
        # and an empty BEGIN IMMEDIATE would still take the lock from other processes.
        if not self._db.execute(query, params).fetchone():
            return []
        with self._write(Durability.SOON) as db:
            rows = db.execute(query, params).fetchall()
            for (op_row,) in rows:
                db.execute(
                    "UPDATE operations SET status=?, approved_revision_id=NULL, send_after=NULL, updated_at=? WHERE id=?",
                    (Status.EXPIRED, at, op_row),
                )
                self._event(op_row, "expired")
        return [r[0] for r in rows]

    def claim_due(
        self, owner: str, lease_seconds: float, now: datetime | None = None, operation_row: int | None = None
    ) -> OperationRecord | None:
        """Take the lease on one operation that is due to be sent, atomically across processes."""
        now = now or now_utc()
        at = stamp(now)
        due = """(lease_until IS NULL OR lease_until <= ?)
                 AND ((status = ? AND send_after <= ?)
                  OR (status = ? AND (next_attempt_at IS NULL OR next_attempt_at <= ?)))"""
        due_params = (at, Status.APPROVED, at, Status.SENDING, at)
        only = "AND id = ?" if operation_row is not None else ""
        find = f"SELECT id FROM operations WHERE {due} {only} ORDER BY updated_at LIMIT 1"
        find_params = (*due_params, *([operation_row] if operation_row is not None else []))
        while True:
            row = self._db.execute(find, find_params).fetchone()
            if row is None:
                return None  # nothing due: no write lock taken
            # One statement is one transaction: the lease is taken only if the operation is
            # still due and unleased when the write lock is ours. Another process may have won.
            claimed = self._write_one(
                f"UPDATE operations SET lease_owner=?, lease_until=? WHERE id=? AND {due}",
                (owner, stamp(now + timedelta(seconds=lease_seconds)), row[0], *due_params),
                Durability.LAZY,
            )
            if claimed.rowcount == 1:
                break
        return self.get_operation(row[0])

    def next_due_at(self) -> datetime | None:
        """The soonest moment claim_due could return something: a grace period ending, a
        scheduled retry, or a lease lapsing. None when nothing is approved or sending."""
        rows = self._db.execute(
            "SELECT status, send_after, next_attempt_at, lease_until FROM operations WHERE status IN (?,?)",
            (Status.APPROVED, Status.SENDING),
        ).fetchall()
        times = []
        for status, send_after, next_at, lease_until in rows:
            candidates = [t for t in ((send_after if status == Status.APPROVED else next_at), lease_until) if t]
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
            row = db.execute(
                "SELECT status, approved_revision_id, idempotency_key, attempt_count, lease_owner FROM operations WHERE id=?",
                (operation_row,),
            ).fetchone()
            if row is None:
                raise StateError("no such operation")
            status, approved_id, idem, count, lease_owner = row
            if status not in (Status.APPROVED, Status.SENDING) or approved_id is None:
                raise StateError(f"the operation is {status}; nothing to send")
            if lease_owner != owner:
                raise StateError("another sender holds this operation")
            number = count + 1
            at = stamp()
            db.execute(
                "UPDATE operations SET status=?, attempt_count=?, updated_at=? WHERE id=?",
                (Status.SENDING, number, at, operation_row),
            )
            cursor = db.execute(
                "INSERT INTO attempts (operation_row, revision_id, number, idempotency_key, started_at, owner)"
                " VALUES (?,?,?,?,?,?)",
                (operation_row, approved_id, number, idem, at, owner),
            )
            self._event(operation_row, "attempt", f"#{number}")
        return AttemptRecord(
            id=int(cursor.lastrowid), operation_row=operation_row, revision_id=approved_id, number=number,
            idempotency_key=idem, started_at=at, finished_at=None, outcome=None, http_status=None, response=None,
            detail=None, owner=owner,
        )

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
        self, attempt_id: int, outcome: str, http_status: int | None, response_json: str, detail: str | None
    ) -> None:
        self._db.execute(
            "UPDATE attempts SET finished_at=?, outcome=?, http_status=?, response_json=?, detail=? WHERE id=?",
            (stamp(), outcome, http_status, response_json, detail, attempt_id),
        )

    def schedule_retry(self, operation_row: int, owner: str, delay_seconds: float, detail: str | None = None) -> None:
        with self._write(Durability.SOON) as db:
            db.execute(
                "UPDATE operations SET next_attempt_at=?, lease_owner=NULL, lease_until=NULL, outcome_detail=?,"
                " updated_at=? WHERE id=? AND lease_owner=? AND status=?",
                (stamp(now_utc() + timedelta(seconds=delay_seconds)), detail, stamp(), operation_row, owner, Status.SENDING),
            )

    def settle(
        self,
        operation_row: int,
        owner: str,
        status: Status,
        outcome: Any = None,
        detail: str | None = None,
    ) -> None:
        """End a send: performed, not performed, or outcome unknown (or pending again after a new revision)."""
        with self._write(Durability.SOON):
            self._settle(operation_row, owner, status, _dumps(outcome), detail)

    def finish_and_settle(
        self,
        attempt: tuple[int, str, int | None, Any, str | None],
        operation_row: int,
        owner: str,
        status: Status,
        outcome: Any = None,
        detail: str | None = None,
    ) -> None:
        """finish_attempt(*attempt) and settle(...) in one commit: the last answer and the
        operation's final state are kept together or not at all."""
        attempt_id, attempt_outcome, http_status, response, attempt_detail = attempt
        response_json = _dumps(response)
        # The outcome is usually the last answer itself: encode it once.
        outcome_json = response_json if outcome is response else _dumps(outcome)
        with self._write(Durability.SOON):
            self._finish_attempt(attempt_id, attempt_outcome, http_status, response_json, attempt_detail)
            self._settle(operation_row, owner, status, outcome_json, detail)

    def _settle(self, operation_row: int, owner: str, status: Status, outcome_json: str, detail: str | None) -> None:
        cursor = self._db.execute(
            "UPDATE operations SET status=?, outcome_json=?, outcome_detail=?, lease_owner=NULL, lease_until=NULL,"
            " next_attempt_at=NULL, updated_at=? WHERE id=? AND lease_owner=? AND status=?",
            (status, outcome_json, detail, stamp(), operation_row, owner, Status.SENDING),
        )
        if cursor.rowcount != 1:
            raise StateError(self._why_not(operation_row, f"settled as {status.value}"))
        self._event(operation_row, status.value, detail)

    # ---- conversations ---------------------------------------------------------------------

    def upsert_conversation(self, company_id: int, endpoint: str, conversation_id: str, cursor: str | None = None) -> int:
        at = stamp()
        with self._write(Durability.SOON) as db:
            db.execute(
                "INSERT INTO conversations (company_id, endpoint, conversation_id, cursor, created_at, updated_at)"
                " VALUES (?,?,?,?,?,?) ON CONFLICT (company_id, conversation_id)"
                " DO UPDATE SET cursor=coalesce(excluded.cursor, cursor), updated_at=excluded.updated_at",
                (company_id, endpoint, conversation_id, cursor, at, at),
            )
            return db.execute(
                "SELECT id FROM conversations WHERE company_id=? AND conversation_id=?", (company_id, conversation_id)
            ).fetchone()[0]

    def latest_conversation(self, company_id: int) -> tuple[int, str, str, str | None] | None:
        """(row, endpoint, conversation_id, cursor) of the newest conversation with a Company."""
        row = self._db.execute(
            "SELECT id, endpoint, conversation_id, cursor FROM conversations WHERE company_id=?"
            " ORDER BY updated_at DESC, id DESC LIMIT 1",
            (company_id,),
        ).fetchone()
        return None if row is None else tuple(row)  # type: ignore[return-value]

    def add_message(self, conversation_row: int, message: dict[str, Any], role: str) -> bool:
        """Keep a message once (by its ID); returns False if it was already kept."""
        message_id = str(message.get("id") or new_id("msg_"))
        text = message.get("text") if isinstance(message.get("text"), str) else None
        with self._write(Durability.SOON) as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO messages (conversation_row, message_id, role, text, message_json, created_at)"
                " VALUES (?,?,?,?,?,?)",
                (conversation_row, message_id, role, text, _dumps(message), stamp()),
            )
            return cursor.rowcount == 1

    def get_conversation(self, conversation_row: int) -> tuple[int, int, str, str, str | None]:
        """(row, company_id, endpoint, conversation_id, cursor)."""
        row = self._db.execute(
            "SELECT id, company_id, endpoint, conversation_id, cursor FROM conversations WHERE id=?",
            (conversation_row,),
        ).fetchone()
        if row is None:
            raise KeyError(conversation_row)
        return tuple(row)  # type: ignore[return-value]

    def find_conversation(self, company_id: int, conversation_id: str) -> int | None:
        row = self._db.execute(
            "SELECT id FROM conversations WHERE company_id=? AND conversation_id=?", (company_id, conversation_id)
        ).fetchone()
        return None if row is None else int(row[0])

    def set_cursor(self, conversation_row: int, cursor: str | None) -> None:
        """Move the read position; None resets it (after cursor_expired)."""
        with self._write(Durability.SOON) as db:
            db.execute(
                "UPDATE conversations SET cursor=?, updated_at=? WHERE id=?", (cursor, stamp(), conversation_row)
            )

    def message_position(self, conversation_row: int, message_id: str) -> int | None:
        """Where a kept message sits in the conversation (its row id); later messages sort after it."""
        row = self._db.execute(
            "SELECT id FROM messages WHERE conversation_row=? AND message_id=?", (conversation_row, message_id)
        ).fetchone()
        return None if row is None else int(row[0])

    def messages_after(
        self, conversation_row: int, position: int, role: str | None = None
    ) -> list[tuple[str, str, str | None, dict[str, Any]]]:
        """(message_id, role, text, message) kept after `position`, in the order received."""
        rows = self._db.execute(
            "SELECT message_id, role, text, message_json FROM messages WHERE conversation_row=? AND id>?"
            + (" AND role=?" if role else "") + " ORDER BY id",
            (conversation_row, position, *([role] if role else [])),
        ).fetchall()
        return [(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def set_request_conversation(self, request_id: int, conversation_id: str) -> None:
        """Fill in the conversation a first message created, once the Company has named it."""
        with self._write(Durability.SOON) as db:
            row = db.execute("SELECT request_json FROM requests WHERE id=?", (request_id,)).fetchone()
            if row is None:
                raise KeyError(request_id)
            data = json.loads(row[0])
            if data.get("interface") != "conversation" or data.get("conversation_id") not in (None, conversation_id):
                raise StateError("this request already belongs to another conversation")
            data["conversation_id"] = conversation_id
            db.execute(
                "UPDATE requests SET request_json=? WHERE id=?",
                (json.dumps(data, ensure_ascii=False, sort_keys=True), request_id),
            )

    def last_conversation_request(self, company_id: int, conversation_id: str) -> int | None:
        """The newest message we sent in a conversation: what a Company message there answers."""
        row = self._db.execute(
            "SELECT id FROM requests WHERE company_id=? AND interface='conversation'"
            " AND json_extract(request_json, '$.conversation_id') = ? ORDER BY id DESC LIMIT 1",
            (company_id, conversation_id),
        ).fetchone()
        return None if row is None else int(row[0])

    def messages(self, conversation_row: int) -> list[tuple[str, str, str | None, dict[str, Any]]]:
        """(message_id, role, text, message) in the order received."""
        rows = self._db.execute(
            "SELECT message_id, role, text, message_json FROM messages WHERE conversation_row=? ORDER BY id",
            (conversation_row,),
        ).fetchall()
        return [(r[0], r[1], r[2], json.loads(r[3])) for r in rows]


_COMPANY_COLUMNS = (
    "id, base_url, domain, name, document_json, supports_operations, user_id, session_id, discovered_at, updated_at"
)
_REVISION_COLUMNS = (
    "id, operation_row, revision, request_id, summary, terms_json, expires_at, expires_at_text, raw_json,"
    " carrier_text, received_at, seen_at"
)
_ATTEMPT_COLUMNS = (
    "id, operation_row, revision_id, number, idempotency_key, started_at, finished_at, outcome, http_status,"
    " response_json, detail, owner"
)


# An operation with its current revision, the request that revision answered, and its Company:
# one statement, since every screen and every send reads all four together.
_OPERATION_SELECT = (
    "SELECT o.id, o.operation_id, o.interface, o.session_id, o.status, o.approved_revision_id, o.send_after,"
    " o.idempotency_key, o.next_attempt_at, o.attempt_count, o.outcome_json, o.outcome_detail, o.created_at,"
    " o.updated_at, q.request_json, "
    + ", ".join(f"r.{c.strip()}" for c in _REVISION_COLUMNS.split(","))
    + ", "
    + ", ".join(f"c.{c.strip()}" for c in _COMPANY_COLUMNS.split(","))
    + " FROM operations o JOIN revisions r ON r.id = o.current_revision_id"
    " JOIN requests q ON q.id = r.request_id JOIN companies c ON c.id = o.company_id"
)
_REVISION_WIDTH = len(_REVISION_COLUMNS.split(","))


@functools.lru_cache(maxsize=64)
def _company(row: tuple[Any, ...]) -> CompanyRecord:
    """Every operation read carries its Company, whose row (poppy.json included) rarely changes:
    one parsed record per distinct row. Records are read-only, so sharing one is safe."""
    return CompanyRecord(
        id=row[0], base_url=row[1], domain=row[2], name=row[3], document=json.loads(row[4]),
        supports_operations=bool(row[5]), user_id=row[6], session_id=row[7], discovered_at=row[8], updated_at=row[9],
    )


def _revision(row: Sequence[Any]) -> RevisionRecord:
    return RevisionRecord(
        id=row[0], operation_row=row[1], revision=row[2], request_id=row[3], summary=row[4], terms=loads(row[5]),
        expires_at=parse_stamp(row[6]), expires_at_text=row[7], raw=json.loads(row[8]), carrier_text=row[9],
        received_at=row[10], seen_at=row[11],
    )


def _attempt(row: Sequence[Any]) -> AttemptRecord:
    return AttemptRecord(
        id=row[0], operation_row=row[1], revision_id=row[2], number=row[3], idempotency_key=row[4],
        started_at=row[5], finished_at=row[6], outcome=row[7], http_status=row[8], response=loads(row[9]),
        detail=row[10], owner=row[11],
    )


def _operation(row: Sequence[Any]) -> OperationRecord:
    (op_id, operation_id, interface, session_id, status, approved_id, send_after, idem, next_at, attempts,
     outcome_json, outcome_detail, created, updated, request_json) = row[:15]
    current = _revision(row[15:15 + _REVISION_WIDTH])
    return OperationRecord(
        id=op_id,
        company=_company(tuple(row[15 + _REVISION_WIDTH:])),
        operation_id=operation_id,
        interface=interface,
        session_id=session_id,
        status=Status(status),
        current=current,
        approved_revision_id=approved_id,
        send_after=send_after,
        idempotency_key=idem,
        next_attempt_at=next_at,
        attempt_count=attempts,
        outcome=loads(outcome_json),
        outcome_detail=outcome_detail,
        created_at=created,
        updated_at=updated,
        request=request_of(request_json),
        request_id=current.request_id,
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _split_sql(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
