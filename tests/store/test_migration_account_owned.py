"""The account-owned migration (schema migration 4: an operation returned signed in belongs to the
account, Ops §3): a database of the schema before it opens with nothing lost."""

from __future__ import annotations

import sqlite3

from tests.store.migration_support import undo_who_asked
from poppy_tui.agent.store import Store
from poppy_tui.agent.store.schema import SCHEMA_VERSION
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest

# Its number in schema.MIGRATIONS (later migrations are appended after it).
ACCOUNT_OWNED_MIGRATION = 4

DOCUMENT = {
    "protocol_version": "0.4",
    "organization": {"name": "Old Shop", "domain": "127.0.0.1:9"},
    "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
    "extensions": {"operations": [{"version": "2"}]},
}


def test_operations_from_before_the_migration_are_kept_and_session_bound(tmp_path):
    path = tmp_path / "poppy.db"
    with Store.open(path) as store:
        company = store.upsert_company(
            "http://127.0.0.1:9", parse_poppy_json(DOCUMENT, "127.0.0.1:9", True)
        )
        request_id = store.add_request(
            company.id, ApiRequest("POST", "http://127.0.0.1:9/x", {"a": 1}), "cli"
        )
        operation = parse_operation(
            {
                "operation_id": "op_old",
                "revision": "r1",
                "summary": "Old **terms**",
                "expires_at": "2099-01-01T00:00:00Z",
            }
        )
        row = store.record_operation(
            company.id, request_id, company.session_id, operation, None, "api"
        ).operation_row
    # Back to the schema before: the two columns gone, the version one lower.
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE operations DROP COLUMN account_owned")
    db.execute("ALTER TABLE operations DROP COLUMN waiting_sign_in")
    db.execute("ALTER TABLE revisions DROP COLUMN session_id")  # migration 7's
    db.execute("ALTER TABLE operations DROP COLUMN account")  # migration 9's
    undo_who_asked(db)  # migration 10's
    db.execute(f"PRAGMA user_version={ACCOUNT_OWNED_MIGRATION - 1}")
    db.commit()
    db.close()
    with Store.open(path) as store:
        op = store.get_operation(row)
        assert (op.operation_id, op.current.revision, op.current.summary) == (
            "op_old",
            "r1",
            "Old **terms**",
        )
        assert op.account_owned is False and op.waiting_sign_in is None
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
