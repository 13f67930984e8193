"""A store with many records that the real Store wrote, and that reads like one.

Writing 100,000 operations through the Store API costs minutes of fsyncs, so:
1. `SEED` operations are walked through the real state machine with the real Store API
   (record, new revisions, approve / decline / withdraw, claim, attempts, settle, expire),
   on tmpfs where fsync is cheap;
2. the file is copied to the target with SQLite's backup API;
3. its rows are replicated, in one transaction, until there are `count` operations: every id
   and foreign key remapped, operation ids made unique, timestamps shifted back in time in
   the Store's own stamp format; copies of undecided operations are marked expired and copies
   of unknown outcomes performed (resolved), so only the seed's 60 undecided and 20 unknown
   ones are open. Same schema, same shapes, the same mix of decided states.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

SEED = 400
STAMP = "%Y-%m-%dT%H:%M:%S.%fZ"

SUMMARIES = (
    "Exchange the **Stormline Jacket (M)** on order ord_{n} for the Stormline Insulated Jacket (M), for $70.00 more, "
    "charged to the card used for the order.",
    "Cancel your Trailhead Coffee Club subscription (sub_{n}, $18.00 a month). This month is paid and isn't refunded.",
    "Move your jacket fitting (bkg_{n}) at Manzanita Outfitters Portland to Fri, Dec 11 at 10:00 AM, for a $10.00 "
    "change fee charged to the Visa ending 4242.",
    "Change flight LA{n} to *Tuesday 14 Jan 2030*, seat 14C, for a fare difference of $42.00.",
)
COMPANIES = (("Manzanita Outfitters", 8401), ("Larkspur Air", 8402), ("Juniper Telecom", 8403))


def _document(name: str, port: int):
    from poppy_tui.protocol.discovery import parse_poppy_json

    host = f"127.0.0.1:{port}"
    return parse_poppy_json(
        {
            "protocol_version": "0.4",
            "organization": {"name": name, "domain": host},
            "apis": [{"type": "openapi", "url": f"http://{host}/openapi.json"}],
            "extensions": {"operations": [{"version": "2"}]},
        },
        host,
        allow_loopback_http=True,
    )


def _operation(op_id: str, revision: str, n: int, expires: str):
    from poppy_tui.protocol.operation import parse_operation

    return parse_operation(
        {
            "operation_id": op_id,
            "revision": revision,
            "summary": SUMMARIES[n % len(SUMMARIES)].format(n=n),
            "terms": {
                "order_id": f"ord_{n}",
                "item_id": "itm_4Qa",
                "price_difference": {"amount": "70.00", "currency": "USD"},
            },
            "expires_at": expires,
        }
    )


def seed(path: Path, count: int = SEED, pending_only: bool = False) -> None:
    """`count` operations through the real Store API, in every state the state machine reaches
    (or, with `pending_only`, all waiting for the person: an inbox of `count`)."""
    from poppy_tui.agent.store import Status, Store
    from poppy_tui.protocol.requests import ApiRequest

    with Store.open(path) as store:
        companies = [
            store.upsert_company(f"http://127.0.0.1:{port}", _document(name, port))
            for name, port in COMPANIES
        ]
        for n in range(count):
            company = companies[n % len(companies)]
            request_id = store.add_request(
                company.id,
                ApiRequest(
                    "POST",
                    f"{company.base_url}/api/orders/ord_{n}/exchanges",
                    {"item_id": "itm_4Qa"},
                ),
                "tui",
            )
            store.set_first_response(
                request_id, 403, {"status": 403, "body": {"error": "approval_required"}}
            )
            kind = 0 if pending_only else n % 20
            expires = "2020-06-01T00:00:00Z" if kind == 19 else "2099-01-01T00:00:00Z"
            result = store.record_operation(
                company.id, request_id, company.session_id, _operation(f"op_{n}", "r1", n, expires)
            )
            row, revision = result.operation_row, result.revision_id
            if kind in (3, 11):  # terms changed before deciding
                revision = store.record_operation(
                    company.id,
                    request_id,
                    company.session_id,
                    _operation(f"op_{n}", "r2", n + 1, expires),
                ).revision_id
            if kind in (0, 1):
                continue  # pending: waiting for the person
            if kind in (2, 9):
                store.decline(row, revision, note=None)
                continue
            if kind == 4:
                store.approve(row, revision, 0.0)
                store.withdraw(row)
                continue
            if kind == 19:
                continue  # expired below
            store.approve(row, revision, 0.0)
            owner = "bench-seed"
            store.claim_due(owner, 30.0, operation_row=row)
            attempt = store.start_attempt(row, owner)
            if kind == 5:
                store.finish_attempt(attempt.id, "unknown", None, None, "ReadTimeout")
                store.settle(
                    row,
                    owner,
                    Status.OUTCOME_UNKNOWN,
                    None,
                    "no definite answer; check with the Company",
                )
            elif kind == 6:
                store.finish_attempt(
                    attempt.id, "not_performed", 409, {"error": "already_exchanged"}
                )
                store.settle(
                    row,
                    owner,
                    Status.NOT_PERFORMED,
                    None,
                    "the Company refused it (already_exchanged, HTTP 409)",
                )
            else:
                if kind == 7:
                    store.finish_attempt(
                        attempt.id, "retry_later", 503, {"error": "temporarily_unavailable"}
                    )
                    attempt = store.start_attempt(row, owner)
                body = {"status": 201, "body": {"exchange_id": f"exg_{n}", "status": "completed"}}
                store.finish_attempt(attempt.id, "performed", 201, body)
                store.settle(row, owner, Status.PERFORMED, body, "performed")
        store.expire_due()


_ID_COLUMNS = {  # table -> {column: table whose ids it holds}
    "requests": {"id": "requests"},
    "operations": {
        "id": "operations",
        "current_revision_id": "revisions",
        "approved_revision_id": "revisions",
    },
    "revisions": {"id": "revisions", "operation_row": "operations", "request_id": "requests"},
    "decisions": {"id": "decisions", "operation_row": "operations", "revision_id": "revisions"},
    "attempts": {"id": "attempts", "operation_row": "operations", "revision_id": "revisions"},
    "events": {"id": "events", "operation_row": "operations"},
}
_TIME_COLUMNS = {
    "requests": ("created_at",),
    "operations": ("created_at", "updated_at", "send_after"),
    "revisions": ("received_at", "seen_at"),
    "decisions": ("decided_at",),
    "attempts": ("started_at", "finished_at"),
    "events": ("at",),
}


def replicate(path: Path, count: int, keep_open: bool = False) -> None:
    """Copy the seeded rows until the store holds `count` operations (`keep_open`: copies of
    pending operations stay pending, for an inbox of that size)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        tables = {}
        for table in _ID_COLUMNS:
            cursor = db.execute(f"SELECT * FROM {table} ORDER BY id")
            columns = [d[0] for d in cursor.description]
            tables[table] = (columns, cursor.fetchall())
        size = {t: db.execute(f"SELECT max(id) FROM {t}").fetchone()[0] or 0 for t in _ID_COLUMNS}
        seeded = len(tables["operations"][1])
        copies = -(-max(0, count - seeded) // seeded)
        parsed: dict[str, datetime] = {}
        db.execute("BEGIN")
        made = seeded
        for k in range(1, copies + 1):
            shift = timedelta(minutes=7 * k)
            for table, (columns, rows) in tables.items():
                ids = _ID_COLUMNS[table]
                times = _TIME_COLUMNS[table]
                index = {c: i for i, c in enumerate(columns)}
                out = []
                for row in rows:
                    if table == "operations":
                        if made >= count:
                            break
                        made += 1
                    values = list(row)
                    for column, target in ids.items():
                        value = values[index[column]]
                        if value is not None:
                            values[index[column]] = value + k * size[target]
                    for column in times:
                        value = values[index[column]]
                        if value is not None:
                            when = parsed.get(value)
                            if when is None:
                                when = parsed[value] = datetime.strptime(value, STAMP)
                            values[index[column]] = (when - shift).strftime(STAMP)
                    if table == "operations":
                        values[index["operation_id"]] = f"{values[index['operation_id']]}-{k:05d}"
                        # Only the seed's few stay open: older copies of undecided ones have since
                        # expired (as expire_due leaves them) and older unknown outcomes were resolved,
                        # so the inbox holds dozens and history 100,000.
                        status = values[index["status"]]
                        if keep_open:
                            pass
                        elif status in ("pending", "withdrawn"):
                            values[index["status"]] = "expired"
                        elif status == "outcome_unknown":
                            values[index["status"]] = "performed"
                    out.append(values)
                if table == "operations":
                    kept = {v[index["id"]] for v in out}
                marks = ",".join("?" * len(columns))
                if table != "operations" and table != "requests":
                    out = [v for v in out if v[index["operation_row"]] in kept]
                db.executemany(f"INSERT INTO {table} ({','.join(columns)}) VALUES ({marks})", out)
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


def build(path: Path, count: int, pending: bool = False) -> Path:
    """A store at `path` holding `count` operations; see the module docstring. `pending`: every
    one of them waiting for the person's decision (the inbox at scale)."""
    path = Path(path)
    scratch_root = (
        "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    )
    scratch = Path(tempfile.mkdtemp(prefix="poppy-seed-", dir=scratch_root))
    try:
        seed_path = scratch / "seed.db"
        seed(seed_path, min(SEED, count), pending_only=pending)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        source, target = sqlite3.connect(seed_path), sqlite3.connect(path)
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if count > SEED:
        replicate(path, count, keep_open=pending)
    return path
