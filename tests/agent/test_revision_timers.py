"""A revision's timers are its own (audit A52), and one operation's retries never delay another's
first send. Against Quince Fares (tests/companies/fares_company.py, written from the spec alone),
over the API, MCP and a conversation where the case applies.

The clock the agent reads (poppy_tui/agent/clock.py) is moved by hand, so "700 s later" takes
no time, and the agent sends every retry delay through the store's schedule
(inline_retry_seconds=0): nothing here waits real time for a timer."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from poppy_tui.agent import clock
from poppy_tui.agent.agent import Agent
from poppy_tui.agent.dispatcher import DEFAULT_PER_COMPANY, Dispatcher
from poppy_tui.agent.lifecycle import Why
from poppy_tui.agent.store import Status, Store
from poppy_tui.agent.store.connection import parse_stamp
from poppy_tui.protocol.retry import BackoffPolicy
from tests.companies.fares_company import FaresCompany
from tests.waiting import wait_until

from .conftest import TEST_CONFIG

INTERFACES = ["api", "mcp", "conversation"]
# Retry-After honoured as the Company says it (up to 10 min); other delays short.
BACKOFF = BackoffPolicy(base_seconds=0.05, cap_seconds=0.4, max_retry_after_seconds=600)


class HandClock:
    """The agent's clock, moved only by the test."""

    def __init__(self) -> None:
        self.at = datetime.now(UTC)

    def now(self) -> datetime:
        return self.at

    def forward(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


@pytest.fixture
def fares() -> Iterator[FaresCompany]:
    company = FaresCompany()
    yield company
    company.stop()


@pytest.fixture
def hand() -> Iterator[HandClock]:
    moved = HandClock()
    with clock.use(moved):
        yield moved


def open_agent(paths, **options) -> Agent:
    options = {"inline_retry_seconds": 0, "backoff": BACKOFF, **options}
    config = replace(TEST_CONFIG, retry_window_seconds=600.0)
    return Agent.open(paths, config, lease_seconds=5.0, reply_wait_seconds=3.0, **options)


async def ask(agent: Agent, company, interface: str, fare: str) -> int:
    """The request for a fare change through `interface`; the operation it returned."""
    if interface == "api":
        result = await agent.call_api(company, "POST", f"/fares/{fare}/change", {})
        assert result.outcome == "operation", result.detail
        return result.operation_row
    if interface == "mcp":
        result = await agent.call_tool(company, "change_fare", {"fare_id": fare})
        assert result.outcome == "operation", result.detail
        return result.operation_row
    said = await agent.say(company, f"Please change fare {fare}")
    [row] = said.operation_rows
    return row


async def approve_and_send(agent: Agent, row: int) -> None:
    agent.approve(row, agent.store.get_operation(row).current.id)
    await agent.dispatch_once()


async def new_terms_after_the_first_approval(agent: Agent, fares, interface: str) -> int:
    """Revision 1 approved and sent; the Company answered with revision 2 (the price moved)."""
    company = await agent.add_company(fares.base_url)
    row = await ask(agent, company, interface, "f1")
    await approve_and_send(agent, row)
    op = agent.store.get_operation(row)
    assert op.status == Status.PENDING, op.outcome_detail
    assert op.current.revision == "2"
    return row


def revisions_approved(fares, fare: str = "f1") -> list[str]:
    return [a.revision for a in fares.state.approvals_for(fare)]


# ---- A52: the approval of new terms goes, however long after the first revision's send -----------


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("later", [1, 599, 601, 3600], ids=lambda s: f"{s}s")
async def test_new_terms_approved_long_after_the_first_send_are_sent(
    paths, fares, hand, interface, later
):
    """Before and after the first revision's retry window (600 s) would have ended: revision 2's
    approval reaches the Company on the next pass, and it is performed once."""
    fares.state.scripts["f1"] = ["reprice"]
    agent = open_agent(paths)
    try:
        row = await new_terms_after_the_first_approval(agent, fares, interface)
        hand.forward(later)
        agent.approve(row, agent.store.get_operation(row).current.id)
        assert agent.explain(row).on_its_way  # "sent when the countdown ends" is true again
        await agent.dispatch_once()
        done = agent.store.get_operation(row)
        assert done.status == Status.PERFORMED, done.outcome_detail
        assert revisions_approved(fares) == ["1", "2"]
        assert fares.state.perform_count == {f"chg_f1_{interface}": 1}
    finally:
        await agent.aclose()


@pytest.mark.parametrize("interface", INTERFACES)
async def test_new_terms_answered_with_newer_terms_need_a_third_approval_then_go(
    paths, fares, hand, interface
):
    """Revision 2 answered with revision 3: back to pending (nothing in doubt), and revision 3's
    approval, 700 s later again, goes too."""
    fares.state.scripts["f1"] = ["reprice", "reprice"]
    agent = open_agent(paths)
    try:
        row = await new_terms_after_the_first_approval(agent, fares, interface)
        hand.forward(700)
        await approve_and_send(agent, row)
        op = agent.store.get_operation(row)
        assert (op.status, op.current.revision) == (Status.PENDING, "3"), op.outcome_detail
        hand.forward(700)
        await approve_and_send(agent, row)
        assert agent.store.get_operation(row).status == Status.PERFORMED
        assert revisions_approved(fares) == ["1", "2", "3"]
        assert fares.state.perform_count == {f"chg_f1_{interface}": 1}
    finally:
        await agent.aclose()


async def test_new_terms_answered_503_wait_their_retry_after_then_are_performed(paths, fares, hand):
    """Revision 2's first answer is 503 with Retry-After: 30. The person is told it goes again
    at that time; nothing goes before it; at it, the same approval goes and is performed."""
    fares.state.scripts["f1"] = ["reprice", "busy:30", "perform"]
    agent = open_agent(paths)
    try:
        row = await new_terms_after_the_first_approval(agent, fares, "api")
        hand.forward(700)
        await approve_and_send(agent, row)
        waiting = agent.store.get_operation(row)
        assert waiting.status == Status.SENDING
        assert parse_stamp(waiting.next_attempt_at or "") == hand.at + timedelta(seconds=30)
        said = agent.explain(row)
        assert (
            said.why == Why.RETRY_WAIT
            and said.on_its_way
            and said.at == hand.at + timedelta(seconds=30)
        )
        hand.forward(29)
        assert await agent.dispatch_once() == 0  # not before its Retry-After
        assert revisions_approved(fares) == ["1", "2"]
        hand.forward(2)
        await agent.dispatch_once()
        assert agent.store.get_operation(row).status == Status.PERFORMED
        assert revisions_approved(fares) == ["1", "2", "2"]
        assert fares.state.perform_count == {"chg_f1_api": 1}
    finally:
        await agent.aclose()


async def test_the_retry_window_of_new_terms_counts_from_their_own_first_send(paths, fares, hand):
    """The Company stays busy: revision 2 is resent until 600 s after *its* first send (not
    revision 1's), then it is in doubt (a 503 may mean "being performed", Ops 7)."""
    fares.state.scripts["f1"] = ["reprice"] + ["busy:1"] * 20
    agent = open_agent(paths)
    try:
        row = await new_terms_after_the_first_approval(agent, fares, "api")
        hand.forward(700)
        await approve_and_send(agent, row)
        first_send = hand.at
        hand.forward(599)
        await agent.dispatch_once()
        assert agent.store.get_operation(row).status == Status.SENDING
        assert revisions_approved(fares) == ["1", "2", "2"]
        hand.forward(2)
        await agent.dispatch_once()
        ended = agent.store.get_operation(row)
        assert ended.status == Status.OUTCOME_UNKNOWN
        assert "no definite answer after 600s of resending" in (ended.outcome_detail or "")
        assert revisions_approved(fares) == ["1", "2", "2"]
        assert hand.at - first_send > timedelta(seconds=600)
    finally:
        await agent.aclose()


# ---- one operation's retries never delay another's first send --------------------------------------


@pytest.mark.parametrize("retry_after", [10, 60], ids=["waited-in-the-pass", "waited-in-the-store"])
@pytest.mark.parametrize("approved_by", ["this process", "another process"])
@pytest.mark.parametrize("turns", [DEFAULT_PER_COMPANY, 1], ids=["8-turns", "1-turn"])
async def test_an_approval_goes_on_its_first_turn_while_another_waits_for_its_retry_after(
    paths, fares, retry_after, approved_by, turns
):
    """A's Company answers 503 with Retry-After; B, of the same Company, is approved after that.
    B reaches the Company before A's next attempt: it never waits behind A's retries, not even
    when the Company has one send turn (A waits holding its lease, not the turn). (Real time: the
    dispatcher of the TUI as it runs, with its default in-process retry waits.)"""
    fares.state.scripts["f1"] = [f"busy:{retry_after}"] * 5
    agent = open_agent(paths, inline_retry_seconds=None)
    agent.dispatcher = Dispatcher(
        agent, lease_seconds=5.0, backoff=BACKOFF, probe_after=1.0, per_company=turns
    )
    stop = asyncio.Event()
    running: asyncio.Task | None = None
    try:
        company = await agent.add_company(fares.base_url)
        a = await ask(agent, company, "api", "f1")
        b = await ask(agent, company, "api", "f2")
        agent.approve(a, agent.store.get_operation(a).current.id)
        running = asyncio.create_task(agent.run_dispatcher(stop))
        await wait_until(
            lambda: [t.outcome for t in agent.store.attempts(a)] == ["retry_later"],
            timeout=30,
            describe="A's first send answered 503, A waiting to resend",
        )
        b_revision = agent.store.get_operation(b).current.id
        if approved_by == "this process":
            agent.approve(b, b_revision)
        else:
            with Store.open(agent.store.path) as other:
                other.approve(b, b_revision, 0.0)
        await wait_until(
            lambda: agent.store.get_operation(b).status == Status.PERFORMED,
            timeout=30,
            describe="B performed",
        )
        assert len(fares.state.approvals_for("f1")) == 1  # A still waits its Retry-After
        assert agent.store.get_operation(a).status == Status.SENDING
        assert fares.state.perform_count == {"chg_f2_api": 1}
    finally:
        stop.set()
        if running is not None:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
        await agent.aclose()
