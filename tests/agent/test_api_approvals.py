"""The approval state machine over the API, against the demo Company on loopback."""

from __future__ import annotations

import asyncio
import json
import re
from email.utils import format_datetime
from datetime import datetime, timedelta, UTC

import pytest

from poppy_tui.agent.store import StateError, Status
from tests.clock_waits import until_past
from tests.waiting import wait_until

from .company_app import Answer, Rule, is_api_approval, is_api_first_request, operation_for

EXCHANGE = "/api/orders/ord_7Hk2/exchanges"
BODY = {"replacement_sku": "stormline-insulated-m", "item_id": "itm_4Qa"}
SPEC_SUMMARY = (
    "Exchange the Stormline Jacket (M) on order ord_7Hk2 for the Stormline Insulated Jacket (M), for $70.00 more, "
    "charged to the card used for the order."
)
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


async def ask(agent, shop):
    company = await agent.add_company(shop.base_url)
    result = await agent.call_api(company, "POST", EXCHANGE, BODY)
    assert result.outcome == "operation", result
    return company, agent.store.get_operation(result.operation_row)


async def approve_and_wait(agent, op, timeout=30.0):
    agent.approve(op.id, op.current.id)
    return await agent.wait_for_outcome(op.id, timeout=timeout)


async def test_spec_example_byte_for_byte(make_agent, shop):
    """Ops 4 and 6: the 403 the spec shows, then the same request again with Poppy-Approval."""
    spec_operation = {
        "operation_id": "exc_5Rt2",
        "revision": "1791487200-k3Jd9Qx2mW8v",
        "summary": SPEC_SUMMARY,
        "expires_at": "2099-10-08T12:20:00-07:00",  # the spec's date has passed; only this differs
    }
    shop.add(
        Rule(
            is_api_first_request,
            lambda r: Answer(403, {"error": "approval_required", "operation": spec_operation}),
        )
    )
    shop.add(
        Rule(
            is_api_approval, lambda r: Answer(201, {"exchange_id": "exg_1", "status": "confirmed"})
        )
    )
    agent = make_agent()
    company, op = await ask(agent, shop)
    assert (op.operation_id, op.current.revision, op.current.summary) == (
        "exc_5Rt2",
        "1791487200-k3Jd9Qx2mW8v",
        SPEC_SUMMARY,
    )

    done = await approve_and_wait(agent, op)
    assert done.status == Status.PERFORMED
    first, resent = shop.requests(lambda r: r.path == EXCHANGE)
    assert resent.approval == 'operation_id="exc_5Rt2", revision="1791487200-k3Jd9Qx2mW8v"'
    assert (resent.method, resent.path, resent.query, resent.body) == (
        first.method,
        first.path,
        first.query,
        first.body,
    )
    assert json.loads(first.body) == BODY
    assert first.approval is None
    key_first, key_resent = first.headers["idempotency-key"], resent.headers["idempotency-key"]
    assert key_first != key_resent
    assert UUID_RE.match(key_first) and UUID_RE.match(key_resent)  # bare, as the spec's example
    assert key_resent == agent.store.get_operation(op.id).idempotency_key
    for sent in (first, resent):
        assert sent.headers["poppy-version"] == "0.4"
        assert sent.headers["poppy-extensions"] == '"operations";v="2"'
        assert sent.headers["content-type"] == "application/json"
    assert (
        first.headers["poppy-session"] != resent.headers["poppy-session"]
    )  # a fresh JWT per request

    # Everything is on record: the request, its first response, the revision, the decision, the attempt.
    request, status, response = agent.store.get_request(op.request_id)
    assert status == 403 and response["body"]["operation"]["revision"] == "1791487200-k3Jd9Qx2mW8v"
    assert [d.decision for d in agent.store.decisions(op.id)] == ["approved"]
    [attempt] = agent.store.attempts(op.id)
    assert (attempt.outcome, attempt.http_status, attempt.idempotency_key) == (
        "performed",
        201,
        key_resent,
    )
    assert done.outcome["body"] == {"exchange_id": "exg_1", "status": "confirmed"}


