"""A durable record of the operations the demo Company performed (SQLite on disk).

At most once (Ops 7) must survive a restart: if the Company performed an operation and
the answer was lost, an approval sent again after the Company came back must get the
first outcome, not a second performance. Each outcome is committed (synchronous=FULL)
before the response that reports it is sent. Only finished performances are recorded:
the shop itself lives in memory, so one cut off by a crash did not take effect. On start,
the recorded actions are applied again to the fresh shop, in order, under their operation
ids (`Shop.reapply`), so its orders, subscription and booking agree with the record.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from datetime import datetime

from poppy_tui.demo.shop import Action, Outcome

_SCHEMA = """
CREATE TABLE IF NOT EXISTS performed (
    operation_id TEXT PRIMARY KEY,
    revision     TEXT NOT NULL,
    owner        TEXT NOT NULL,  -- the Session, or the account, the operation belongs to
    channel      TEXT NOT NULL,  -- the request that returned it
    started_at   TEXT NOT NULL,
    status_code  INTEGER NOT NULL,
    result       TEXT NOT NULL,  -- JSON
    text         TEXT NOT NULL,
    action       TEXT NOT NULL,  -- JSON [kind, {params}]: to bring a fresh shop up to date
    seq          INTEGER NOT NULL  -- the order they were performed in
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

    def load(self) -> list[tuple[str, str, str, str, datetime, Outcome, Action]]:
        """(operation_id, revision, owner, channel, started_at, outcome, action) for each
        performed operation, in the order they were performed."""
        with self._lock:
            rows = self._db.execute(
                "SELECT operation_id, revision, owner, channel, started_at, status_code, result, text, action"
                " FROM performed ORDER BY seq"
            ).fetchall()
        loaded = []
        for op_id, revision, owner, channel, started, status, result, text, action in rows:
            kind, params = json.loads(action)
            loaded.append(
                (
                    op_id,
                    revision,
                    owner,
                    channel,
                    datetime.fromisoformat(started),
                    Outcome(status, json.loads(result), text),
                    Action.of(kind, **params),
                )
            )
        return loaded

    def record(
        self,
        operation_id: str,
        revision: str,
        owner: str,
        channel: str,
        started_at: datetime,
        outcome: Outcome,
        action: Action,
    ) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO performed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " (SELECT COALESCE(MAX(seq), 0) + 1 FROM performed))",
                (
                    operation_id,
                    revision,
                    owner,
                    channel,
                    started_at.isoformat(),
                    outcome.status_code,
                    json.dumps(outcome.result, sort_keys=True),
                    outcome.text,
                    json.dumps([action.kind, action.args]),
                ),
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()
