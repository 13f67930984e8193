"""The devices paired with `poppy-tui web`: one-time pairing links, each device's credential, its
passkeys, and where the page is served now.

Kept in a small SQLite file of its own in the data folder (`web-devices.sqlite3`, mode 0600),
apart from the operations store: nothing here is an operation, and the store's schema and
migrations stay the operations' own. Several processes use it at once (the server, `poppy-tui web
pair`/`devices`/`revoke`, the TUI's Devices screen), which SQLite's locking handles.

Only hashes are kept: a pairing code and a device credential are 256 random bits each, so a plain
SHA-256 of them can't be searched back; a copy of the file lets no one in. A credential is looked
up on every request, so a revoked device is out at its next one.

Standard library only (sqlite3, hashlib, secrets): `poppy-tui web devices` stays a short command.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta, UTC
from pathlib import Path
from collections.abc import Iterator

from poppy_tui.agent import clock

FILE_NAME = "web-devices.sqlite3"
SERVER_FILE = "web-server.json"
# A pairing link is valid this long, and for one use.
PAIRING_SECONDS = 300
# Device names: the person's own words, kept short; shown sanitised like everything else.
NAME_MAX = 40
# last_seen is written at most this often per device (every request reads the credential).
SEEN_EVERY_SECONDS = 30
_MODE = 0o600

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pairings (
    code_hash TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
);
CREATE TABLE IF NOT EXISTS devices (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    credential_hash TEXT NOT NULL UNIQUE,
    paired_at TEXT NOT NULL,
    last_seen TEXT,
    revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS passkeys (
    id INTEGER PRIMARY KEY,
    device_id INTEGER NOT NULL REFERENCES devices(id),
    credential_id BLOB NOT NULL UNIQUE,
    public_key BLOB NOT NULL,
    sign_count INTEGER NOT NULL,
    added_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY,
    device_id INTEGER NOT NULL REFERENCES devices(id),
    operation_row INTEGER NOT NULL,
    revision_id INTEGER,
    decision TEXT NOT NULL,
    at TEXT NOT NULL,
    passkey INTEGER NOT NULL DEFAULT 0
);
"""


class DeviceError(ValueError):
    """A pairing or a device name that can't be used (one line for the person)."""


@dataclass(frozen=True)
class Device:
    id: int
    name: str  # as the person typed it: sanitise before showing
    paired_at: datetime
    last_seen: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True)
class Pairing:
    code: str  # goes in the link once; only its hash is kept
    expires_at: datetime


@dataclass(frozen=True)
class Passkey:
    credential_id: bytes
    public_key: bytes
    sign_count: int


