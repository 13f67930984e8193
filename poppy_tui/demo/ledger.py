"""A durable record of the operations the demo Company performed (SQLite on disk).

At most once (Ops 7) must survive a restart: if the Company performed an operation and
the answer was lost, an approval sent again after the Company came back must get the
first outcome, not a second performance. Each outcome is committed (synchronous=FULL)
before the response that reports it is sent. Only finished performances are recorded:
the shop itself lives in memory, so one cut off by a crash did not take effect.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from datetime import datetime

from poppy_tui.demo.shop import Outcome

_SCHEMA = """
CREATE TABLE IF NOT EXISTS performed (
    operation_id TEXT PRIMARY KEY,
    revision     TEXT NOT NULL,
    owner        TEXT NOT NULL,  -- the Session, or the account, the operation belongs to
    channel      TEXT NOT NULL,  -- the request that returned it
    started_at   TEXT NOT NULL,
    status_code  INTEGER NOT NULL,
    result       TEXT NOT NULL,  -- JSON
    text         TEXT NOT NULL
)
"""


class PerformedLedger:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(_SCHEMA)

    def load(self) -> list[tuple[str, str, str, str, datetime, Outcome]]:
        """(operation_id, revision, owner, channel, started_at, outcome) for each performed operation."""
        with self._lock:
            rows = self._db.execute(
                "SELECT operation_id, revision, owner, channel, started_at, status_code, result, text FROM performed"
            ).fetchall()
        return [
            (op_id, revision, owner, channel, datetime.fromisoformat(started), Outcome(status, json.loads(result), text))
            for op_id, revision, owner, channel, started, status, result, text in rows
        ]

    def record(self, operation_id: str, revision: str, owner: str, channel: str, started_at: datetime, outcome: Outcome) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO performed VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (operation_id, revision, owner, channel, started_at.isoformat(), outcome.status_code,
                 json.dumps(outcome.result, sort_keys=True), outcome.text),
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()
