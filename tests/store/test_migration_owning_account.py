"""The owning-account migration (schema migration 9: WHICH account an account-owned operation
belongs to, Ops §3 "while signed in to the same account"): a database of the schema before it
opens with nothing lost, and its account-owned operations, whose account is unknown, behave as
before: approvable whichever account is signed in."""

from __future__ import annotations

import sqlite3

from tests.store.migration_support import undo_who_asked
from poppy_tui.agent.store import Status, Store
from poppy_tui.agent.store.schema import SCHEMA_VERSION
from poppy_tui.agent.store.sign_ins import save_sign_in
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest

# Its number in schema.MIGRATIONS (later migrations are appended after it).
OWNING_ACCOUNT_MIGRATION = 9

DOCUMENT = {
    "protocol_version": "0.4",
    "organization": {"name": "Old Shop", "domain": "127.0.0.1:9"},
    "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
    "extensions": {"operations": [{"version": "2"}]},
}


def _old_store(path) -> tuple[int, int]:
    """A store with one account-owned operation (recorded as `alice`), taken back to schema 8."""
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
            company.id,
            request_id,
            company.session_id,
            operation,
            None,
            "api",
            account_owned=True,
            account="alice",
        ).operation_row
        assert store.get_operation(row).account == "alice"
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE operations DROP COLUMN account")
    undo_who_asked(db)  # migration 10's
    db.execute(f"PRAGMA user_version={OWNING_ACCOUNT_MIGRATION - 1}")
    db.commit()
    db.close()
    return company.id, row


def test_operations_from_before_the_migration_keep_everything_and_have_no_account(tmp_path):
    path = tmp_path / "poppy.db"
    _, row = _old_store(path)
    with Store.open(path) as store:
        op = store.get_operation(row)
        assert (op.operation_id, op.current.revision, op.current.summary) == (
            "op_old",
            "r1",
            "Old **terms**",
        )
        assert op.account_owned is True and op.account is None and op.status == Status.PENDING
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_an_old_account_operation_is_approvable_whichever_account_is_signed_in(tmp_path):
    path = tmp_path / "poppy.db"
    company_id, row = _old_store(path)
    with Store.open(path) as store:
        save_sign_in(store, company_id, "http://127.0.0.1:9", "mediated", ("orders",), "bob")
        op = store.get_operation(row)
        approved = store.approve(row, op.current.id, 0)
        assert approved.status == Status.APPROVED
