"""kill -9 at each step of the approval state machine, then a fresh Agent resumes.

A child process runs a real Agent against the real demo Company (served by this test
process, so the Company and its ledger outlive the agent) and is SIGKILLed at one step:

  approval committed | during the grace period | attempt committed, request not yet sent |
  while the Company performs | after the Company performed, before the answer is recorded
  (with and without a dropped connection) | after a decline

The steps inside a send are also run over MCP and in a conversation (the tests at the end).
Then a fresh Agent opens the same store and runs the dispatcher. Whatever the step:
  - nothing approved is lost: the approval is delivered without asking the person again;
  - nothing is performed twice: the Company's own count stays at most 1;
  - nothing declined (or withdrawn) is ever sent: no request carrying Poppy-Approval arrives.
"""

from __future__ import annotations

import random
import time
from datetime import datetime, UTC
from pathlib import Path

import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import load_config
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.agent.store.store import parse_stamp
from poppy_tui.demo.faults import Faults
from tests.waiting import wait_until, wait_until_blocking
from tests.reliability.support import (
    EXCHANGE_OPERATION_ID,
    RestartableCompany,
    child,
    consistency_problems,
    integrity,
    write_config,
)

pytestmark = pytest.mark.slow


def snapshot(home: Path, row: int):
    """What the killed process left on disk, read through a fresh Store."""
    path = resolve_paths(home).database
    assert integrity(path) == "ok"
    assert not consistency_problems(path), consistency_problems(path)
    with Store.open(path) as store:
        return store.get_operation(row), store.attempts(row), store.decisions(row)


async def resume(home: Path, row: int, timeout: float = 30.0, **options):
    """A fresh Agent on the same store runs until the operation settles, then a few more
    dispatcher passes to show nothing else goes out."""
    paths = resolve_paths(home)
    agent = Agent.open(paths, load_config(paths), **options)
    try:
        final = await agent.wait_for_outcome(row, timeout=timeout)
        sent = len(agent.store.attempts(row))
        for _ in range(3):
            await agent.dispatch_once()
        assert len(agent.store.attempts(row)) == sent, (
            "the dispatcher kept sending after the outcome"
        )
        return final, agent.store.attempts(row), agent.store.decisions(row)
    finally:
        await agent.aclose()


def assert_delivered_once(company: RestartableCompany, final, attempts, decisions) -> None:
    assert final.status == Status.PERFORMED, (final.status, final.outcome_detail)
    assert company.performed() == 1, "performed twice (or not at all)"
    assert [d.decision for d in decisions] == ["approved"], (
        "the person was asked (or recorded) again"
    )
    keys = {a.idempotency_key for a in attempts}
    assert keys == {final.idempotency_key}, "a resend changed the approval's Idempotency-Key"
    assert all(a.revision_id == final.approved_revision_id for a in attempts)


@pytest.fixture
def company():
    with RestartableCompany() as running:
        yield running


@pytest.fixture
def slow_perform():
    with RestartableCompany(Faults(perform_seconds=2.0)) as running:
        yield running


@pytest.fixture
def dropping():
    with RestartableCompany(Faults(drop_after_perform=1)) as running:
        yield running


def row_of(line: str) -> int:
    return int(line.split()[1])


async def test_killed_right_after_the_approval_is_committed(home, company):
    write_config(home, grace_seconds=0)
    with child("agent_step.py", str(home), company.base_url, "approved") as agent:
        row = row_of(agent.expect("approved"))
        agent.kill9()
    op, attempts, _ = snapshot(home, row)
    assert op.status == Status.APPROVED and not attempts
    assert company.approval_requests == 0
    assert_delivered_once(company, *await resume(home, row))
    assert company.approval_requests == 1


async def test_killed_during_the_grace_period_the_grace_still_holds(home, company):
    write_config(home, grace_seconds=3)
    with child("agent_step.py", str(home), company.base_url, "grace") as agent:
        row = row_of(agent.expect("approved"))
        agent.kill9()
    op, attempts, _ = snapshot(home, row)
    assert op.status == Status.APPROVED and not attempts and company.approval_requests == 0
    final, attempts, decisions = await resume(home, row)
    assert_delivered_once(company, final, attempts, decisions)
    assert parse_stamp(attempts[0].started_at) >= parse_stamp(op.send_after), (
        "sent before the grace period ended"
    )


