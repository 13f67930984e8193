"""Approvals that can't be signed (no usable keyring): refused at approve, never sent as
'unknown', kept and sent once the key works (docs/reliability.md, "The signing key"; conformance
row A40). Real keyring backends: the in-memory one (conftest) and keyring's own fail backend;
the strict Company on loopback."""

from __future__ import annotations


import keyring
import keyring.backends.fail
import pytest

from poppy_tui.agent.agent import ApprovalUnsignable
from poppy_tui.agent.keys import KEY_STORAGE_ENV
from poppy_tui.agent.store import Status


async def pending_cancel(agent, strict) -> int:
    company = await agent.add_company(strict.base_url)
    first = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    assert first.outcome == "operation"
    return first.operation_row


async def test_approve_is_refused_with_the_fix_when_nothing_can_sign(
    make_agent, strict, memory_keyring
):
    agent = make_agent()
    row = await pending_cancel(agent, strict)
    op = agent.store.get_operation(row)
    keyring.set_keyring(keyring.backends.fail.Keyring())
    fresh = make_agent()  # another process: its key was never loaded
    with pytest.raises(ApprovalUnsignable) as caught:
        fresh.approve(op.id, op.current.id)
    message = str(caught.value)
    assert "nothing was approved" in message and f"{KEY_STORAGE_ENV}=file" in message
    assert fresh.store.get_operation(row).status == Status.PENDING
    assert fresh.store.decisions(row) == []
    assert fresh.startup_signing_problem() is not None
    keyring.set_keyring(memory_keyring)
    assert fresh.startup_signing_problem() is None


async def test_an_approval_that_cannot_be_signed_is_not_sent_and_not_unknown(
    make_agent, strict, memory_keyring
):
    agent = make_agent()
    row = await pending_cancel(agent, strict)
    op = agent.store.get_operation(row)
    agent.approve(op.id, op.current.id)  # signed and approved here; sent by another process
    keyring.set_keyring(keyring.backends.fail.Keyring())
    sender = make_agent()
    assert await sender.dispatch_once() == 1
    after = sender.store.get_operation(row)
    assert after.status == Status.APPROVED  # the approval is kept
    assert sender.store.attempts(row) == []  # nothing left the machine: no attempt, no "unknown"
    assert after.outcome_detail.startswith("not sent:") and "keyring" in after.outcome_detail
    assert "not_sent" in [e.kind for e in sender.store.events(row)]
    assert strict.state.perform_count == {}
    # The key works again: the same approval is sent once it is due.
    keyring.set_keyring(memory_keyring)
    retry = make_agent()
    with retry.store._write() as db:  # make it due now rather than waiting 30 s
        db.execute(
            "UPDATE operations SET send_after=? WHERE id=?", ("2000-01-01T00:00:00.000000Z", row)
        )
    done = await retry.wait_for_outcome(row, timeout=30)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert [a.outcome for a in retry.store.attempts(row)] == ["performed"]


async def test_finding_out_without_a_key_sends_nothing_and_says_why(
    make_agent, strict, memory_keyring
):
    strict.state.error_after_perform, strict.state.error_after_perform_times = 500, 10_000
    agent = make_agent(retry_window_seconds=0.3)
    row = await pending_cancel(agent, strict)
    op = agent.store.get_operation(row)
    agent.approve(op.id, op.current.id)
    assert (await agent.wait_for_outcome(row, timeout=30)).status == Status.OUTCOME_UNKNOWN
    sent = len(agent.store.attempts(row))
    keyring.set_keyring(keyring.backends.fail.Keyring())
    prober = make_agent()
    with prober.store._write() as db:
        db.execute(
            "UPDATE operations SET next_attempt_at=? WHERE id=?",
            ("2000-01-01T00:00:00.000000Z", row),
        )
    await prober.dispatch_once()
    after = prober.store.get_operation(row)
    assert after.status == Status.OUTCOME_UNKNOWN and len(prober.store.attempts(row)) == sent
    assert "can't look now" in after.outcome_detail and after.next_attempt_at > "2001"
