"""Migration 7 (the Session of each revision): a database from before it opens with nothing lost,
and its revisions, whose Session was not recorded, fall back to the operation's Session."""

from __future__ import annotations

import sqlite3

from tests.store.migration_support import undo_who_asked
from poppy_tui.agent.store import Store
from poppy_tui.agent.store.schema import SCHEMA_VERSION
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest

# Its number in schema.MIGRATIONS (later migrations are appended after it).
REVISION_SESSIONS_MIGRATION = 7
DOCUMENT = {
    "protocol_version": "0.4",
    "organization": {"name": "Old Shop", "domain": "127.0.0.1:9"},
    "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
    "extensions": {"operations": [{"version": "2"}]},
}


def _operation(revision: str):
    return parse_operation(
        {
            "operation_id": "op_old",
            "revision": revision,
            "summary": f"Terms {revision}",
            "expires_at": "2099-01-01T00:00:00Z",
        }
    )


def test_revisions_from_before_the_migration_keep_the_operations_session(tmp_path):
    path = tmp_path / "poppy.db"
    with Store.open(path) as store:
        company = store.upsert_company(
            "http://127.0.0.1:9", parse_poppy_json(DOCUMENT, "127.0.0.1:9", True)
        )
        request_id = store.add_request(
            company.id, ApiRequest("POST", "http://127.0.0.1:9/x", {"a": 1}), "cli"
        )
        row = store.record_operation(
            company.id, request_id, "sid_old", _operation("r1"), None, "api"
        ).operation_row
    db = sqlite3.connect(path)  # back to the schema before: no revisions.session_id
    db.execute("ALTER TABLE revisions DROP COLUMN session_id")
    db.execute("ALTER TABLE operations DROP COLUMN account")  # migration 9's
    undo_who_asked(db)  # migration 10's
    db.execute(f"PRAGMA user_version={REVISION_SESSIONS_MIGRATION - 1}")
    db.commit()
    db.close()
    with Store.open(path) as store:
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        op = store.get_operation(row)
        assert (op.current.revision, op.current.summary, op.session_id) == (
            "r1",
            "Terms r1",
            "sid_old",
        )
        assert op.current.session_id is None  # unknown: the dispatcher uses op.session_id
        # A revision recorded from now on keeps its own Session, and the operation follows it.
        later = store.record_operation(
            company.id, request_id, "sid_new", _operation("r2"), None, "api"
        )
        op = store.get_operation(row)
        assert op.current.id == later.revision_id and op.current.session_id == "sid_new"
        assert op.session_id == "sid_new"
        assert [r.session_id for r in store.revisions(row)] == [None, "sid_new"]
