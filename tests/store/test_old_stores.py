"""Real upgrades: a store of every schema version the store has had, written by the code of that
version (tests/store/old_stores/, made by its make.py), opened by today's code. Every record the
old code read back is still there, field for field; what later versions added reads as they say
rows from before read; and today's code decides and sends on the upgraded store."""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import datetime, timedelta, UTC
from pathlib import Path
from typing import Any

import pytest

from poppy_tui.agent.store import StateError, Status, Store
from poppy_tui.agent.store.schema import SCHEMA_VERSION
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest

OLD = Path(__file__).resolve().parent / "old_stores"
sys.path.insert(0, str(OLD))
from snapshot import operation_rows, snapshot  # noqa: E402 - the same reader as make.py's

# Version 3 never existed on its own: the merge that brought migration 3 brought 4 with it
# (old_stores/README.md). Every other version has its store, the newest included.
NEVER_RELEASED = {3}
VERSIONS = sorted(int(p.stem[1:]) for p in OLD.glob("v*.sql"))


def test_every_schema_version_up_to_todays_has_a_store_made_by_its_own_code():
    wanted = [v for v in range(1, SCHEMA_VERSION + 1) if v not in NEVER_RELEASED]
    assert wanted == VERSIONS, (
        f"old stores for {VERSIONS}, schema at {SCHEMA_VERSION}: make the missing ones with "
        "`python tests/store/old_stores/make.py N` (docs/development.md, 'Store migrations')"
    )
    for version in VERSIONS:
        made = json.loads((OLD / f"v{version}.json").read_text())
        assert made["version"] == version and len(made["commit"]) == 40


class Upgraded:
    def __init__(self, version: int, path: Path) -> None:
        self.version = version
        self.made: dict[str, Any] = json.loads((OLD / f"v{version}.json").read_text())
        db = sqlite3.connect(path)
        try:
            db.executescript((OLD / f"v{version}.sql").read_text())
            assert db.execute("PRAGMA user_version").fetchone()[0] == version
        finally:
            db.close()
        self.store = Store.open(path)  # today's code: the upgrade runs here

    def row(self, operation_id: str) -> int:
        (row,) = [
            int(r) for r, o in self.made["operations"].items() if o["operation_id"] == operation_id
        ]
        return row

    def conversations(self) -> list[int]:
        return [int(c) for c in self.made["messages"]]


@pytest.fixture(params=VERSIONS, ids=[f"v{v}" for v in VERSIONS])
def upgraded(request, tmp_path):
    old = Upgraded(request.param, tmp_path / "poppy.db")
    yield old
    old.store.close()


def contained(old: Any, new: Any, where: str = "") -> list[str]:
    """Where `new` lost or changed something of `old`: each key of a dict (new may have more),
    each item of a list (the same number), each value."""
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return [f"{where}: {old!r} became {new!r}"]
        lost = []
        for key, value in old.items():
            if key not in new:
                lost.append(f"{where}.{key}: gone (was {value!r})")
            else:
                lost += contained(value, new[key], f"{where}.{key}")
        return lost
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            return [f"{where}: {old!r} became {new!r}"]
        return [
            line
            for i, (o, n) in enumerate(zip(old, new, strict=True))
            for line in contained(o, n, f"{where}[{i}]")
        ]
    return [] if old == new else [f"{where}: {old!r} became {new!r}"]


def test_the_store_opens_at_todays_version_and_its_integrity_check_passes(upgraded):
    assert upgraded.store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert upgraded.store.check_integrity() == ["ok"]


def test_every_record_the_old_code_read_is_still_there_field_for_field(upgraded):
    now = snapshot(upgraded.store, upgraded.conversations())
    assert sorted(now["operations"]) == sorted(upgraded.made["operations"])
    lost = []
    for part in ("companies", "operations", "messages"):
        lost += contained(upgraded.made[part], now[part], part)
    assert not lost, f"upgrading v{upgraded.version} lost or changed:\n" + "\n".join(lost)
    # The decisions, attempts and history are there, not merely equal to an empty list.
    decided = [o for o in now["operations"].values() if o["decisions"]]
    assert len(decided) >= 7 and all(o["events"] for o in now["operations"].values())
    assert {a["outcome"] for o in now["operations"].values() for a in o["attempts"]} >= {
        "performed",
        "not_performed",
        "unknown",
    }


