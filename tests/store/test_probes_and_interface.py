"""The store's side of finding out about unknown outcomes (probes.py), postponing an unsignable
send, and an operation's interface following its current revision (Ops §6 and §7;
docs/state-machine.md; docs/reliability.md, "The signing key")."""

from __future__ import annotations

import pytest

from poppy_tui.agent.store import StateError, Status, Store
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest, ConversationRequest

FUTURE = "2099-01-01T00:00:00Z"
PAST = "2000-01-01T00:00:00.000000Z"


def company_doc():
    return parse_poppy_json(
        {
            "protocol_version": "0.4",
            "organization": {"name": "Strict Travel", "domain": "127.0.0.1:9"},
            "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
            "extensions": {"operations": [{"version": "2"}]},
        },
        "127.0.0.1:9",
        allow_loopback_http=True,
    )


def op(revision):
    return parse_operation(
        {
            "operation_id": "cxl_bk_1",
            "revision": revision,
            "summary": "Cancel bk_1.",
            "expires_at": FUTURE,
        }
    )


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "poppy.db") as s:
        yield s


def unknown_operation(store: Store) -> int:
    company = store.upsert_company("http://127.0.0.1:9", company_doc())
    request_id = store.add_request(
        company.id, ApiRequest("POST", "http://127.0.0.1:9/bookings/bk_1/cancel", {}), "cli"
    )
    row = store.record_operation(company.id, request_id, company.session_id, op("r1")).operation_row
    record = store.get_operation(row)
    store.approve(row, record.current.id, 0)
    assert store.claim_due("sender", 30) is not None
    attempt = store.start_attempt(row, "sender")
    store.finish_and_settle(
        (attempt.id, "unknown", None, None, "timeout"),
        row,
        "sender",
        Status.OUTCOME_UNKNOWN,
        None,
        "no definite answer",
        probe_after=0.0,
    )
    return row


def test_interface_follows_the_current_revisions_request(store):
    company = store.upsert_company("http://127.0.0.1:9", company_doc())
    api = store.add_request(
        company.id, ApiRequest("POST", "http://127.0.0.1:9/bookings/bk_1/cancel", {}), "cli"
    )
    row = store.record_operation(company.id, api, company.session_id, op("r1")).operation_row
    said = store.add_request(
        company.id, ConversationRequest("http://127.0.0.1:9/c", "cnv_1", "msg_1", "cancel"), "cli"
    )
    store.record_operation(company.id, said, company.session_id, op("r2"))
    record = store.get_operation(row)
    assert record.interface == "conversation"
    assert [r.interface for r in store.list_operations()] == ["conversation"]
    approved = store.approve(row, record.current.id, 0)
    assert approved.idempotency_key.startswith("msg_")  # the conversation's kind of key
    assert [(rev, q) for _, rev, q, _ in store.revision_requests(row)] == [
        ("r1", api),
        ("r2", said),
    ]


def test_a_probe_attempt_needs_the_unknown_status_and_the_lease(store):
    row = unknown_operation(store)
    assert store.get_operation(row).next_attempt_at is not None
    with pytest.raises(StateError):
        store.start_probe_attempt(row, "prober")  # no lease yet
    claimed = store.claim_probe("prober", 30)
    assert claimed is not None and claimed.id == row
    assert store.claim_probe("other", 30) is None  # one prober at a time
    attempt = store.start_probe_attempt(row, "prober")
    assert attempt.number == 2 and attempt.idempotency_key == claimed.idempotency_key
    store.finish_attempt(attempt.id, "unknown", None, None, "timeout")
    assert store.finish_probe(
        row,
        "prober",
        detail="still unknown; found: x",
        observations=[{"source": "GET y"}],
        next_probe_at=None,
    )
    after = store.get_operation(row)
    assert after.status == Status.OUTCOME_UNKNOWN and after.next_attempt_at is None
    assert after.outcome_detail == "still unknown; found: x"
    assert [o["source"] for o in store.observations(row)] == ["GET y"]
    assert store.unknown_reason(row) == "no definite answer"


def test_the_persons_resolution_wins_over_a_probe_in_flight(store):
    row = unknown_operation(store)
    assert store.claim_probe("prober", 30) is not None
    store.resolve_unknown(row, performed=False)
    assert not store.finish_probe(
        row,
        "prober",
        detail="x",
        observations=[{"source": "GET y"}],
        next_probe_at=None,
        settle=Status.PERFORMED,
    )
    after = store.get_operation(row)
    assert after.status == Status.NOT_PERFORMED and store.observations(row) == []
    with pytest.raises(StateError):
        store.start_probe_attempt(row, "prober")


def test_postpone_keeps_the_approval_and_records_no_attempt(store):
    company = store.upsert_company("http://127.0.0.1:9", company_doc())
    request_id = store.add_request(
        company.id, ApiRequest("POST", "http://127.0.0.1:9/bookings/bk_1/cancel", {}), "cli"
    )
    row = store.record_operation(company.id, request_id, company.session_id, op("r1")).operation_row
    store.approve(row, store.get_operation(row).current.id, 0)
    assert store.claim_due("sender", 30) is not None
    store.postpone(row, "sender", 60, "not sent: no keyring")
    after = store.get_operation(row)
    assert after.status == Status.APPROVED and after.outcome_detail == "not sent: no keyring"
    assert (
        store.attempts(row) == [] and store.claim_due("sender", 30) is None
    )  # not due for a minute