def _now() -> datetime:
    return clock.now_utc()


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def _moment(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii", "replace")).hexdigest()


def clean_name(name: str) -> str:
    """The device's name as kept: whitespace runs made one space, at most NAME_MAX characters.
    Control and bidi characters stay (sanitising at display shows them as tokens)."""
    name = " ".join(str(name).split())
    if not name:
        raise DeviceError("give the device a name, e.g. 'my phone'")
    return name[:NAME_MAX]


class DeviceBook:
    """The devices file, opened for one process (one connection; `check_same_thread` off, as the
    web server reads it from its event loop and the TUI from a worker)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, _MODE))
        self._db = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SCHEMA)

    @classmethod
    def open(cls, data_dir: Path) -> DeviceBook:
        return cls(Path(data_dir) / FILE_NAME)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> DeviceBook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # ---- pairing ----------------------------------------------------------------------------

    def new_pairing(self, seconds: float = PAIRING_SECONDS, now: datetime | None = None) -> Pairing:
        """A pairing code valid for `seconds` and one use; expired ones are forgotten."""
        now = now or _now()
        code = secrets.token_urlsafe(32)
        expires = now + timedelta(seconds=seconds)
        with self._write() as db:
            db.execute(
                "DELETE FROM pairings WHERE expires_at < ?", (_stamp(now - timedelta(days=1)),)
            )
            db.execute(
                "INSERT INTO pairings (code_hash, created_at, expires_at) VALUES (?, ?, ?)",
                (secret_hash(code), _stamp(now), _stamp(expires)),
            )
        return Pairing(code, expires)

    def pairing_open(self, code: str, now: datetime | None = None) -> bool:
        """Whether `code` may still pair a device (shown before the device is named)."""
        row = self._db.execute(
            "SELECT expires_at, used_at FROM pairings WHERE code_hash=?", (secret_hash(code),)
        ).fetchone()
        return row is not None and row[1] is None and _moment(row[0]) > (now or _now())  # type: ignore[operator]

    def redeem(self, code: str, name: str, now: datetime | None = None) -> tuple[Device, str]:
        """Use the pairing code (once) for a new device named `name`: (the device, its credential).
        The credential goes to the device; only its hash is kept."""
        now = now or _now()
        name = clean_name(name)
        credential = secrets.token_urlsafe(32)
        with self._write() as db:
            used = db.execute(
                "UPDATE pairings SET used_at=? WHERE code_hash=? AND used_at IS NULL "
                "AND expires_at > ?",
                (_stamp(now), secret_hash(code), _stamp(now)),
            )
            if used.rowcount != 1:
                raise DeviceError(
                    "this pairing link was used already or has expired; make a new one with "
                    "'poppy-tui web pair' (or p on the TUI's Companies screen)"
                )
            name = self._unique_name(db, name)
            cursor = db.execute(
                "INSERT INTO devices (name, credential_hash, paired_at) VALUES (?, ?, ?)",
                (name, secret_hash(credential), _stamp(now)),
            )
        device = Device(int(cursor.lastrowid or 0), name, now, None, None)
        return device, credential

    def _unique_name(self, db: sqlite3.Connection, name: str) -> str:
        taken = {
            row[0].casefold()
            for row in db.execute("SELECT name FROM devices WHERE revoked_at IS NULL")
        }
        if name.casefold() not in taken:
            return name
        for number in range(2, 1000):
            candidate = f"{name[: NAME_MAX - 6]} ({number})"
            if candidate.casefold() not in taken:
                return candidate
        raise DeviceError("too many devices by that name; revoke some first")

    # ---- devices ----------------------------------------------------------------------------

    def device_for(self, credential: str, now: datetime | None = None) -> Device | None:
        """The paired, not revoked device whose credential this is (its last_seen moved on)."""
        if not credential or len(credential) > 200:
            return None
        row = self._db.execute(
            "SELECT id, name, paired_at, last_seen, revoked_at FROM devices "
            "WHERE credential_hash=? AND revoked_at IS NULL",
            (secret_hash(credential),),
        ).fetchone()
        if row is None:
            return None
        device = _device(row)
        now = now or _now()
        if (
            device.last_seen is None
            or (now - device.last_seen).total_seconds() > SEEN_EVERY_SECONDS
        ):
            with self._write() as db:
                db.execute("UPDATE devices SET last_seen=? WHERE id=?", (_stamp(now), device.id))
        return device

    def is_active(self, device_id: int) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM devices WHERE id=? AND revoked_at IS NULL", (device_id,)
        ).fetchone()
        return row is not None

    def devices(self, include_revoked: bool = False) -> list[Device]:
        query = "SELECT id, name, paired_at, last_seen, revoked_at FROM devices"
        if not include_revoked:
            query += " WHERE revoked_at IS NULL"
        return [_device(row) for row in self._db.execute(query + " ORDER BY paired_at, id")]

    def revoke(self, name: str, now: datetime | None = None) -> Device | None:
        """End the device named `name` (compared without regard to case) at once: its next request
        is refused. None when no paired device has that name."""
        now = now or _now()
        wanted = " ".join(str(name).split()).casefold()
        with self._write() as db:
            for row in db.execute(
                "SELECT id, name, paired_at, last_seen, revoked_at FROM devices "
                "WHERE revoked_at IS NULL"
            ).fetchall():
                if row[1].casefold() == wanted:
                    db.execute("UPDATE devices SET revoked_at=? WHERE id=?", (_stamp(now), row[0]))
                    db.execute("DELETE FROM passkeys WHERE device_id=?", (row[0],))
                    return _device((*row[:4], _stamp(now)))
        return None

    # ---- passkeys ---------------------------------------------------------------------------

    def add_passkey(
        self, device_id: int, credential_id: bytes, public_key: bytes, sign_count: int
    ) -> None:
        with self._write() as db:
            db.execute(
                "INSERT INTO passkeys (device_id, credential_id, public_key, sign_count, added_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (device_id, credential_id, public_key, sign_count, _stamp(_now())),
            )

    def passkeys(self, device_id: int) -> list[Passkey]:
        return [
            Passkey(bytes(row[0]), bytes(row[1]), int(row[2]))
            for row in self._db.execute(
                "SELECT credential_id, public_key, sign_count FROM passkeys WHERE device_id=?",
                (device_id,),
            )
        ]

    def used_passkey(self, credential_id: bytes, sign_count: int) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE passkeys SET sign_count=? WHERE credential_id=?",
                (sign_count, credential_id),
            )

    # ---- who decided ------------------------------------------------------------------------

    def record_decision(
        self,
        device_id: int,
        operation_row: int,
        revision_id: int | None,
        decision: str,
        passkey: bool = False,
    ) -> None:
        """Which device made a decision (the store records the decision itself)."""
        with self._write() as db:
            db.execute(
                "INSERT INTO decisions (device_id, operation_row, revision_id, decision, at, "
                "passkey) VALUES (?, ?, ?, ?, ?, ?)",
                (device_id, operation_row, revision_id, decision, _stamp(_now()), int(passkey)),
            )

    def decisions_by(self, device_id: int) -> list[tuple[int, str]]:
        return [
            (int(row[0]), str(row[1]))
            for row in self._db.execute(
                "SELECT operation_row, decision FROM decisions WHERE device_id=? ORDER BY id",
                (device_id,),
            )
        ]


def _device(row: tuple) -> Device:
    return Device(int(row[0]), str(row[1]), _moment(row[2]), _moment(row[3]), _moment(row[4]))  # type: ignore[arg-type]


# ---- where the page is served now ---------------------------------------------------------------


@dataclass(frozen=True)
class ServedPage:
    url: str  # the address pairing links start with
    pid: int
    passkey: bool


def server_path(data_dir: Path) -> Path:
    return Path(data_dir) / SERVER_FILE


def announce_server(data_dir: Path, url: str, passkey: bool) -> None:
    """Written by a starting `poppy-tui web`, so `web pair` and the TUI know its address."""
    path = server_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, _MODE)
    with os.fdopen(fd, "w") as handle:
        json.dump({"url": url, "pid": os.getpid(), "passkey": passkey}, handle)
    os.replace(temporary, path)


def forget_server(data_dir: Path) -> None:
    """Removed by a stopping `poppy-tui web` (only its own announcement)."""
    path = server_path(data_dir)
    served = served_page(data_dir, check_running=False)
    if served is not None and served.pid == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def served_page(data_dir: Path, check_running: bool = True) -> ServedPage | None:
    """Where `poppy-tui web` serves now, or None when it isn't running."""
    try:
        with open(server_path(data_dir), encoding="utf-8") as handle:
            data = json.load(handle)
        served = ServedPage(str(data["url"]), int(data["pid"]), bool(data.get("passkey")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if check_running:
        try:
            os.kill(served.pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # running, as another user
    return served


def pairing_link(url: str, code: str) -> str:
    return f"{url.rstrip('/')}/pair/{code}"
