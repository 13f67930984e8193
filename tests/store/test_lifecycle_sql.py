"""Two rules of the lifecycle run as one SQL statement each, for speed: the clock's "expire"
(`ExpiryStore.expire_due`, on `pending`'s light path) and what a dispatcher may claim as due
(`DispatchStore.claim_due_many`). Here they are held to the lifecycle's rules (agent/lifecycle)
on a real store: an operation in every state, its terms expired or not, asked both ways."""

from __future__ import annotations

from datetime import datetime, timedelta, UTC

import pytest

from poppy_tui.agent.lifecycle import Do, Due, Tick, step
from poppy_tui.agent.store import Status, Store
from poppy_tui.agent.store.lifecycle_facts import facts_of
from poppy_tui.protocol.discovery import parse_poppy_json
from poppy_tui.protocol.operation import parse_operation
from poppy_tui.protocol.requests import ApiRequest

EXPIRES = "2030-01-01T00:00:00Z"
AT_EXPIRY = datetime(2030, 1, 1, tzinfo=UTC)


def company_doc():
    return parse_poppy_json(
        {
            "protocol_version": "0.4",
            "organization": {"name": "Manzanita Outfitters", "domain": "127.0.0.1:9"},
            "apis": [{"type": "openapi", "url": "http://127.0.0.1:9/openapi.json"}],
            "extensions": {"operations": [{"version": "2"}]},
        },
        "127.0.0.1:9",
        allow_loopback_http=True,
    )


def op(operation_id: str, expires: str = EXPIRES):
    return parse_operation(
        {
            "operation_id": operation_id,
            "revision": "r1",
            "summary": "Exchange for $70.00 more",
            "expires_at": expires,
        }
    )


def operation_in(store: Store, company, status: Status, number: int) -> int:
    """A new operation brought to `status` the way the agent brings it there."""
    request_id = store.add_request(
        company.id, ApiRequest("POST", f"http://127.0.0.1:9/api/{number}", {}), "cli"
    )
    # The one meant to be expired already expires a year earlier, so its expiry is only its own.
    expires = "2029-01-01T00:00:00Z" if status == Status.EXPIRED else EXPIRES
    row = store.record_operation(
        company.id, request_id, company.session_id, op(f"op_{number}", expires)
    ).operation_row
    revision = store.get_operation(row).current.id
    if status == Status.PENDING:
        return row
    if status == Status.DECLINED:
        store.decline(row, revision)
        return row
    if status == Status.EXPIRED:
        assert store.expire_due(datetime(2029, 1, 1, 0, 0, 1, tzinfo=UTC)) == [row]
        return row
    store.approve(row, revision, 0.0)
    if status == Status.APPROVED:
        return row
    if status == Status.WITHDRAWN:
        store.withdraw(row)
        return row
    owner = f"test-{number}"
    store.claim_due(owner, 30.0, operation_row=row)
    attempt = store.start_attempt(row, owner)
    if status == Status.SENDING:
        store.finish_attempt(attempt.id, "retry_later", 503, None, "busy")
        store.schedule_retry(row, owner, 0.0)
        return row
    store.finish_and_settle((attempt.id, "x", None, None, None), row, owner, status)
    return row


@pytest.fixture
def every_state(tmp_path):
    with Store.open(tmp_path / "poppy.db") as store:
        company = store.upsert_company("http://127.0.0.1:9", company_doc())
        rows = {}
        for number, status in enumerate(Status):
            rows[status] = operation_in(store, company, status, number)
        assert {store.get_operation(row).status for row in rows.values()} == set(Status)
        yield store, rows


@pytest.mark.parametrize(
    "now", [AT_EXPIRY - timedelta(seconds=1), AT_EXPIRY], ids=["before-expiry", "at-expiry"]
)
def test_expire_due_expires_what_the_lifecycles_clock_rule_expires(every_state, now):
    store, rows = every_state
    said = {
        row: step(facts_of(store.get_operation(row)), Tick(), now).do == Do.EXPIRE
        for row in rows.values()
    }
    expired = set(store.expire_due(now))
    assert expired == {row for row, expires in said.items() if expires}
    assert expired or now < AT_EXPIRY


@pytest.mark.parametrize(
    "now", [AT_EXPIRY - timedelta(seconds=1), AT_EXPIRY], ids=["before-expiry", "at-expiry"]
)
def test_a_claim_takes_what_the_lifecycle_would_send_or_settle_and_nothing_else(every_state, now):
    """Claimed: what a dispatcher's Due would do something with (send it, settle it); never an
    operation the lifecycle gives no Due (undecided, declined, final), nor an approval never sent
    whose terms expired (the clock's to expire)."""
    store, rows = every_state
    claimed = {op.id for op in store.claim_due_many("claimer", 30.0, 100, now)}
    for status, row in rows.items():
        record = store.get_operation(row)
        if status in (Status.APPROVED, Status.SENDING):
            acts = step(facts_of(record), Due(), now).do not in (Do.EXPIRE, Do.NOTHING)
        else:
            acts = False
        assert (row in claimed) == acts, (status, now)
