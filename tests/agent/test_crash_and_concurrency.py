"""Crash recovery and concurrency with real processes: kill -9 mid-send, two dispatchers."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from poppy_tui.agent.keys import KEY_STORAGE_ENV
from poppy_tui.agent.store import Status

from tests.waiting import wait_until

from .company_app import is_api_approval

CHILD = Path(__file__).with_name("child_agent.py")
REPO = Path(__file__).resolve().parents[2]
EXCHANGE = "/api/orders/ord_7Hk2/exchanges"
BODY = {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"}


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env[KEY_STORAGE_ENV] = "file"  # the key must outlive the process, like a real keyring entry
    return env


def spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(CHILD), *args],
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def approved_exchange(agent, shop):
    """Ask the Company for the exchange and approve the operation it returns (grace 0)."""
    company = await agent.add_company(shop.base_url)
    result = await agent.call_api(company, "POST", EXCHANGE, BODY)
    op = agent.store.get_operation(result.operation_row)
    agent.approve(op.id, op.current.id)
    return op


@pytest.mark.slow
async def test_kill_9_mid_send_then_resume_performs_exactly_once(
    make_agent, start, paths, monkeypatch
):
    shop = start("perform_seconds=2.5")
    child = spawn("ask-approve-send", str(paths.config_dir), str(paths.data_dir), shop.base_url)
    try:
        await wait_until(
            lambda: shop.requests(is_api_approval),
            timeout=30,
            step=0.01,
            describe="the approval to reach the Company",
        )
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(10)
    assert child.returncode == -signal.SIGKILL, child.stderr.read()
    assert "finished" not in child.stdout.read()

    monkeypatch.setenv(KEY_STORAGE_ENV, "file")
    agent = make_agent(lease_seconds=2.0)
    [row] = agent.store.list_operations()
    op = agent.store.get_operation(row.id)
    assert (
        op.status == Status.SENDING
    )  # the decision and the attempt were committed before the send
    [attempt] = agent.store.attempts(op.id)
    assert attempt.finished_at is None

    done = await agent.wait_for_outcome(op.id, timeout=40)
    assert done.status == Status.PERFORMED
    assert shop.performed("exc_5Rt2") == 1
    attempts = agent.store.attempts(op.id)
    assert attempts[0].outcome == "interrupted" and attempts[-1].outcome == "performed"
    sent = shop.requests(is_api_approval)
    assert len({r.approval for r in sent}) == 1
    assert (
        len({r.headers["idempotency-key"] for r in sent}) == 1
    )  # the approval's own key, every time
    assert len({r.body for r in sent}) == 1


@pytest.mark.slow
async def test_two_dispatcher_processes_send_each_operation_once(
    make_agent, shop, paths, monkeypatch, tmp_path
):
    monkeypatch.setenv(KEY_STORAGE_ENV, "file")
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    rows = []
    for path, body in ((EXCHANGE, BODY), ("/api/subscriptions/sub_6Tc1/cancel", {})):
        result = await agent.call_api(company, "POST", path, body)
        op = agent.store.get_operation(result.operation_row)
        agent.store.approve(op.id, op.current.id, grace_seconds=0)
        rows.append(op)
    go = tmp_path / "go"
    children = [
        spawn("dispatch", str(paths.config_dir), str(paths.data_dir), str(go)) for _ in range(2)
    ]
    # Both have opened the store and wait for the go file: then they start at once.
    await wait_until(
        lambda: len(list(tmp_path.glob("go.ready.*"))) == 2,
        timeout=60,
        describe="both dispatchers to be ready",
    )
    go.touch()
    outputs = []
    for child in children:
        out, err = await asyncio.to_thread(child.communicate, timeout=60)
        assert child.returncode == 0, err
        outputs.append(out)
    for op in rows:
        record = agent.store.get_operation(op.id)
        assert record.status == Status.PERFORMED, record.outcome_detail
        assert shop.performed(op.operation_id) == 1
        assert len(agent.store.attempts(op.id)) == 1
    assert len(shop.requests(is_api_approval)) == 2  # one send per operation, from one process each
    handled = sorted(int(o.split()[1]) for o in outputs)
    assert sum(handled) == 2


async def test_approved_before_a_restart_is_sent_by_the_next_agent(make_agent, shop, paths):
    first = make_agent(grace_seconds=0.3)
    company = await first.add_company(shop.base_url)
    result = await first.call_api(company, "POST", EXCHANGE, BODY)
    op = first.store.get_operation(result.operation_row)
    first.approve(op.id, op.current.id)
    declined = await first.call_api(company, "POST", "/api/subscriptions/sub_6Tc1/cancel", {})
    first.decline(
        declined.operation_row, first.store.get_operation(declined.operation_row).current.id
    )
    await first.aclose()  # the process stops before the grace period ends: nothing was sent

    assert shop.requests(is_api_approval) == []
    second = make_agent()
    done = await second.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and shop.performed("exc_5Rt2") == 1
    await second.dispatch_once()
    assert second.store.get_operation(declined.operation_row).status == Status.DECLINED
    assert len(shop.requests(is_api_approval)) == 1  # the declined one was never sent


async def test_a_settled_operation_is_never_sent_again_after_restart(make_agent, shop):
    first = make_agent()
    op = await approved_exchange(first, shop)
    assert (await first.wait_for_outcome(op.id, timeout=20)).status == Status.PERFORMED
    await first.aclose()
    second = make_agent()
    assert await second.dispatch_once() == 0
    assert await second.dispatch_once() == 0  # a second whole pass: still nothing
    assert len(shop.requests(is_api_approval)) == 1


async def test_a_live_lease_keeps_a_second_dispatcher_out(make_agent, start):
    shop = start("perform_seconds=1.5")
    one = make_agent(lease_seconds=1.0)
    two = make_agent(lease_seconds=1.0)
    op = await approved_exchange(one, shop)
    sending = asyncio.create_task(one.dispatch_once())
    await wait_until(
        lambda: one.store.get_operation(op.id).status == Status.SENDING,
        step=0.01,
        describe="the first dispatcher to start sending",
    )
    # The send (1.5 s) outlasts the lease (1 s); the heartbeat keeps renewing it, so the other
    # never claims it, however often it tries until the send is over.
    tries = 0

    async def the_other_tried_until_the_send_ended() -> bool:
        nonlocal tries
        if sending.done():
            return True
        assert await two.dispatch_once() == 0
        tries += 1
        return False

    await wait_until(the_other_tried_until_the_send_ended, timeout=30, describe="the send to end")
    assert tries > 1
    assert await sending == 1
    assert one.store.get_operation(op.id).status == Status.PERFORMED
    assert len(shop.requests(is_api_approval)) == 1


async def test_losing_the_lease_stops_the_send_under_way(make_agent, start):
    """Another dispatcher took the operation over (our lease had lapsed): the heartbeat notices
    and our send is stopped at once, its attempt left unfinished (in doubt) for the new holder."""
    shop = start("perform_seconds=3")
    one = make_agent(lease_seconds=0.6)
    op = await approved_exchange(one, shop)
    sending = asyncio.create_task(one.dispatch_once())
    await wait_until(
        lambda: shop.requests(is_api_approval), step=0.01, describe="the approval sent"
    )
    with one.store._transaction() as db:  # what a claim by another dispatcher leaves behind
        db.execute("UPDATE operations SET lease_owner='someone-else' WHERE id=?", (op.id,))
    assert await asyncio.wait_for(sending, 5) == 1
    # Stopped by the next heartbeat, not by the end of the 3 s perform: the Company is still at
    # it (what the clock would say, told by the Company instead of by a load-sensitive bound).
    assert shop.context.desk.in_progress(op.operation_id) and shop.performed(op.operation_id) == 0
    (attempt,) = one.store.attempts(op.id)
    assert attempt.finished_at is None  # the next holder marks it interrupted and resends
    assert one.store.get_operation(op.id).status == Status.SENDING


async def test_stopping_the_pass_mid_send_stops_it_and_leaves_the_attempt_in_doubt(
    make_agent, start
):
    """The caller cancels dispatch_once while the only due operation's request is out (it is
    sent from the pass's own task): the cancellation reaches the caller, as it must (quitting,
    ^C), and is not mistaken for a lost lease; the attempt stays unfinished, in doubt."""
    shop = start("perform_seconds=3")
    one = make_agent()
    op = await approved_exchange(one, shop)
    sending = asyncio.create_task(one.dispatch_once())
    await wait_until(
        lambda: shop.requests(is_api_approval), step=0.01, describe="the approval sent"
    )
    sending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sending
    (attempt,) = one.store.attempts(op.id)
    assert attempt.finished_at is None
    assert one.store.get_operation(op.id).status == Status.SENDING


async def test_an_approval_that_expired_unsent_is_recorded_expired_and_never_sent(
    make_agent, shop, monkeypatch
):
    """Its terms expired after the approval and before any send: the pass claims nothing,
    records it as expired, and nothing reaches the Company."""
    from datetime import timedelta

    from poppy_tui.agent import dispatcher
    from poppy_tui.agent.store import connection, dispatch

    agent = make_agent()
    op = await approved_exchange(agent, shop)
    later = agent.store.get_operation(op.id).current.expires_at + timedelta(seconds=1)
    for module in (connection, dispatch, dispatcher):  # the clock of the claim, expiry and sender
        monkeypatch.setattr(module, "now_utc", lambda: later)
    assert await agent.dispatch_once() == 0
    assert agent.store.get_operation(op.id).status == Status.EXPIRED
    assert not shop.requests(is_api_approval)
