"""A child that writes through the real Store API and reports each commit after it returns.

usage: store_writer.py DB MODE [LIMIT_BYTES]

MODE "loop": forever: record an operation, approve it, claim it, start an attempt, finish it,
             settle it; print "ack <kind> <operation_id>" after each call returns.
             The parent SIGKILLs it at a random moment.
MODE "full": set RLIMIT_FSIZE to LIMIT_BYTES (SIGXFSZ ignored), then record operations
             until a write fails; print "ack record <id>" per success, then
             "error <json>" for the failure and for a few more writes tried after it.
MODE "lock": take the write lock (BEGIN IMMEDIATE) with plain sqlite3, print "locked", wait.
MODE "exclusive": PRAGMA locking_mode=EXCLUSIVE and a write, so nobody else can even read.
"""

from __future__ import annotations

import json
import resource
import signal
import sqlite3
import sys
import threading


def main() -> None:
    db, mode = sys.argv[1], sys.argv[2]
    if mode in ("lock", "exclusive"):
        con = sqlite3.connect(db, isolation_level=None)
        if mode == "exclusive":
            con.execute("PRAGMA locking_mode=EXCLUSIVE")
        con.execute("BEGIN IMMEDIATE")
        con.execute("UPDATE companies SET updated_at = updated_at")
        if mode == "exclusive":
            con.execute("COMMIT")  # the exclusive lock stays with this connection
        print("locked", flush=True)
        threading.Event().wait()  # holding the lock until the parent kills this process
        return

    from poppy_tui.agent.store import Status, Store
    from poppy_tui.protocol.requests import ApiRequest
    from tests.reliability.support import EXCHANGE_BODY, EXCHANGE_PATH, demo_document, operation

    if mode == "full":
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        store = Store.open(db)
        company = store.find_company("http://127.0.0.1:9") or store.upsert_company(
            "http://127.0.0.1:9", demo_document()
        )
        request_id = store.add_request(
            company.id,
            ApiRequest("POST", "http://127.0.0.1:9" + EXCHANGE_PATH, EXCHANGE_BODY),
            "cli",
        )
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), resource.RLIM_INFINITY))
        failures = 0
        last_row = None
        for i in range(1_000_000):
            op_id = f"full{i:06d}"
            try:
                result = store.record_operation(
                    company.id, request_id, company.session_id, operation(op_id, summary="x" * 2000)
                )
                last_row = result
                print(f"ack record {op_id}", flush=True)
            except Exception as exc:  # noqa: BLE001 - reported to the parent, which judges it
                failures += 1
                print(
                    "error "
                    + json.dumps(
                        {
                            "call": f"record {op_id}",
                            "type": type(exc).__name__,
                            "module": type(exc).__module__,
                            "message": str(exc),
                        }
                    ),
                    flush=True,
                )
                if failures == 1 and last_row is not None:
                    for name, call in (
                        # Each called in its turn below, in this iteration (B023 doesn't apply).
                        (
                            "approve",
                            lambda: store.approve(
                                last_row.operation_row,  # noqa: B023
                                last_row.revision_id,  # noqa: B023
                                0.0,
                            ),
                        ),
                        (
                            "decline",
                            lambda: store.decline(
                                last_row.operation_row,  # noqa: B023
                                last_row.revision_id,  # noqa: B023
                            ),
                        ),
                    ):
                        try:
                            call()
                            print(f"ack {name} {last_row.operation_row}", flush=True)
                        except Exception as exc2:  # noqa: BLE001
                            print(
                                "error "
                                + json.dumps(
                                    {
                                        "call": name,
                                        "type": type(exc2).__name__,
                                        "module": type(exc2).__module__,
                                        "message": str(exc2),
                                    }
                                ),
                                flush=True,
                            )
                if failures >= 3:
                    break
        print("done", flush=True)
        return

    assert mode == "loop"
    store = Store.open(db)
    company = store.upsert_company("http://127.0.0.1:9", demo_document())
    request_id = store.add_request(
        company.id, ApiRequest("POST", "http://127.0.0.1:9" + EXCHANGE_PATH, EXCHANGE_BODY), "cli"
    )
    owner = "writer"
    print("ready", flush=True)
    for i in range(1_000_000):
        op_id = f"w{i:06d}"
        result = store.record_operation(
            company.id, request_id, company.session_id, operation(op_id)
        )
        print(f"ack record {op_id}", flush=True)
        if i % 5 == 4:
            store.decline(result.operation_row, result.revision_id)
            print(f"ack decline {op_id}", flush=True)
            continue
        store.approve(result.operation_row, result.revision_id, 0.0)
        print(f"ack approve {op_id}", flush=True)
        claimed = store.claim_due(owner, 30.0, operation_row=result.operation_row)
        assert claimed is not None
        attempt = store.start_attempt(result.operation_row, owner)
        print(f"ack attempt {op_id}", flush=True)
        store.finish_attempt(attempt.id, "performed", 201, {"status": "completed"})
        store.settle(
            result.operation_row, owner, Status.PERFORMED, {"status": "completed"}, "performed"
        )
        print(f"ack settle {op_id}", flush=True)


if __name__ == "__main__":
    main()
