"""A misbehaving Company: down (connection refused), slow, 503 for a long stretch, dropping
the connection after performing, and returning operations that are already expired.

Real Agent, real demo Company on loopback (RestartableCompany serves the same shop and
ledger again after an outage). Time is compressed with a short retry window and a backoff
policy whose cap also caps Retry-After; the code paths are the production ones.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import StateError, Status
from poppy_tui.demo.faults import Faults
from poppy_tui.protocol.retry import BackoffPolicy
from tests.reliability.support import EXCHANGE_BODY, EXCHANGE_PATH, RestartableCompany
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

FAST = BackoffPolicy(base_seconds=0.02, factor=2.0, cap_seconds=0.05, max_retry_after_seconds=0.05)


def open_agent(home: Path, backoff: BackoffPolicy | None = FAST, **settings) -> Agent:
    config = Config(key_storage="file", grace_seconds=0, **settings)
    return Agent.open(resolve_paths(home), config, backoff=backoff, lease_seconds=5)


async def operation_from(agent: Agent, company: RestartableCompany) -> int:
    record = await agent.add_company(company.base_url)
    result = await agent.call_api(record, "POST", EXCHANGE_PATH, EXCHANGE_BODY)
    assert result.outcome == "operation", result
    return result.operation_row


async def approve_and_wait(agent: Agent, row: int, timeout: float = 30):
    op = agent.store.get_operation(row)
    agent.approve(row, op.current.id)
    return await agent.wait_for_outcome(row, timeout=timeout)


def one_key(agent: Agent, row: int) -> None:
    op = agent.store.get_operation(row)
    assert {a.idempotency_key for a in agent.store.attempts(row)} == {op.idempotency_key}
    assert [d.decision for d in agent.store.decisions(row)] == ["approved"]


async def test_company_down_for_the_first_request_nothing_is_recorded_as_done(home):
    company = RestartableCompany().start()
    agent = open_agent(home)
    try:
        record = await agent.add_company(company.base_url)
        company.stop()
        assert company.refuses_connections()
        result = await agent.call_api(record, "POST", EXCHANGE_PATH, EXCHANGE_BODY)
        assert result.outcome == "not_performed" and result.operation_row is None
        assert "not delivered" in result.detail and "ConnectError" in result.detail, result.detail
        assert agent.store.count_operations() == 0
    finally:
        await agent.aclose()
        company.stop()


async def test_company_down_then_back_the_same_approval_is_delivered_once(home):
    company = RestartableCompany().start()
    agent = open_agent(home, retry_window_seconds=60)
    try:
        row = await operation_from(agent, company)
        company.stop()
        op = agent.store.get_operation(row)
        agent.approve(row, op.current.id)
        waiting = asyncio.create_task(agent.wait_for_outcome(row, timeout=30))
        await wait_until(  # until a send has been refused (the Company is down)
            lambda: any(a.outcome == "not_sent" for a in agent.store.attempts(row)),
            timeout=30,
            describe="a send refused",
        )
        refused = [a.outcome for a in agent.store.attempts(row)]
        assert refused and set(refused) <= {"not_sent", None}, refused
        company.start()  # the same shop and ledger, back on the same port
        final = await waiting
        assert final.status == Status.PERFORMED, final.outcome_detail
        assert company.performed() == 1 and company.approval_requests == 1
        one_key(agent, row)
    finally:
        await agent.aclose()
        company.stop()


async def test_company_down_longer_than_the_retry_window_ends_not_performed(home):
    company = RestartableCompany().start()
    agent = open_agent(home, retry_window_seconds=2)
    try:
        row = await operation_from(agent, company)
        company.stop()
        final = await approve_and_wait(agent, row)
        assert final.status == Status.NOT_PERFORMED
        assert "nothing was delivered" in final.outcome_detail, final.outcome_detail
        assert all(a.outcome == "not_sent" for a in agent.store.attempts(row))
        assert company.performed() == 0 and company.approval_requests == 0
    finally:
        await agent.aclose()
        company.stop()


async def test_slow_company_within_the_timeout_is_waited_for(home):
    with RestartableCompany(Faults(slow=1.5)) as company:
        agent = open_agent(home, request_timeout_seconds=10)
        try:
            row = await operation_from(agent, company)
            started = time.monotonic()
            final = await approve_and_wait(agent, row)
            assert time.monotonic() - started >= 1.5
            assert final.status == Status.PERFORMED and company.performed() == 1
            assert len(agent.store.attempts(row)) == 1
        finally:
            await agent.aclose()


async def test_slow_company_beyond_the_timeout_ends_outcome_unknown_never_twice(home):
    """Every response comes 2 s late and the agent waits 1 s: no send ever gets an answer."""
    with RestartableCompany(Faults(slow=2.0)) as company:
        first = open_agent(home, request_timeout_seconds=10)
        try:
            row = await operation_from(first, company)
        finally:
            await first.aclose()
        # The same store, now with a timeout shorter than the Company's delay.
        agent = open_agent(home, request_timeout_seconds=1, retry_window_seconds=3)
        try:
            final = await approve_and_wait(agent, row)
            assert final.status == Status.OUTCOME_UNKNOWN, (final.status, final.outcome_detail)
            assert "check with the Company" in final.outcome_detail, final.outcome_detail
            attempts = agent.store.attempts(row)
            assert len(attempts) >= 2 and all(a.outcome == "unknown" for a in attempts)
            one_key(agent, row)
            company.wait_idle()  # the Company has finished the requests it was still sleeping on
            # (The demo Company drops a request whose client has gone before it reads the body,
            # so it performed nothing; the agent could not know that and said so.)
            performed = company.performed()
            assert performed <= 1, "resends of one approval performed it more than once"
            # The person checks the order, then says what happened: recorded, and never resent.
            resolved = agent.resolve_unknown(row, performed=bool(performed))
            assert resolved.status == (Status.PERFORMED if performed else Status.NOT_PERFORMED)
            sent = len(agent.store.attempts(row))
            await agent.dispatch_once()
            assert len(agent.store.attempts(row)) == sent
        finally:
            await agent.aclose()


async def test_performing_slower_than_the_timeout_resends_meet_in_progress_then_the_replay(home):
    """The Company starts performing, takes 2.5 s, and the agent gives up on each send after 1 s."""
    with RestartableCompany(Faults(perform_seconds=2.5)) as company:
        agent = open_agent(home, request_timeout_seconds=1, retry_window_seconds=30)
        try:
            row = await operation_from(agent, company)
            final = await approve_and_wait(agent, row)
            outcomes = [a.outcome for a in agent.store.attempts(row)]
            assert final.status == Status.PERFORMED, final.outcome_detail
            assert outcomes[0] == "unknown" and outcomes[-1] == "performed", outcomes
            assert company.performed() == 1
            one_key(agent, row)
        finally:
            await agent.aclose()


async def test_503_for_a_long_stretch_is_resent_with_the_same_approval_until_done(home):
    with RestartableCompany(Faults(busy=40)) as company:
        agent = open_agent(home, retry_window_seconds=120)
        try:
            row = await operation_from(agent, company)
            final = await approve_and_wait(agent, row, timeout=60)
            attempts = agent.store.attempts(row)
            assert final.status == Status.PERFORMED, final.outcome_detail
            assert [a.outcome for a in attempts] == ["retry_later"] * 40 + ["performed"]
            assert all(a.http_status == 503 for a in attempts[:40])
            assert company.performed() == 1 and company.approval_requests == 41
            one_key(agent, row)
        finally:
            await agent.aclose()


async def test_503_beyond_the_retry_window_is_outcome_unknown_and_nothing_was_performed(home):
    with RestartableCompany(Faults(busy=100_000)) as company:
        agent = open_agent(home, retry_window_seconds=2)
        try:
            row = await operation_from(agent, company)
            final = await approve_and_wait(agent, row)
            # A 503 may mean "being performed" (Ops 7), so the agent can't call it a failure.
            assert final.status == Status.OUTCOME_UNKNOWN, final.outcome_detail
            assert company.performed() == 0
            one_key(agent, row)
        finally:
            await agent.aclose()


async def test_connection_dropped_after_performing_is_resent_and_replayed_not_redone(home):
    with RestartableCompany(Faults(drop_after_perform=1)) as company:
        agent = open_agent(home)
        try:
            row = await operation_from(agent, company)
            final = await approve_and_wait(agent, row)
            attempts = agent.store.attempts(row)
            assert final.status == Status.PERFORMED, final.outcome_detail
            assert attempts[0].outcome == "unknown" and attempts[-1].outcome == "performed"
            assert company.performed() == 1 and company.approval_requests == len(attempts) >= 2
            one_key(agent, row)
        finally:
            await agent.aclose()


async def test_an_already_expired_operation_cannot_be_approved_and_nothing_is_sent(home):
    with RestartableCompany(Faults(expired=True)) as company:
        agent = open_agent(home)
        try:
            row = await operation_from(agent, company)
            op = agent.store.get_operation(row)
            with pytest.raises(StateError, match="expired"):
                agent.approve(row, op.current.id)
            await agent.dispatch_once()
            assert agent.store.get_operation(row).status == Status.EXPIRED
            assert not agent.store.attempts(row) and company.approval_requests == 0
        finally:
            await agent.aclose()