async def test_performed_once_by_the_demo_company(make_agent, shop):
    agent = make_agent()
    _, op = await ask(agent, shop)
    assert op.operation_id == "exc_5Rt2" and op.status == Status.PENDING
    assert shop.performed("exc_5Rt2") == 0  # Ops 3: nothing before an approval
    done = await approve_and_wait(agent, op)
    assert done.status == Status.PERFORMED
    assert shop.performed("exc_5Rt2") == 1
    assert done.outcome["status"] == 201 and done.outcome["body"]["operation_id"] == "exc_5Rt2"
    # Asking again for the same exchange: the demo replays; we keep the operation as performed.
    again = await agent.call_api(done.company, "POST", EXCHANGE, BODY)
    assert shop.performed("exc_5Rt2") == 1
    assert again.outcome in ("not_performed", "operation")


async def test_decline_never_sends(make_agent, shop):
    agent = make_agent()
    _, op = await ask(agent, shop)
    agent.decline(op.id, op.current.id)
    assert await agent.dispatch_once() == 0
    assert await agent.dispatch_once() == 0  # a second whole pass: still nothing
    assert shop.requests(is_api_approval) == []
    assert agent.store.get_operation(op.id).status == Status.DECLINED
    with pytest.raises(StateError):
        agent.approve(op.id, op.current.id)


async def test_withdraw_within_grace_sends_nothing(make_agent, shop):
    agent = make_agent(grace_seconds=0.6)
    _, op = await ask(agent, shop)
    agent.approve(op.id, op.current.id)
    grace_ends = datetime.fromisoformat(agent.store.get_operation(op.id).send_after)
    assert await agent.dispatch_once() == 0  # still in the grace period
    agent.withdraw(op.id)
    await until_past(grace_ends)  # the grace period really over: it would have been sent now
    assert await agent.dispatch_once() == 0
    assert shop.requests(is_api_approval) == []
    record = agent.store.get_operation(op.id)
    assert record.status == Status.WITHDRAWN
    assert [d.decision for d in agent.store.decisions(op.id)] == ["approved", "withdrawn"]
    # Withdrawn can be decided again; declining it then sends nothing either.
    agent.decline(op.id, record.current.id)
    assert await agent.dispatch_once() == 0 and shop.requests(is_api_approval) == []


async def test_withdraw_impossible_once_sending_started(make_agent, start):
    shop = start("perform_seconds=1.0")
    agent = make_agent()
    _, op = await ask(agent, shop)
    agent.approve(op.id, op.current.id)
    task = asyncio.create_task(agent.dispatch_once())
    await wait_until(
        lambda: agent.store.get_operation(op.id).status == Status.SENDING,
        step=0.01,
        describe="the approval being sent",
    )
    with pytest.raises(StateError):
        agent.withdraw(op.id)
    with pytest.raises(StateError):
        agent.decline(op.id, op.current.id)
    await task
    assert agent.store.get_operation(op.id).status == Status.PERFORMED


async def test_new_revision_before_sending_supersedes_the_approval(make_agent, shop):
    agent = make_agent(grace_seconds=5.0)
    company, op = await ask(agent, shop)
    agent.approve(op.id, op.current.id)
    # The demo's revisions name their expiry to the second: past the next one, it makes a new one.
    await until_past(datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1))
    again = await agent.call_api(company, "POST", EXCHANGE, BODY)
    assert again.operation_row == op.id
    record = agent.store.get_operation(op.id)
    assert record.status == Status.PENDING and record.current.revision != op.current.revision
    assert len(agent.store.revisions(op.id)) == 2
    assert await agent.dispatch_once() == 0
    assert shop.requests(is_api_approval) == []
    with pytest.raises(StateError):
        agent.approve(op.id, op.current.id)  # the old revision can't be approved any more
    agent.store.approve(op.id, record.current.id, grace_seconds=0)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED and shop.performed("exc_5Rt2") == 1


async def test_503_retry_after_seconds_then_performed(make_agent, start):
    shop = start("busy=2")
    agent = make_agent()
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.PERFORMED and shop.performed("exc_5Rt2") == 1
    attempts = agent.store.attempts(op.id)
    assert [a.outcome for a in attempts] == ["retry_later", "retry_later", "performed"]
    assert len({a.idempotency_key for a in attempts}) == 1
    sent = shop.requests(is_api_approval)
    assert (
        len({r.approval for r in sent}) == 1
        and len({r.headers["idempotency-key"] for r in sent}) == 1
    )
    gaps = [b.at - a.at for a, b in zip(sent, sent[1:], strict=False)]
    assert all(gap >= 0.9 for gap in gaps), gaps  # Retry-After: 1 was honoured


