"""Discrepancy checks stored with each revision (so the inbox's first frame doesn't compute them:
the first-frame target, docs/benchmarks.md): computed once per revision off the event loop, kept
under the checker's version, recomputed only when that changes."""

from __future__ import annotations

import sqlite3
import threading

import pytest

import poppy_tui.agent.revision_checks as revision_checks
from poppy_tui.agent.revision_checks import check_missing
from poppy_tui.agent.store import Store
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest
from poppy_tui.safety.checker import CHECKER_VERSION
from datetime import UTC

DOCUMENT = {
    "protocol_version": "0.4",
    "organization": {"name": "Quince Hardware", "domain": "127.0.0.1:7"},
    "apis": [{"type": "openapi", "url": "http://127.0.0.1:7/openapi.json"}],
    "extensions": {"operations": [{"version": "2"}]},
}


def _record(
    store: Store, op_id: str, revision: str, summary: str, terms: dict | None = None
) -> int:
    company = store.upsert_company(
        "http://127.0.0.1:7", parse_poppy_json(DOCUMENT, "127.0.0.1:7", True)
    )
    request_id = store.add_request(
        company.id, ApiRequest("POST", "http://127.0.0.1:7/refunds", {"order": "A-1"}), "cli"
    )
    body = {
        "operation_id": op_id,
        "revision": revision,
        "summary": summary,
        "expires_at": "2099-01-01T00:00:00Z",
    }
    if terms is not None:
        body["terms"] = terms
    return store.record_operation(
        company.id, request_id, company.session_id, parse_operation(body), None, "api"
    ).operation_row


def _check(path, rows, batches):
    check_missing(path, rows, revision_checks_now, 0.0, batches.append)


def revision_checks_now():
    from datetime import datetime

    return datetime.now(UTC)


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "poppy.db") as opened:
        yield opened


def test_checks_are_computed_once_per_revision_and_read_back(store):
    hostile = _record(
        store,
        "op_1",
        "r1",
        "Refund \u202eevil\u202c **$10.00**",
        {"amount": {"amount": "10.00", "currency": "USD"}},
    )
    plain = _record(store, "op_2", "r1", "Refund order A-1")
    batches: list = []
    _check(store.path, [hostile, plain], batches)
    assert sum(len(b) for b in batches) == 2
    stored = store.current_checks([hostile, plain], CHECKER_VERSION)
    assert set(stored) == {hostile, plain}
    # The bidi override is a finding, stored and read back with its severity.
    assert any(f.severity in ("danger", "warning") for f in stored[hostile].findings)
    assert stored[hostile].findings == batches[0][hostile].findings
    # Nothing left to compute: the second pass checks nothing.
    again: list = []
    _check(store.path, [hostile, plain], again)
    assert again == [{}] or again == []


def test_a_new_revision_is_checked_again(store):
    row = _record(store, "op_1", "r1", "Refund order A-1")
    _check(store.path, [row], [])
    first = store.current_checks([row], CHECKER_VERSION)[row]
    _record(store, "op_1", "r2", "Refund order A-1, now \u202ereversed\u202c")
    assert store.current_checks([row], CHECKER_VERSION) == {}
    batches: list = []
    _check(store.path, [row], batches)
    second = store.current_checks([row], CHECKER_VERSION)[row]
    assert second.revision_id != first.revision_id and batches[0][row] == second


def test_a_new_checker_version_recomputes(store, monkeypatch):
    row = _record(store, "op_1", "r1", "Refund order A-1")
    _check(store.path, [row], [])
    monkeypatch.setattr(revision_checks, "CHECKER_VERSION", CHECKER_VERSION + 1)
    assert store.current_checks([row], CHECKER_VERSION + 1) == {}
    batches: list = []
    _check(store.path, [row], batches)
    assert list(batches[0]) == [row]
    assert set(store.current_checks([row], CHECKER_VERSION + 1)) == {row}


def test_checks_run_in_another_thread_with_their_own_connection(store):
    row = _record(store, "op_1", "r1", "Refund order A-1")
    failures: list[BaseException] = []

    def work():
        try:
            _check(store.path, [row], [])
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert not failures and set(store.current_checks([row], CHECKER_VERSION)) == {row}


def test_a_damaged_stored_check_reads_as_a_danger(store):
    row = _record(store, "op_1", "r1", "Refund order A-1")
    _check(store.path, [row], [])
    db = sqlite3.connect(store.path)
    db.execute("UPDATE revision_checks SET findings_json = 'not json'")
    db.commit()
    db.close()
    (finding,) = store.current_checks([row], CHECKER_VERSION)[row].findings
    assert finding.severity == "danger"


def test_expire_due_keeps_the_soonest_expiry_and_still_expires_on_time(tmp_path):
    """expire_due remembers the soonest expiry until any connection commits (the idle-CPU target,
    docs/benchmarks.md): an operation still expires when its time comes, and one another process
    records is seen."""
    from datetime import datetime, timedelta

    from poppy_tui.agent.store import Status

    path = tmp_path / "poppy.db"
    with Store.open(path) as store:
        first = _record(store, "op_1", "r1", "Refund order A-1")
        now = datetime.now(UTC)
        assert store.expire_due(now) == []
        assert store.expire_due(now) == []  # from what it remembers
        with Store.open(path) as other:  # another process: expires sooner than anything known
            company = other.upsert_company(
                "http://127.0.0.1:7", parse_poppy_json(DOCUMENT, "127.0.0.1:7", True)
            )
            request_id = other.add_request(
                company.id, ApiRequest("POST", "http://127.0.0.1:7/x", {}), "cli"
            )
            soon = parse_operation(
                {
                    "operation_id": "op_2",
                    "revision": "r1",
                    "summary": "Soon",
                    "expires_at": (now + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                }
            )
            second = other.record_operation(
                company.id, request_id, company.session_id, soon, None, "api"
            ).operation_row
        assert store.expire_due(now) == []
        assert store.expire_due(now + timedelta(minutes=2)) == [second]
        assert store.get_operation(second).status == Status.EXPIRED
        assert store.expire_due(datetime(2099, 1, 2, tzinfo=UTC)) == [first]
