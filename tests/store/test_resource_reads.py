"""The resource read before a decision, kept in the store (schema migration 8)."""

from __future__ import annotations

import sqlite3
from datetime import datetime, UTC

from poppy_tui.agent.store import Store
from poppy_tui.agent.store.resource_reads import ResourceRead
from poppy_tui.agent.store.schema import MIGRATIONS
from tests.store.test_revision_checks import _record

RESOURCE_READS_MIGRATION = next(i for i, sql in enumerate(MIGRATIONS, 1) if "resource_reads" in sql)


def test_a_read_is_kept_with_when_and_where_and_replaced_by_the_next(tmp_path):
    with Store.open(tmp_path / "poppy.db") as store:
        row = _record(store, "op_1", "r1", "Exchange itm_4Qa on ord_7Hk2")
        assert store.resource_read(row) is None
        at = datetime(2026, 12, 4, 14, 2, 11, tzinfo=UTC)
        revision = store.get_operation(row).current.id
        store.save_resource_read(
            ResourceRead(
                row,
                revision,
                "GET http://x/api/orders/ord_7Hk2",
                at,
                True,
                {"order_id": "ord_7Hk2", "note": "caf\u00e9 \x1b[2J"},
            )
        )
    with Store.open(tmp_path / "poppy.db") as store:  # another process reads it
        read = store.resource_read(row)
        assert read is not None and read.ok and read.read_at == at and read.revision_id == revision
        assert read.source == "GET http://x/api/orders/ord_7Hk2"
        assert read.body == {
            "order_id": "ord_7Hk2",
            "note": "caf\u00e9 \x1b[2J",
        }  # kept as received; shown sanitised
        store.save_resource_read(
            ResourceRead(
                row, revision, "GET http://x/api/orders/ord_7Hk2", at, False, None, "HTTP 500"
            )
        )
        read = store.resource_read(row)
        assert read is not None and not read.ok and read.body is None and read.problem == "HTTP 500"
        assert read.to_json()["problem"] == "HTTP 500"


def test_a_damaged_row_is_no_read(tmp_path):
    with Store.open(tmp_path / "poppy.db") as store:
        row = _record(store, "op_1", "r1", "Cancel sub_6Tc1")
        store.save_resource_read(
            ResourceRead(row, None, "get_subscription", datetime.now(UTC), True, {})
        )
        db = sqlite3.connect(store.path)
        db.execute("UPDATE resource_reads SET body_json = 'not json'")
        db.commit()
        db.close()
        assert store.resource_read(row) is None
