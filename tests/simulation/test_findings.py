"""What the lifecycle simulation found, each as a plain regression test: the minimal example
hypothesis printed, replayed step by step against the simulated Company (replay.py), with the
invariants checked after every step; and beside each, its neighbour that must keep working.

A finding still open (known_findings.py) is a strict xfail: the day it is fixed, the test passes,
XPASS fails the run, and whoever fixed it removes the marker here and the entry there.
"""

from __future__ import annotations

import pytest

from poppy_tui.agent.store import Status

from .known_findings import KNOWN_FINDINGS, broken_error
from .replay import replay
from .world import CONFIRMATION, Directive

pytestmark = pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")


def open_finding(key: str):
    """Strict xfail while `key` is open; the finding is not tolerated inside the test."""
    finding = KNOWN_FINDINGS[key]
    return pytest.mark.xfail(
        strict=True, raises=broken_error(key), reason=f"open: {key}, {finding.area}: {finding.what}"
    )


@pytest.fixture(autouse=True)
def findings_fail(monkeypatch):
    monkeypatch.setenv("POPPY_SIM_STRICT", "1")


# ---- A52 (fixed): the approval of new terms, given after the retry window, is sent ------------


def test_new_terms_approved_after_the_retry_window_are_sent(sim_company):
    with replay(sim_company, grace=0.0, window=60.0, script=[Directive("new_revision")]) as sim:
        sim.ask("api", "hold", "it1")
        sim.approve(1)
        sim.time_passes("a second")  # sent; the Company answers with new terms
        assert sim.agent.store.get_operation(1).status == Status.PENDING
        sim.time_passes("the retry window")  # the person takes longer than the window
        sim.approve(1)
        sim.time_passes("a second")
        sim.time_passes("a second")  # A52 (main's code): still approved, never sent
        assert sim.agent.store.get_operation(1).status == Status.PERFORMED


def test_new_terms_approved_within_the_retry_window_are_sent(sim_company):
    with replay(sim_company, grace=0.0, window=300.0, script=[Directive("new_revision")]) as sim:
        sim.ask("mcp", "hold", "it2")
        sim.approve(1)
        sim.time_passes("a second")
        sim.approve(1)
        sim.time_passes("a second")
        assert sim.agent.store.get_operation(1).status == Status.PERFORMED
        assert [got.answer for got in sim.world.received] == ["operation", "performed"]


# ---- A51: the same words in another conversation are another action ------------------------------


def test_the_same_words_in_another_conversation_are_not_held(sim_company):
    with replay(sim_company, grace=10.0) as sim:
        sim.ask("conversation", "hold", "it1")
        sim.ask("conversation", "hold", "it1")  # another conversation: another operation
        sim.approve(1)
        sim.approve(2)  # A51: held as "the same request ... could have it done twice"
        assert sim.agent.store.get_operation(2).status == Status.APPROVED


def test_the_confirmation_in_another_conversation_is_not_held(sim_company):
    """The audit's case: "Yes please, go ahead" in two conversations, each for its own action."""
    with replay(sim_company, grace=10.0) as sim:
        sim.ask("conversation", "order", "it1")  # signed out: the Company asks for sign-in first
        sim.ask("conversation", "order", "it2")
        sim.sign_in("alice", True)
        sim.say_again(1, CONFIRMATION)  # now the operation, for the words of the confirmation
        sim.say_again(2, CONFIRMATION)
        assert sorted(sim.machine.model.rows) == [1, 2]
        sim.approve(1)
        sim.approve(2)  # A51: held as the same request as the first
        assert sim.agent.store.get_operation(2).status == Status.APPROVED


def test_the_same_request_in_the_same_conversation_under_a_new_operation_id_is_held(sim_company):
    """The neighbour A51's fix must keep: in one conversation, the same words while the first
    operation is in doubt (a Company that mints an operation_id per request)."""
    with replay(sim_company, grace=10.0, mint_ids=True) as sim:
        sim.ask("conversation", "hold", "it1")
        sim.approve(1)
        sim.say_again(1, "Please hold it1")  # the same words again: a new operation_id
        rows = sorted(sim.machine.model.rows)
        assert len(rows) == 2
        sim.approve(rows[1])
        assert sim.agent.store.get_operation(rows[1]).status == Status.PENDING  # held


# ---- an account's approval, signed in as someone else by a sign-in that names no account -----------


def test_an_accounts_approval_is_not_sent_with_another_accounts_token(sim_company):
    with replay(sim_company, grace=0.0) as sim:
        sim.sign_in("bob", False)  # Device Sign-In: the account is not named
        sim.ask("api", "hold", "it1")
        sim.approve(1)
        sim.sign_in("alice", True)  # someone else signs in before it is sent
        sim.time_passes("a second")


def test_signed_in_as_another_named_account_the_approval_waits_for_its_own(sim_company):
    with replay(sim_company, grace=0.0) as sim:
        sim.sign_in("bob", True)
        sim.ask("mcp", "hold", "it1")
        sim.approve(1)
        sim.sign_in("alice", True)
        sim.time_passes("a second")
        op = sim.agent.store.get_operation(1)
        assert op.status == Status.SENDING and op.waiting_sign_in
        sim.sign_in("bob", True)
        sim.time_passes("a second")
        assert sim.agent.store.get_operation(1).status == Status.PERFORMED
        assert [got.user for got in sim.world.received] == ["bob"]
