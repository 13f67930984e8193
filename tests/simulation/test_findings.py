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


# ---- the person's word that the sign-in now is the operation's account (`u`) ---------------------


def test_a_held_approval_goes_with_the_sign_in_the_person_vouched_for(sim_company):
    with replay(sim_company, grace=0.0) as sim:
        sim.sign_in("bob", False)  # Device Sign-In: the account is not named
        sim.ask("api", "hold", "it1")  # made in the sign-in's instant: not shown to be its
        sim.approve(1)
        sim.time_passes("a second")
        assert sim.machine._held_for_the_word() == [1]
        sim.confirm_account(1)
        sim.time_passes("a second")
        assert sim.agent.store.get_operation(1).status == Status.PERFORMED
        assert [got.token for got in sim.world.received] == [sim.driver.vault.token]


def test_the_word_for_one_sign_in_does_not_hold_for_another_stamped_the_same(sim_company):
    """The person vouched for bob's sign-in; alice signs in, by a sign-in that names no account,
    in the same instant by the clock (the store stamps a sign-in to the microsecond: on a clock
    set back, or a coarse one, two sign-ins can share a stamp). The word was for bob's sign-in:
    bob's approval must wait again, not go with alice's token."""
    with replay(sim_company, grace=0.0) as sim:
        sim.sign_in("bob", False)
        sim.ask("api", "hold", "it1")
        sim.approve(1)
        sim.confirm_account(1)  # rightly: the sign-in now is bob's
        sim.sign_in("alice", False)  # vouched-sign-in-stamp: still taken for bob's
        sim.time_passes("a second")  # (and then sent with alice's token)
        assert sim.agent.store.get_operation(1).status == Status.SENDING
        assert sim.world.received == []


def test_the_word_for_one_sign_in_does_not_hold_for_a_later_one(sim_company):
    """The neighbour: the same, with time between the sign-ins: held again, sent once the person
    says so of the new sign-in, with its token."""
    with replay(sim_company, grace=0.0, window=300.0, script=[Directive("busy")]) as sim:
        sim.sign_in("bob", False)
        sim.ask("api", "hold", "it1")
        sim.approve(1)
        sim.confirm_account(1)
        sim.time_passes("a second")  # sent with bob's token; the Company is busy
        sim.sign_in("bob", False)  # signed in again, as bob, naming no account
        sim.time_passes("a second")
        assert sim.machine._held_for_the_word() == [1]
        sim.sign_in("alice", False)
        sim.time_passes("a resend's wait")
        assert sim.machine._held_for_the_word() == [1]  # never sent with alice's token
        sim.sign_in("bob", False)
        sim.time_passes("a second")
        sim.confirm_account(1)
        sim.time_passes("a second")
        assert sim.agent.store.get_operation(1).status == Status.PERFORMED
        assert [got.user for got in sim.world.received] == ["bob", "bob"]


# ---- an account's operation, returned again to a sign-in as another account ------------------------


def test_an_accounts_operation_returned_to_another_account_keeps_its_account(sim_company):
    """A Company that gives one operation_id to every hold request (a bug Ops 3 forbids) returns
    alice's approved operation, the same revision, to bob's request: poppy-tui takes it for
    bob's (store/operations.py record_operation sets its account to the request's sign-in's) and
    sends alice's approval with bob's token. It must stay alice's: held for a sign-in as her."""
    script = [Directive("invalid_token")]  # the Company revokes alice's token
    with replay(sim_company, grace=0.0, expiry=120.0, reuse_ids=True, script=script) as sim:
        sim.sign_in("alice", True)
        sim.ask("api", "hold", "it1")
        sim.approve(1)
        sim.time_passes("a second")  # sent; alice's token refused: it waits for sign-in
        sim.sign_in("bob", True)
        sim.ask("api", "hold", "it1")  # the same operation_id and revision, to bob's request
        sim.time_passes("a second")  # reassigned-account: sent with bob's token
        op = sim.agent.store.get_operation(1)
        assert op.account == "alice" and op.status == Status.SENDING and op.waiting_sign_in


def test_an_accounts_operation_returned_again_to_its_own_account_is_sent_with_its_token(
    sim_company,
):
    """The neighbour: the same, with alice signing in again and asking again: the approval goes
    with her new token."""
    script = [Directive("invalid_token")]
    with replay(sim_company, grace=0.0, expiry=120.0, reuse_ids=True, script=script) as sim:
        sim.sign_in("alice", True)
        sim.ask("api", "hold", "it1")
        sim.approve(1)
        sim.time_passes("a second")
        sim.sign_in("alice", True)
        sim.ask("api", "hold", "it1")
        sim.time_passes("a second")
        assert sim.agent.store.get_operation(1).status == Status.PERFORMED
        assert [got.user for got in sim.world.received] == ["alice", "alice"]
