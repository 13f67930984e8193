"""Taking a store back to before a migration, for the upgrade tests: each test undoes its own
migration and every later one (their columns, indexes and tables), then sets user_version."""

from __future__ import annotations

from typing import Any


def undo_who_asked(db: Any) -> None:
    """Migration 10's requester columns, request_operations and gate_agents (`db`: an sqlite3
    connection, or the store's own)."""
    for statement in (
        "DROP INDEX IF EXISTS requests_requester",
        "ALTER TABLE requests DROP COLUMN requester",
        "ALTER TABLE requests DROP COLUMN requester_client",
        "DROP TABLE IF EXISTS request_operations",
        "DROP TABLE IF EXISTS gate_agents",
    ):
        db.execute(statement)