async def test_withdrawn_after_a_restart_during_the_grace_period_is_never_sent(home, company):
    write_config(home, grace_seconds=2)
    with child("agent_step.py", str(home), company.base_url, "grace") as agent:
        row = row_of(agent.expect("approved"))
        agent.kill9()
    paths = resolve_paths(home)
    fresh = Agent.open(paths, load_config(paths))
    try:
        grace_ends = datetime.fromisoformat(fresh.store.get_operation(row).send_after)
        fresh.withdraw(row)
        # Passes until the grace period is really over (it would have been sent then), and one after.

        async def dispatched_past_the_grace() -> bool:
            await fresh.dispatch_once()
            return datetime.now(UTC) > grace_ends

        await wait_until(dispatched_past_the_grace, timeout=30, describe="the grace period over")
        await fresh.dispatch_once()
        assert fresh.store.get_operation(row).status == Status.WITHDRAWN
        assert not fresh.store.attempts(row)
    finally:
        await fresh.aclose()
    assert company.approval_requests == 0 and company.performed() == 0


async def test_killed_after_the_attempt_is_committed_before_the_request_leaves(home, company):
    write_config(home, grace_seconds=0)
    with child("agent_step.py", str(home), company.base_url, "before-send") as agent:
        row = row_of(agent.expect("sending"))
        op, attempts, _ = snapshot(home, row)
        assert (
            op.status == Status.SENDING and len(attempts) == 1 and attempts[0].finished_at is None
        )
        agent.kill9()
    assert company.approval_requests == 0, "the request left before the attempt was recorded"
    final, attempts, decisions = await resume(home, row)
    assert_delivered_once(company, final, attempts, decisions)
    assert attempts[0].outcome == "interrupted", (
        "the dead sender's attempt must count as 'may have been sent'"
    )
    assert company.approval_requests == 1


async def killed_while_performing(home: Path, company: RestartableCompany, **env: str) -> None:
    """The agent killed while the (slow) Company performs its approval, then resumed: delivered
    once, and the dead sender's attempt counted as interrupted."""
    write_config(home, grace_seconds=0)
    with child("agent_step.py", str(home), company.base_url, "in-flight", **env) as agent:
        row = row_of(agent.expect("sending"))
        # The Company's state changes on its own thread.
        wait_until_blocking(
            company.in_progress, step=0.01, describe="the Company started performing"
        )
        agent.kill9()
    assert company.performed() == 0 and company.in_progress()
    final, attempts, decisions = await resume(home, row)
    assert_delivered_once(company, final, attempts, decisions)
    assert attempts[0].outcome == "interrupted"


async def test_killed_while_the_company_is_performing(home, slow_perform):
    company = slow_perform
    await killed_while_performing(home, company)
    # The resend met "being performed" (503) and/or the replay of the first outcome, never a second perform.
    assert company.approval_requests >= 2


@pytest.mark.parametrize("fault", ["none", "drop_after_perform"])
async def test_killed_after_the_company_performed_before_the_answer_is_recorded(
    home, company, dropping, fault
):
    company = dropping if fault == "drop_after_perform" else company
    write_config(home, grace_seconds=0)
    with child("agent_step.py", str(home), company.base_url, "answered") as agent:
        line = agent.expect("answered")
        row = row_of(line)
        assert line.split()[2] == ("unknown" if fault == "drop_after_perform" else "performed")
        assert company.performed() == 1
        agent.kill9()
    op, attempts, _ = snapshot(home, row)
    assert op.status == Status.SENDING and attempts[-1].finished_at is None, (
        "the answer was recorded after all"
    )
    final, attempts, decisions = await resume(home, row)
    assert_delivered_once(company, final, attempts, decisions)
    assert final.outcome and final.outcome.get("status") in (200, 201), final.outcome


async def test_a_decline_survives_a_kill_and_is_never_sent(home, company):
    write_config(home, grace_seconds=0)
    with child("agent_step.py", str(home), company.base_url, "declined") as agent:
        row = row_of(agent.expect("declined"))
        agent.expect("pass 3")  # its dispatcher has run a few passes
        agent.kill9()
    paths = resolve_paths(home)
    fresh = Agent.open(paths, load_config(paths))
    try:
        for _ in range(5):
            await fresh.dispatch_once()
        op = fresh.store.get_operation(row)
        assert op.status == Status.DECLINED and not fresh.store.attempts(row)
        assert [d.decision for d in fresh.store.decisions(row)] == ["declined"]
    finally:
        await fresh.aclose()
    assert company.approval_requests == 0 and company.performed() == 0