@pytest.mark.parametrize("status", [503, 429])
async def test_retry_after_http_date(make_agent, shop, status):
    def busy(_):
        when = datetime.now(UTC) + timedelta(seconds=3)
        return Answer(
            status,
            {"error": "temporarily_unavailable"},
            {"Retry-After": format_datetime(when, usegmt=True)},
        )

    shop.add(Rule(is_api_approval, busy))
    agent = make_agent()
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.PERFORMED
    first, second = shop.requests(is_api_approval)
    # An HTTP-date has whole seconds, so the wait is between 2 and 3 s.
    assert second.at - first.at >= 1.9


async def test_timeout_then_success(make_agent, start):
    """The first send times out while the Company performs; resends meet 503 then the replay."""
    shop = start("perform_seconds=2.0")
    agent = make_agent(request_timeout_seconds=1.0)
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.PERFORMED and shop.performed("exc_5Rt2") == 1
    outcomes = [a.outcome for a in agent.store.attempts(op.id)]
    assert outcomes[0] == "unknown" and outcomes[-1] == "performed"
    assert done.outcome["body"]["operation_id"] == "exc_5Rt2"


async def test_dropped_connection_after_performing_gets_the_replay(make_agent, start):
    shop = start("drop_after_perform=1")
    agent = make_agent()
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.PERFORMED and shop.performed("exc_5Rt2") == 1
    first, second = agent.store.attempts(op.id)
    assert (first.outcome, first.http_status) == ("unknown", 201)
    assert (second.outcome, second.http_status) == ("performed", 201)
    assert done.outcome["body"]["operation_id"] == "exc_5Rt2"  # the replayed response, complete


async def test_same_revision_is_a_protocol_violation_not_a_loop(make_agent, shop):
    shop.add(
        Rule(
            is_api_approval,
            lambda r: Answer(
                403,
                {
                    "error": "approval_required",
                    "operation": operation_for(r.approval, _revision(r)),
                },
            ),
            times=100,
        )
    )
    agent = make_agent()
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.NOT_PERFORMED
    assert "protocol violation" in done.outcome_detail
    assert len(shop.requests(is_api_approval)) == 1


async def test_same_revision_after_an_attempt_in_doubt_is_outcome_unknown(make_agent, shop):
    shop.add(
        Rule(
            is_api_approval,
            lambda r: Answer(503, {"error": "operation_in_progress"}, {"Retry-After": "0"}),
        )
    )
    shop.add(
        Rule(
            is_api_approval,
            lambda r: Answer(
                403,
                {
                    "error": "approval_required",
                    "operation": operation_for(r.approval, _revision(r)),
                },
            ),
        )
    )
    agent = make_agent()
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.OUTCOME_UNKNOWN and "protocol violation" in done.outcome_detail
    assert len(shop.requests(is_api_approval)) == 2


async def test_new_revision_in_answer_needs_a_new_approval(make_agent, shop):
    shop.add(
        Rule(
            is_api_approval,
            lambda r: Answer(
                403,
                {
                    "error": "approval_required",
                    "operation": operation_for(
                        r.approval, "rev_new_terms", summary="Exchange for size L."
                    ),
                },
            ),
        )
    )
    agent = make_agent()
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.PENDING
    assert (
        done.current.revision == "rev_new_terms" and done.current.summary == "Exchange for size L."
    )
    assert [r.revision for r in agent.store.revisions(op.id)] == [
        op.current.revision,
        "rev_new_terms",
    ]
    assert await agent.dispatch_once() == 0  # nothing is sent for terms nobody approved
    assert len(shop.requests(is_api_approval)) == 1


async def test_new_revision_while_in_doubt_never_asks_for_approval(make_agent, shop):
    shop.add(Rule(is_api_approval, lambda r: Answer(503, {"error": "busy"}, {"Retry-After": "0"})))
    shop.add(
        Rule(
            is_api_approval,
            lambda r: Answer(
                403,
                {
                    "error": "approval_required",
                    "operation": operation_for(r.approval, "rev_after_doubt"),
                },
            ),
        )
    )
    agent = make_agent()
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.OUTCOME_UNKNOWN and "find out" in done.outcome_detail
    assert done.current.revision == "rev_after_doubt"
    with pytest.raises(StateError):
        agent.approve(op.id, done.current.id)
    # The person checks the order and says it was not done: the new terms may now be decided on.
    resolved = agent.resolve_unknown(op.id, performed=False)
    assert resolved.status == Status.PENDING


