"""The sign_ins table: added by migration 3 to databases of the schema before, with nothing lost,
and holding nothing secret."""

from __future__ import annotations

import sqlite3

from poppy_tui.agent.store import Store
from poppy_tui.agent.store.sign_ins import delete_sign_in, get_sign_in, list_sign_ins, save_sign_in
from poppy_tui.protocol.discovery import parse_poppy_json

DOCUMENT = {
    "protocol_version": "0.4",
    "organization": {"name": "Old Shop", "domain": "127.0.0.1:9"},
    "auth": {"issuer": "http://127.0.0.1:9"},
    "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
}


def test_a_database_from_before_sign_ins_opens_with_its_companies_and_can_sign_in(tmp_path):
    path = tmp_path / "poppy.db"
    with Store.open(path) as store:
        company = store.upsert_company(
            "http://127.0.0.1:9", parse_poppy_json(DOCUMENT, "127.0.0.1:9", True)
        )
    db = sqlite3.connect(path)  # back to schema 2: no sign_ins, no account-owned columns
    db.execute("DROP TABLE sign_ins")
    db.execute("ALTER TABLE operations DROP COLUMN account_owned")
    db.execute("ALTER TABLE operations DROP COLUMN waiting_sign_in")
    db.execute("ALTER TABLE revisions DROP COLUMN session_id")
    db.execute("ALTER TABLE operations DROP COLUMN account")  # migration 9's
    db.execute("PRAGMA user_version=2")
    db.commit()
    db.close()

    with Store.open(path) as store:
        assert [c.name for c in store.list_companies()] == ["Old Shop"]
        assert list_sign_ins(store) == {}
        saved = save_sign_in(
            store, company.id, "http://127.0.0.1:9", "device", ("poppy:read",), None
        )
        assert get_sign_in(store, company.id) == saved and saved.scopes == ("poppy:read",)
        saved = save_sign_in(
            store, company.id, "http://127.0.0.1:9", "mediated", ("a", "b"), "ada@example"
        )
        assert list_sign_ins(store)[company.id].kind == "mediated"
        assert delete_sign_in(store, company.id) and get_sign_in(store, company.id) is None
        assert not delete_sign_in(store, company.id)


def test_the_table_has_no_column_for_a_token(tmp_path):
    with Store.open(tmp_path / "poppy.db") as store:
        columns = [row[1] for row in store._db.execute("PRAGMA table_info(sign_ins)").fetchall()]
    assert columns == [
        "company_id",
        "issuer",
        "kind",
        "scopes",
        "account",
        "signed_in_at",
        "updated_at",
    ]
