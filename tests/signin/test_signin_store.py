"""The sign_ins table: added by migration 3 to databases of the schema before, with nothing lost,
and holding nothing secret."""

from __future__ import annotations


from poppy_tui.agent.store import Store

DOCUMENT = {
    "protocol_version": "0.4",
    "organization": {"name": "Old Shop", "domain": "127.0.0.1:9"},
    "auth": {"issuer": "http://127.0.0.1:9"},
    "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
}


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