async def test_resolve_unknown_as_performed(make_agent, shop):
    shop.add(Rule(is_api_approval, lambda r: Answer(504, {"error": "gateway_timeout"}), times=100))
    agent = make_agent(retry_window_seconds=1.0)
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.OUTCOME_UNKNOWN
    assert len(shop.requests(is_api_approval)) >= 2  # resent with the same approval meanwhile
    assert agent.resolve_unknown(op.id, performed=True).status == Status.PERFORMED


async def test_expiry_while_waiting_for_the_person(make_agent, start):
    shop = start(expiry_seconds=1)
    agent = make_agent()
    _, op = await ask(agent, shop)
    await until_past(op.current.expires_at)
    await agent.dispatch_once()
    assert agent.store.get_operation(op.id).status == Status.EXPIRED
    with pytest.raises(StateError):
        agent.approve(op.id, op.current.id)


async def test_already_expired_operation_cannot_be_approved(make_agent, start):
    shop = start("expired")
    agent = make_agent()
    _, op = await ask(agent, shop)
    with pytest.raises(StateError):
        agent.approve(op.id, op.current.id)
    await agent.dispatch_once()
    assert agent.store.get_operation(op.id).status == Status.EXPIRED
    assert shop.requests(is_api_approval) == []


async def test_approved_but_expired_during_grace_is_never_sent(make_agent, start):
    shop = start(expiry_seconds=1)
    agent = make_agent(grace_seconds=5.0)
    _, op = await ask(agent, shop)
    agent.approve(op.id, op.current.id)
    await until_past(op.current.expires_at)
    done = await agent.wait_for_outcome(op.id, timeout=2)
    assert done.status == Status.EXPIRED
    assert shop.requests(is_api_approval) == []


async def test_unreachable_company_within_the_window_is_not_performed(make_agent, shop):
    agent = make_agent(retry_window_seconds=1.0)
    _, op = await ask(agent, shop)
    shop.stop()
    done = await approve_and_wait(agent, op, timeout=15)
    assert done.status == Status.NOT_PERFORMED and "could not be reached" in done.outcome_detail
    assert all(a.outcome == "not_sent" for a in agent.store.attempts(op.id))
    assert len(agent.store.attempts(op.id)) >= 2


async def test_timeouts_until_the_window_ends_are_outcome_unknown(make_agent, shop):
    shop.add(Rule(is_api_approval, delay=1.5, times=100))
    agent = make_agent(request_timeout_seconds=1.0, retry_window_seconds=1.5)
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.OUTCOME_UNKNOWN
    assert {a.outcome for a in agent.store.attempts(op.id)} == {"unknown"}


async def test_invalid_session_on_approval_is_reported_not_moved(make_agent, shop):
    shop.add(
        Rule(
            is_api_approval,
            lambda r: Answer(403, {"error": "invalid_session", "error_description": "ended"}),
        )
    )
    agent = make_agent()
    company, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.NOT_PERFORMED and "own Session" in done.outcome_detail
    assert len(shop.requests(is_api_approval)) == 1  # not retried in another Session
    renewed = agent.store.get_company(company.id)
    assert renewed.session_id != op.session_id  # later requests start a new Session
    assert agent.store.get_operation(op.id).session_id == op.session_id


async def test_refusal_is_not_performed(make_agent, shop):
    shop.add(
        Rule(
            is_api_approval,
            lambda r: Answer(409, {"error": "already_exchanged", "error_description": "no"}),
        )
    )
    agent = make_agent()
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.NOT_PERFORMED and "already_exchanged" in done.outcome_detail