def test_what_later_versions_added_reads_as_their_migrations_say_rows_from_before_read(upgraded):
    store, version = upgraded.store, upgraded.version
    for row in operation_rows(store):
        record = store.get_operation(row)
        if version < 4:  # migration 4: operations returned signed out, none waiting
            assert record.account_owned is False and record.waiting_sign_in is None
        if version < 7:  # migration 7: NULL, the operation's own Session is the revision's
            assert all(r.session_id is None for r in store.revisions(row))
        if version < 9:  # migration 9: which account is unknown
            assert record.account is None
    assert sorted(c.name for c in store.list_companies()) == upgraded.made["listed_companies"]
    if version >= 4:
        from poppy_tui.agent.store.sign_ins import get_sign_in

        for company_id, (kind, scopes, account) in upgraded.made["sign_ins"].items():
            signed = get_sign_in(store, int(company_id))
            assert (signed.kind, list(signed.scopes), signed.account) == (kind, scopes, account)
        owned = store.get_operation(upgraded.row("chg_owned"))
        assert owned.account_owned and owned.status == Status.SENDING and owned.waiting_sign_in
    for row, (amount, codes) in upgraded.made["checks"].items():
        (stored,) = store.current_checks([int(row)], 1).values()
        assert (stored.amount, [f.code for f in stored.findings]) == (amount, codes)
    for row, (source, ok, body) in upgraded.made["resource_reads"].items():
        read = store.resource_read(int(row))
        assert (read.source, read.ok, read.body) == (source, ok, body)


def test_todays_code_decides_and_sends_on_the_upgraded_store(upgraded):
    store = upgraded.store
    pending = upgraded.row("exc_pending")
    record = store.get_operation(pending)
    assert record.status == Status.PENDING and record.current.revision == "r2"
    before = upgraded.made["operations"][str(pending)]
    store.approve(pending, record.current.id, grace_seconds=0)
    claimed = store.claim_due(
        "today", 30, now=datetime.now(UTC) + timedelta(seconds=2), operation_row=pending
    )
    assert claimed is not None and claimed.id == pending
    attempt = store.start_attempt(pending, "today")
    store.finish_attempt(attempt.id, "performed", 200, {"ok": True}, "performed (HTTP 200)")
    store.settle(pending, "today", Status.PERFORMED, {"ok": True}, "performed (HTTP 200)")
    done = store.get_operation(pending)
    assert done.status == Status.PERFORMED and done.outcome == {"ok": True}
    decisions = store.decisions(pending)
    assert [d.decision for d in decisions] == [d["decision"] for d in before["decisions"]] + [
        "approved"
    ]
    assert decisions[-1].revision_id == record.current.id  # the approval names the newer revision
    events = [e.id for e in store.events(pending)]
    assert events[: len(before["events"])] == [e["id"] for e in before["events"]]
    # The one approved years ahead is withdrawn, the unknown one is answered by the person.
    store.withdraw(upgraded.row("ret_grace"))
    unknown = upgraded.row("bag_unknown")
    assert store.resolve_unknown(unknown, performed=False).status == Status.NOT_PERFORMED
    assert store.check_integrity() == ["ok"]


def _schema(path: Path) -> dict[str, Any]:
    """Every table's columns (name, type, NOT NULL, default, key), indexes (with their columns,
    uniqueness and WHERE) and foreign keys: what a migration adds, as SQLite reports it."""
    found: dict[str, Any] = {}
    db = sqlite3.connect(path)
    tables = db.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ).fetchall()
    for (table,) in tables:
        columns = [tuple(r[1:]) for r in db.execute(f"PRAGMA table_info({table})")]
        indexes = {}
        for _, name, unique, origin, partial in db.execute(f"PRAGMA index_list({table})"):
            sql = db.execute("SELECT sql FROM sqlite_master WHERE name=?", (name,)).fetchone()
            where = (
                sql[0].split(" WHERE ", 1)[1] if sql and sql[0] and " WHERE " in sql[0] else None
            )
            cols = [r[2] for r in db.execute(f"PRAGMA index_info({name})")]
            indexes[name if origin == "c" else f"{origin}:{cols}"] = (unique, partial, cols, where)
        keys = sorted(tuple(r[2:5]) for r in db.execute(f"PRAGMA foreign_key_list({table})"))
        found[table] = {"columns": columns, "indexes": indexes, "foreign_keys": keys}
    db.close()
    return found