async def test_killed_at_random_moments_the_invariants_hold_whichever_step_was_hit(tmp_path):
    """Timing instead of a hook: a slow perform stretches the flow, and the kill lands anywhere."""
    rng = random.Random(20261202)
    hit: dict[str, int] = {}
    for trial in range(6):
        home = tmp_path / f"home{trial}"
        write_config(home, grace_seconds=rng.choice([0, 0.5]))
        with RestartableCompany(Faults(perform_seconds=1.0)) as company:
            with child("agent_step.py", str(home), company.base_url, "run") as agent:
                agent.expect("company")
                pause = rng.uniform(0.0, 1.6)
                time.sleep(pause)  # fixed-wait: the kill lands at a random moment of the flow
                agent.kill9()
                lines = agent.drain()
            database = resolve_paths(home).database
            assert integrity(database) == "ok"
            assert not consistency_problems(database)
            with Store.open(database) as store:
                rows = store.list_operations(limit=5)
            if not rows:
                hit["before the operation arrived"] = hit.get("before the operation arrived", 0) + 1
                assert company.approval_requests == 0 and company.performed() == 0
                continue
            row = rows[0].id
            status_at_kill = rows[0].status
            hit[status_at_kill.value] = hit.get(status_at_kill.value, 0) + 1
            if status_at_kill == Status.PENDING:
                assert company.approval_requests == 0 and company.performed() == 0, lines
                continue
            final, attempts, decisions = await resume(home, row)
            assert_delivered_once(company, final, attempts, decisions)
            assert company.performed(EXCHANGE_OPERATION_ID) == 1
    assert sum(hit.values()) == 6
    print("steps hit:", hit)


# ---- the same steps over MCP and conversations -----------------------------------------------------
# The approval travels in _meta or in a message there, not in a header, so these tests count what
# matters (the Company's own perform count) rather than Poppy-Approval headers.

OTHER_INTERFACES = ["mcp", "conversation"]


@pytest.mark.parametrize("interface", OTHER_INTERFACES)
async def test_other_interfaces_killed_before_the_request_leaves(home, company, interface):
    write_config(home, grace_seconds=0)
    with child(
        "agent_step.py", str(home), company.base_url, "before-send", POPPY_TEST_INTERFACE=interface
    ) as agent:
        row = row_of(agent.expect("sending"))
        op, attempts, _ = snapshot(home, row)
        assert op.interface == interface
        assert (
            op.status == Status.SENDING and len(attempts) == 1 and attempts[0].finished_at is None
        )
        agent.kill9()
    assert company.performed() == 0
    final, attempts, decisions = await resume(home, row)
    assert_delivered_once(company, final, attempts, decisions)
    assert attempts[0].outcome == "interrupted"


@pytest.mark.parametrize("interface", OTHER_INTERFACES)
async def test_other_interfaces_killed_while_the_company_is_performing(
    home, slow_perform, interface
):
    await killed_while_performing(home, slow_perform, POPPY_TEST_INTERFACE=interface)


@pytest.mark.parametrize("interface", OTHER_INTERFACES)
async def test_other_interfaces_killed_after_the_company_performed(home, company, interface):
    write_config(home, grace_seconds=0)
    with child(
        "agent_step.py", str(home), company.base_url, "answered", POPPY_TEST_INTERFACE=interface
    ) as agent:
        row = row_of(agent.expect("answered"))
        # a conversation's Company agent reports in a later message
        wait_until_blocking(
            lambda: company.performed() > 0, step=0.01, describe="the Company performed"
        )
        agent.kill9()
    op, attempts, _ = snapshot(home, row)
    assert op.status == Status.SENDING and attempts[-1].finished_at is None, (
        "the answer was recorded after all"
    )
    final, attempts, decisions = await resume(home, row)
    assert_delivered_once(company, final, attempts, decisions)


async def test_killed_while_finding_out_resends_the_same_approval_once_the_lease_lapses(home):
    """Finding out another way (Ops §7; docs/state-machine.md): the outcome probe resends the same
    approval of an outcome_unknown operation. Killed after its attempt row is committed, a fresh
    Agent marks that attempt interrupted and finds out with the same approval: performed once,
    never asked again."""
    write_config(home, grace_seconds=0, retry_window_seconds=1, request_timeout_seconds=1)
    with RestartableCompany(Faults(busy=100_000)) as company:
        with child("agent_step.py", str(home), company.base_url, "probe", "1") as agent:
            row = row_of(agent.expect("outcome"))
            agent.expect("probing", timeout=30)
            agent.kill9()
        op, attempts, _ = snapshot(home, row)
        assert op.status == Status.OUTCOME_UNKNOWN and attempts[-1].finished_at is None
        assert company.performed() == 0
        company.context.counters._busy = 0  # the Company is no longer busy
        paths = resolve_paths(home)
        fresh = Agent.open(paths, load_config(paths), lease_seconds=1)
        try:

            async def found_out() -> bool:
                if fresh.store.get_operation(row).status != Status.OUTCOME_UNKNOWN:
                    return True
                await fresh.dispatch_once()
                return False

            await wait_until(found_out, timeout=30, step=0.05, describe="the outcome found out")
            final = fresh.store.get_operation(row)
            attempts = fresh.store.attempts(row)
            assert final.status == Status.PERFORMED, final.outcome_detail
            assert company.performed() == 1
            assert "interrupted" in [a.outcome for a in attempts]
            assert {a.idempotency_key for a in attempts} == {final.idempotency_key}
            assert [d.decision for d in fresh.store.decisions(row)] == ["approved"]
        finally:
            await fresh.aclose()
