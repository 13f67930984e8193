"""The store's connection to SQLite: opening, migrating, write transactions and their durability.

Every state change is one short `BEGIN IMMEDIATE` transaction whose WHERE clause
checks the state it moves from, so several processes (the TUI, CLI agents) can
share one file and a change only happens once. When each commit is fsynced: durability.py.
"""

from __future__ import annotations

import os
import re
import sqlite3
from contextlib import contextmanager
from datetime import datetime, UTC
from pathlib import Path

from poppy_tui.agent import clock
from poppy_tui.agent.store.durability import Durability, WalFlusher
from poppy_tui.agent.store.schema import MIGRATIONS, SCHEMA_VERSION

TYPE_CHECKING = False  # typing is not imported on `pending`'s path (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, TypeVar
    from collections.abc import Iterator, Mapping, Sequence

    _S = TypeVar("_S", bound="StoreBase")

BUSY_TIMEOUT_SECONDS = 10.0
# Claims and attempts are single `UPDATE ... RETURNING` statements (store/dispatch.py), which
# SQLite has since 3.35.0 (2021-03). Python links the system's SQLite on most Linux systems.
MINIMUM_SQLITE = (3, 35, 0)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
STAMP_LENGTH = len("2026-01-01T00:00:00.000000Z")


class StoreError(RuntimeError):
    """The database can't be used (corrupt, locked, newer, unwritable). Nothing was changed."""


class StateError(RuntimeError):
    """The operation is not in a state that allows this (e.g. approving an expired revision)."""


def now_utc() -> datetime:
    return clock.now_utc()


def stamp(value: datetime | None = None) -> str:
    """UTC, fixed width (YYYY-MM-DDTHH:MM:SS.ffffffZ), so text comparison in SQL is time comparison."""
    value = (value or now_utc()).astimezone(UTC)
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


def require_sqlite(version: tuple[int, int, int]) -> None:
    """Refuse, in one line and before touching any file, a SQLite too old for the store's SQL."""
    if tuple(version) < MINIMUM_SQLITE:
        need = ".".join(map(str, MINIMUM_SQLITE))
        have = ".".join(map(str, version))
        raise StoreError(
            f"this Python's SQLite is {have}; poppy-tui needs {need} or newer "
            "(a newer Python, or one built against a newer SQLite)"
        )


def store_error(exc: sqlite3.Error, path: Path) -> StoreError:
    message = str(exc)
    if "not a database" in message or "malformed" in message:
        return StoreError(
            f"the database {path} is damaged ({message}). It was left untouched; "
            "move it aside to start a new one, or restore a backup."
        )
    if "locked" in message or "busy" in message:
        return StoreError(
            f"the database {path} is busy or locked by another process ({message}); nothing was changed"
        )
    if "disk" in message or "full" in message:
        return StoreError(
            f"the database {path} could not be written ({message}); nothing was changed"
        )
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

    def fetchmany(self, size: int) -> list[Any]:
        try:
            return self._cursor.fetchmany(size)
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

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> _Cursor:
        try:
            return _Cursor(self._connection.execute(sql, params), self._path)
        except UnicodeEncodeError:
            # A lone surrogate (JSON can spell "\ud800") is no character and has no UTF-8 form.
            # Keep the record anyway, with U+FFFD in its place. (Operations holding one are
            # refused earlier, by parse_operation; this is for everything else a Company says.)
            return self.execute(
                sql, [_LONE_SURROGATE.sub("\ufffd", p) if isinstance(p, str) else p for p in params]
            )
        except (sqlite3.IntegrityError, sqlite3.ProgrammingError):
            raise
        except sqlite3.DatabaseError as exc:
            raise store_error(exc, self._path) from None

    @property
    def total_changes(self) -> int:
        return self._connection.total_changes

    def close(self) -> None:
        self._connection.close()


class StoreBase:
    """The connection, opening and migrating, and the write transactions every part of the store uses."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._db = _Connection(connection, path)
        self.path = path
        self._flusher = WalFlusher(path)
        self._awaited = 0  # the last Durability.AWAITED commit not yet handed to its caller

    # ---- opening -------------------------------------------------------------------------

    @classmethod
    def open(cls: type[_S], path: str | os.PathLike[str]) -> _S:
        path = Path(path)
        require_sqlite(sqlite3.sqlite_version_info)
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

    def __enter__(self: _S) -> _S:
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
        self._committed(durability)

    def _committed(self, durability: Durability) -> None:
        """Tell the flusher about a commit that wrote something, as its durability asks."""
        if durability is Durability.NOW:
            self._flusher.committed_now()
        elif durability is Durability.SOON:
            self._flusher.committed_soon()
        elif durability is Durability.AWAITED:
            self._awaited = self._flusher.committed_awaited()

    def _write_one(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any], durability: Durability
    ) -> _Cursor:
        """One statement as its own transaction (SQLite's autocommit): as atomic as a _write, and
        spared the BEGIN and COMMIT round trips. For SOON and LAZY commits; NOW ones use _write."""
        assert durability is not Durability.NOW
        try:
            cursor = self._db.execute(sql, params)
        except StoreError as exc:
            if "nothing was changed" in str(exc):
                raise  # a lock or a full disk, already said so
            raise StoreError(
                f"could not save to the database ({exc}); nothing was changed"
            ) from None
        if cursor.rowcount > 0:
            self._committed(durability)
        return cursor

    def take_awaited(self) -> int:
        """The number of the last AWAITED commit (0: none since the last call), for sync_through."""
        awaited, self._awaited = self._awaited, 0
        return awaited

    def sync_through(self, commit: int) -> None:
        """Block until AWAITED commit number `commit` (and every commit before it) is on disk.
        Meant for a worker thread (asyncio.to_thread): the fsync releases the GIL and the event
        loop goes on. StoreError if the log could not be fsynced."""
        if commit <= 0:
            return
        try:
            self._flusher.sync_through(commit)
        except OSError as exc:
            raise StoreError(f"could not make the database {self.path} durable ({exc})") from None

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every commit so far is on disk (SOON commits are fsynced in the background)."""
        return self._flusher.wait(timeout)

    @contextmanager
    def _transaction(self) -> Iterator[_Connection]:
        self._db.execute(
            "BEGIN IMMEDIATE"
        )  # a lock held elsewhere past the busy timeout: StoreError
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
                raise StoreError(
                    f"could not save to the database ({exc}); nothing was changed"
                ) from None

    def _event(
        self, operation_row: int, kind: str, detail: str | None = None, at: datetime | None = None
    ) -> None:
        self._db.execute(
            "INSERT INTO events (operation_row, at, kind, detail) VALUES (?, ?, ?, ?)",
            (operation_row, stamp(at), kind, detail),
        )

    def change_token(self) -> tuple[int, int]:
        """Changes when any connection (this or another process) commits; cheap to poll."""
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        return version, self._db.total_changes

    def _why_not(self, operation_row: int, verb: str) -> str:
        """Why a guarded state change matched no row: for the StateError the caller raises."""
        row = self._db.execute(
            "SELECT status FROM operations WHERE id=?", (operation_row,)
        ).fetchone()
        if row is None:
            return "no such operation"
        return f"the operation is {row[0]}; it can't be {verb} now"


def _split_sql(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