def test_the_upgraded_schema_is_todays_columns_defaults_indexes_and_keys_alike(upgraded, tmp_path):
    Store.open(tmp_path / "fresh.db").close()
    assert _schema(upgraded.store.path) == _schema(tmp_path / "fresh.db")


def test_an_account_owned_operation_from_before_migration_9_is_approvable_whichever_account(
    upgraded,
):
    from poppy_tui.agent.store.sign_ins import save_sign_in

    if upgraded.version < 4:
        pytest.skip("no account-owned operations before migration 4")
    store = upgraded.store
    row = upgraded.row("chg_owned_pending")
    op = store.get_operation(row)
    assert op.account_owned and op.status == Status.PENDING
    company = op.company
    save_sign_in(store, company.id, company.base_url, "mediated", ("orders",), "bob@larkspur.test")
    if upgraded.version < 9:  # which account is unknown: as before, any signed-in Session
        assert op.account is None
        assert store.approve(row, op.current.id, 0).status == Status.APPROVED
    else:  # recorded as alice's: bob can't approve it (Ops 3, "while signed in to the same account")
        assert op.account == "alice@larkspur.test"
        with pytest.raises(StateError):
            store.approve(row, op.current.id, 0)


def test_revisions_from_before_migration_7_keep_their_operations_session_and_new_ones_their_own(
    upgraded,
):
    store = upgraded.store
    row = upgraded.row("exc_pending")
    op = store.get_operation(row)
    old_session = op.session_id
    if upgraded.version < 7:
        assert [r.session_id for r in store.revisions(row)] == [None, None]
    request_id = store.add_request(
        op.company.id, ApiRequest("POST", op.request.url, {"n": 2}), "cli"
    )
    later = store.record_operation(
        op.company.id,
        request_id,
        "sid_after_upgrade",
        parse_operation(
            {
                "operation_id": "exc_pending",
                "revision": "r3",
                "summary": "Now $99.00 more.",
                "expires_at": "2099-01-01T00:00:00Z",
            }
        ),
    )
    op = store.get_operation(row)
    assert op.current.id == later.revision_id and op.current.session_id == "sid_after_upgrade"
    assert op.session_id == "sid_after_upgrade" != old_session
    assert [r.revision for r in store.revisions(row)] == ["r1", "r2", "r3"]


def test_what_a_version_could_not_store_is_absent_and_can_be_stored_now(upgraded):
    from poppy_tui.agent.store.resource_reads import ResourceRead
    from poppy_tui.agent.store.sign_ins import (
        delete_sign_in,
        get_sign_in,
        list_sign_ins,
        save_sign_in,
    )

    store, version = upgraded.store, upgraded.version
    pending = upgraded.row("exc_pending")
    revision = store.get_operation(pending).current.id
    if version < 4:  # migration 3: no one signed in anywhere yet
        assert list_sign_ins(store) == {}
    if version < 5:  # migration 5: no checks kept
        assert store.current_checks([pending], 1) == {}
    if version < 8:  # migration 8: no read, as if never read
        assert store.resource_read(pending) is None
    manzanita = store.get_operation(pending).company
    save_sign_in(store, manzanita.id, manzanita.base_url, "device", ("poppy:read",), None)
    assert get_sign_in(store, manzanita.id).scopes == ("poppy:read",)
    assert delete_sign_in(store, manzanita.id) and get_sign_in(store, manzanita.id) is None
    finding = type("Finding", (), {"severity": "info", "code": "new", "message": "m"})()
    store.save_checks([(revision, "USD 1.00", [finding])], 99)
    assert store.current_checks([pending], 99)[pending].amount == "USD 1.00"
    at = datetime.now(UTC)
    store.save_resource_read(ResourceRead(pending, revision, "GET http://x/y", at, True, {"a": 1}))
    assert store.resource_read(pending).body == {"a": 1}