@pytest.mark.parametrize(
    ("operation", "said", "kept"),
    [
        (
            {"operation_id": "exc_1", "revision": "r1", "expires_at": "2099-01-01T00:00:00Z"},
            "summary",
            None,
        ),
        # JSON can spell "\ud800", which is no character: refused by name, kept as U+FFFD.
        (
            {
                "operation_id": "exc_1",
                "revision": "r1",
                "summary": "Exchange \ud800",
                "expires_at": "2099-01-01T00:00:00Z",
            },
            "lone surrogate",
            "Exchange \ufffd",
        ),
    ],
    ids=["no-summary", "lone-surrogate"],
)
async def test_malformed_operation_is_a_clear_error_and_kept(
    make_agent, shop, operation, said, kept
):
    broken = {"error": "approval_required", "operation": operation}
    shop.add(Rule(is_api_first_request, lambda r: Answer(403, broken)))
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    result = await agent.call_api(company, "POST", EXCHANGE, BODY)
    assert result.outcome == "not_performed" and said in result.detail
    assert agent.store.list_operations() == []
    _, status, response = agent.store.get_request(result.request_id)
    assert status == 403
    if kept is None:
        assert response["body"] == broken
    else:
        assert response["body"]["operation"]["summary"] == kept


async def test_operation_without_negotiation_is_refused(make_agent, start):
    shop = start(extension_version=None)
    op = {
        "operation_id": "exc_1",
        "revision": "r1",
        "summary": "s",
        "expires_at": "2099-01-01T00:00:00Z",
    }
    shop.add(
        Rule(
            is_api_first_request,
            lambda r: Answer(403, {"error": "approval_required", "operation": op}),
        )
    )
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    assert not company.supports_operations
    result = await agent.call_api(company, "POST", EXCHANGE, BODY)
    assert result.outcome == "not_performed" and "did not declare" in result.detail
    assert agent.store.list_operations() == []


@pytest.mark.parametrize("version", [None, "3"])
async def test_extension_not_advertised_means_no_header_and_no_operations(
    make_agent, start, version
):
    shop = start(extension_version=version)
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    assert not company.supports_operations
    result = await agent.call_api(company, "POST", EXCHANGE, BODY)
    assert result.outcome == "not_performed" and result.status == 403
    assert agent.store.list_operations() == []
    sent = shop.requests(lambda r: r.path == EXCHANGE)
    assert sent and all("poppy-extensions" not in r.headers for r in sent)
    assert all(r.headers["poppy-version"] == "0.4" for r in sent)
    assert shop.performed("exc_5Rt2") == 0


def _revision(received) -> str:
    return received.approval.split('revision="', 1)[1].rstrip('"')


async def test_a_resend_carries_the_approved_revisions_request_not_a_newer_one(
    make_agent, paths, shop
):
    """Ops 6: the approval goes with "the same request again". While the first send waits to be
    retried, the same action is asked for again with other terms (another request, a new
    revision of the same operation); the retry must still carry the approved request's body."""
    shop.add(Rule(is_api_approval, lambda r: Answer(503, {"error": "busy"}, {"Retry-After": "1"})))
    agent = make_agent()
    company, op = await ask(agent, shop)
    agent.approve(op.id, op.current.id)
    sending = asyncio.create_task(agent.wait_for_outcome(op.id, timeout=30))
    await wait_until(
        lambda: shop.requests(is_api_approval), step=0.01, describe="the first send's answer"
    )
    other = make_agent()  # a script asking again, through its own Agent on the same store
    larger = {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-l"}
    again = await other.call_api(company, "POST", EXCHANGE, larger)
    assert (
        again.operation_row == op.id
        and other.store.get_operation(op.id).current.revision != op.current.revision
    )
    await sending
    first, retry = shop.requests(is_api_approval)[:2]
    assert retry.body == first.body and retry.json() == BODY
    assert retry.approval == first.approval


async def test_an_outcome_holding_a_lone_surrogate_is_kept_with_a_replacement_character(
    make_agent, shop
):
    """JSON can spell "\\ud800"; Python reads it as a lone surrogate, which has no UTF-8 form.
    The outcome is still recorded (performed), with U+FFFD in its place, never a crash mid-send."""
    shop.add(
        Rule(is_api_approval, lambda r: Answer(201, {"status": "exchanged", "note": "done \ud800"}))
    )
    agent = make_agent()
    _, op = await ask(agent, shop)
    done = await approve_and_wait(agent, op)
    assert done.status == Status.PERFORMED
    assert done.outcome["body"] == {"status": "exchanged", "note": "done \ufffd"}
