"""Sending many approvals (docs/reliability.md, "Sending many approvals"; the sending-rate target
of docs/benchmarks.md): bounded concurrency per Company, and attempts committed in groups, each
group on disk before any of its requests leaves. Against the bulk Company
(tests/companies/bulk_company.py, written from the spec alone), on loopback.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status, Store
from tests.companies.bulk_company import BulkCompany
from tests.waiting import wait_until


@pytest.fixture
def bulk():
    company = BulkCompany()
    yield company
    company.stop()


async def approved_operations(agent: Agent, base_url: str, count: int) -> list[int]:
    company = await agent.add_company(base_url)
    rows = []
    for item in range(count):
        result = await agent.call_api(company, "POST", f"/items/{item}/cancel", {})
        assert result.outcome == "operation", result
        op = agent.store.get_operation(result.operation_row)
        agent.approve(op.id, op.current.id)
        rows.append(op.id)
    return rows


def approve_then_dispatch(
    agent: Agent, base_url: str, count: int, passes: int = 1, until_due: bool = False
) -> tuple[list[int], list[int]]:
    """`count` operations approved, then `passes` dispatch passes, each after the last once the
    leases it left have all lapsed when `until_due`; the rows, and how many each pass sent. The
    agent is closed after."""

    async def work() -> tuple[list[int], list[int]]:
        try:
            rows = await approved_operations(agent, base_url, count)
            sent = []
            for n in range(passes):
                if n and until_due:
                    # Every lease the last pass left has lapsed (each was renewed on its own
                    # timer, so they end at different moments), not only the first.
                    await wait_until(
                        lambda: all(lapsed(agent, row) for row in rows),
                        timeout=30,
                        describe="the leases left by the last pass lapsed",
                    )
                sent.append(await agent.dispatch_once())
            return rows, sent
        finally:
            await agent.aclose()

    return asyncio.run(work())


def lapsed(agent: Agent, row: int) -> bool:
    from poppy_tui.agent import clock

    lease_until = agent.store.lifecycle_facts(row).lease_until
    return lease_until is None or lease_until <= clock.now_utc()


def send_all_in_one_pass(agent: Agent, base_url: str, count: int) -> list[int]:
    rows, (sent,) = approve_then_dispatch(agent, base_url, count)
    assert sent == len(rows)
    return rows


def failing_once(real, error: Exception):
    """`real`, except that its first call raises `error` (a disk that failed once)."""
    left = [1]

    def call(*args):
        if left[0]:
            left[0] -= 1
            raise error
        return real(*args)

    return call


def open_agent(tmp_path) -> Agent:
    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    return Agent.open(paths, Config(key_storage="file", grace_seconds=0))


def test_many_approvals_go_a_few_at_a_time_each_attempt_on_disk_before_it_leaves(tmp_path, bulk):
    agent = open_agent(tmp_path)
    per_company = agent.dispatcher.per_company
    database = agent.store.path
    unrecorded: list[str] = []
    lock = threading.Lock()

    def check_recorded(headers: dict[str, str]) -> None:
        # Read by another connection, as a process started after a crash would: only what was
        # committed is seen. The attempt with this request's key must be there, unfinished.
        key = headers["idempotency-key"]
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
            found = db.execute(
                "SELECT count(*) FROM attempts WHERE idempotency_key=? AND finished_at IS NULL",
                (key,),
            ).fetchone()[0]
        if found != 1:
            with lock:
                unrecorded.append(key)

    bulk.state.on_approval = check_recorded
    bulk.state.approval_delay = 0.05  # long enough that sends overlap, so the bound is reached
    groups: list[int] = []
    start_attempts = agent.store.start_attempts

    def counted(rows, owner, *durability):
        groups.append(len(rows))
        return start_attempts(rows, owner, *durability)

    agent.store.start_attempts = counted  # the real method, counted

    rows = send_all_in_one_pass(agent, bulk.base_url, 3 * per_company + 2)
    assert unrecorded == []
    assert 1 < bulk.state.most_at_once <= per_company
    assert sum(groups) == len(rows) and max(groups) > 1 and len(groups) < len(rows)
    assert all(count == 1 for count in bulk.state.perform_count.values()) and len(
        bulk.state.perform_count
    ) == len(rows)
    agent = open_agent(tmp_path)
    try:
        assert {agent.store.get_operation(r).status for r in rows} == {Status.PERFORMED}
    finally:
        asyncio.run(agent.aclose())


def test_an_operation_that_changed_before_its_group_commits_is_not_sent_and_the_others_are(
    tmp_path, bulk
):
    agent = open_agent(tmp_path)

    async def work() -> tuple[list[int], int]:
        try:
            rows = await approved_operations(agent, bulk.base_url, 3)
            declined = rows[1]
            real = agent.store.start_attempts

            def decline_first(ops, owner, *durability):
                # The person declines one of them between its claim and its attempt: that one
                # gets a StateError and nothing is recorded for it; the group goes on.
                agent.store.start_attempts = real
                agent.store._db.execute(
                    "UPDATE operations SET status=? WHERE id=?", (Status.DECLINED, declined)
                )
                return real(ops, owner, *durability)

            agent.store.start_attempts = decline_first
            await agent.dispatch_once()
            return rows, declined
        finally:
            await agent.aclose()

    rows, declined = asyncio.run(work())
    assert sorted(bulk.state.perform_count) == sorted(f"cxl_{i}" for i in (0, 2))
    agent = open_agent(tmp_path)
    try:
        assert agent.store.attempts(declined) == []
        assert [agent.store.get_operation(r).status for r in rows] == [
            Status.PERFORMED,
            Status.DECLINED,
            Status.PERFORMED,
        ]
    finally:
        asyncio.run(agent.aclose())


def test_each_group_is_fsynced_before_any_of_its_requests_leaves_while_the_loop_goes_on(
    tmp_path, bulk
):
    """The attempts are committed without an fsync of their own and fsynced in a worker thread
    (a pipeline: the loop reads answers meanwhile). A request that reached the Company before the
    fsync covering its attempt returned would be an attempt a power cut could lose."""
    agent = open_agent(tmp_path)
    store = agent.store
    commit_of_key: dict[str, int] = {}
    durable = [0]
    early: list[str] = []
    lock = threading.Lock()
    real_start, real_take, real_sync = store.start_attempts, store.take_awaited, store.sync_through
    started: list = []

    def start_attempts(rows, owner, *durability):
        results = real_start(rows, owner, *durability)
        started.append(results)
        return results

    def take_awaited():
        commit = real_take()
        for result in started.pop():
            if not isinstance(result, Exception):
                with lock:
                    commit_of_key[result.idempotency_key] = commit
        return commit

    def sync_through(commit):
        real_sync(commit)
        with lock:
            durable[0] = max(durable[0], commit)

    store.start_attempts, store.take_awaited, store.sync_through = (
        start_attempts,
        take_awaited,
        sync_through,
    )

    def check_durable(headers: dict[str, str]) -> None:
        key = headers["idempotency-key"].strip('"')
        with lock:
            if commit_of_key.get(key, 10**9) > durable[0]:
                early.append(key)

    bulk.state.on_approval = check_durable
    bulk.state.approval_delay = 0.02

    rows = send_all_in_one_pass(agent, bulk.base_url, 2 * agent.dispatcher.per_company + 3)
    assert len(commit_of_key) == len(rows)
    assert early == []
    assert all(count == 1 for count in bulk.state.perform_count.values()) and len(
        bulk.state.perform_count
    ) == len(rows)


def test_answers_that_arrive_together_are_settled_in_one_commit_each_kept_with_its_attempt(
    tmp_path, bulk
):
    agent = open_agent(tmp_path)
    per_company = agent.dispatcher.per_company
    bulk.state.approval_delay = 0.05  # sends overlap, so their answers arrive together
    settle_groups: list[int] = []
    settle_many = agent.store.settle_many

    def counted(settles):
        settle_groups.append(len(settles))
        return settle_many(settles)

    agent.store.settle_many = counted  # the real method, counted

    rows = send_all_in_one_pass(agent, bulk.base_url, 3 * per_company)
    assert sum(settle_groups) == len(rows)
    assert max(settle_groups) > 1 and len(settle_groups) < len(rows)
    with Store.open(agent.store.path) as again:  # what is on disk, read by another connection
        for row in rows:
            assert again.get_operation(row).status == Status.PERFORMED
            (attempt,) = again.attempts(row)
            assert attempt.outcome == "performed" and attempt.finished_at is not None
            assert [e.kind for e in again.events(row)][-1] == "performed"
        leased = again._db.execute(
            "SELECT count(*) FROM operations WHERE lease_owner IS NOT NULL"
        ).fetchone()[0]
        assert leased == 0


@pytest.mark.parametrize("count", [1, 12])
def test_a_group_whose_fsync_fails_sends_nothing_and_stays_in_doubt(tmp_path, bulk, count):
    """Alone (fsynced on the loop: nothing else to overlap it with) or among others (fsynced in a
    worker thread), a group of attempts whose fsync failed never reaches the Company."""
    from poppy_tui.agent.store import StoreError

    agent = open_agent(tmp_path)
    reached: list[str] = []
    bulk.state.on_approval = lambda headers: reached.append(headers["idempotency-key"].strip('"'))
    bulk.state.approval_delay = 0.02
    agent.store.sync_through = failing_once(
        agent.store.sync_through, StoreError("could not make the database durable (disk I/O error)")
    )

    rows, _ = approve_then_dispatch(agent, bulk.base_url, count)
    with Store.open(agent.store.path) as again:
        unsent = [row for row in rows if again.get_operation(row).status == Status.SENDING]
        assert unsent  # the first group's operations: each with one unfinished attempt
        for row in unsent:
            (attempt,) = again.attempts(row)
            assert attempt.finished_at is None and attempt.idempotency_key not in reached
        sent = [row for row in rows if row not in unsent]
        assert all(again.get_operation(row).status == Status.PERFORMED for row in sent)
    assert len(reached) == len(rows) - len(unsent)


def test_an_approval_recorded_in_the_same_process_wakes_the_running_dispatcher(tmp_path, bulk):
    """The running dispatcher's idle wait is an hour here: only the wake can start the send."""
    agent = open_agent(tmp_path)

    async def work() -> Status:
        try:
            company = await agent.add_company(bulk.base_url)
            result = await agent.call_api(company, "POST", "/items/1/cancel", {})
            stop = asyncio.Event()
            first_pass_over = asyncio.Event()
            dispatch_once = agent.dispatcher.dispatch_once

            async def counted_pass() -> int:
                sent = await dispatch_once()
                first_pass_over.set()  # run() goes on to its idle wait without yielding first
                return sent

            agent.dispatcher.dispatch_once = counted_pass  # type: ignore[method-assign]
            runner = asyncio.create_task(agent.dispatcher.run(stop, idle_seconds=3600))
            # Its first pass (nothing approved yet) is over: it waits, for an hour unless woken.
            await asyncio.wait_for(first_pass_over.wait(), 30)
            await asyncio.sleep(0)
            op = agent.store.get_operation(result.operation_row)
            agent.approve(op.id, op.current.id)

            try:
                # The timeout guards against hanging; it is not a speed test.
                return await wait_until(
                    lambda: (
                        (status := agent.store.get_operation(op.id).status)
                        not in (Status.APPROVED, Status.SENDING)
                        and status
                    ),
                    timeout=60,
                    describe="the approval settled",
                )
            finally:
                stop.set()
                await runner
        finally:
            await agent.aclose()

    assert asyncio.run(work()) == Status.PERFORMED
    assert list(bulk.state.perform_count.values()) == [1]  # performed once


def test_outcomes_that_could_not_be_recorded_are_resent_with_the_same_approval(tmp_path, bulk):
    """A group of outcomes whose commit failed leaves its attempts unfinished (in doubt): once the
    leases lapse, the same approvals go again with the same keys, and the Company's replays
    settle them; each action performed once."""
    from poppy_tui.agent.store import StoreError

    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    agent = Agent.open(paths, Config(key_storage="file", grace_seconds=0), lease_seconds=0.3)
    keys: list[str] = []
    bulk.state.on_approval = lambda headers: keys.append(headers["idempotency-key"].strip('"'))
    agent.store.settle_many = failing_once(
        agent.store.settle_many,
        StoreError("could not save to the database (disk I/O error); nothing was changed"),
    )

    # Between the two passes the leases of the unrecorded ones lapse.
    rows, _ = approve_then_dispatch(agent, bulk.base_url, 3, passes=2, until_due=True)
    with Store.open(agent.store.path) as again:
        assert all(again.get_operation(row).status == Status.PERFORMED for row in rows)
        resent = [row for row in rows if len(again.attempts(row)) == 2]
        assert resent  # the first group's outcomes were lost, so those approvals went twice
        for row in resent:
            first, second = again.attempts(row)
            assert first.idempotency_key == second.idempotency_key and second.outcome == "performed"
    assert list(bulk.state.perform_count.values()) == [1] * len(rows)


def test_headless_sending_reports_an_approval_made_between_its_read_and_the_claim(tmp_path, bulk):
    """`poppy-tui send --watch` reads what is in flight, then dispatches. An approval recorded in
    that gap (by the TUI, another process) is claimed, sent and settled within the same pass:
    it was never seen in flight, yet it must be reported as sent."""
    from poppy_tui.agent.headless import send_approved

    agent = open_agent(tmp_path)

    async def work() -> tuple[list, int]:
        try:
            company = await agent.add_company(bulk.base_url)
            result = await agent.call_api(company, "POST", "/items/7/cancel", {})
            op = agent.store.get_operation(result.operation_row)
            real_dispatch = agent.dispatch_once

            async def approved_in_the_gap() -> int:
                if agent.store.get_operation(op.id).status == Status.PENDING:
                    agent.approve(
                        op.id, op.current.id
                    )  # after send_approved's read, before the claim
                return await real_dispatch()

            agent.dispatch_once = approved_in_the_gap
            stop = asyncio.Event()
            reported: list = []

            def said(record) -> None:
                reported.append(record)
                stop.set()

            watching = asyncio.create_task(
                send_approved(agent, watch=True, stop=stop, on_settled=said)
            )
            await asyncio.wait_for(stop.wait(), 20)
            settled = await watching
            return settled, op.id
        finally:
            await agent.aclose()

    settled, row = asyncio.run(work())
    assert [(r.id, r.status) for r in settled] == [(row, Status.PERFORMED)]


def write_transactions(statements: list[str]) -> int:
    """How many write transactions these statements (sqlite3's trace) made: each BEGIN … COMMIT,
    and each UPDATE or INSERT outside one (a transaction of its own)."""
    count, inside = 0, False
    for sql in statements:
        verb = sql.split()[0].upper()
        if verb == "BEGIN":
            count, inside = count + 1, True
        elif verb in ("COMMIT", "ROLLBACK"):
            inside = False
        elif verb in ("UPDATE", "INSERT") and not inside:
            count += 1
    return count


def test_an_approval_due_alone_has_its_attempt_committed_with_its_claim_and_fsynced_before_it_leaves(
    tmp_path, bulk
):
    """The only approval due in a pass: its first attempt is written in the claim's own
    transaction (no start_attempts of its own), and that commit is fsynced before the request
    reaches the Company, which sees the attempt from another connection."""
    agent = open_agent(tmp_path)
    store = agent.store
    database = store.path
    seen: list[
        tuple[int, bool]
    ] = []  # at each approval's arrival: committed attempts, and fsynced?
    durable = [0]
    awaited = [0]
    real_take, real_sync, real_start = store.take_awaited, store.sync_through, store.start_attempts
    grouped: list[list[int]] = []

    def take_awaited():
        awaited[0] = real_take()
        return awaited[0]

    def sync_through(commit):
        real_sync(commit)
        durable[0] = max(durable[0], commit)

    def start_attempts(rows, owner, *durability):
        grouped.append(list(rows))
        return real_start(rows, owner, *durability)

    store.take_awaited, store.sync_through, store.start_attempts = (
        take_awaited,
        sync_through,
        start_attempts,
    )

    def check(headers: dict[str, str]) -> None:
        key = headers["idempotency-key"].strip('"')
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
            found = db.execute(
                "SELECT count(*) FROM attempts WHERE idempotency_key=? AND finished_at IS NULL",
                (key,),
            ).fetchone()[0]
        seen.append((found, 0 < awaited[0] <= durable[0]))

    bulk.state.on_approval = check
    writes: list[str] = []

    async def work() -> list[int]:
        try:
            rows = await approved_operations(agent, bulk.base_url, 1)
            store._db._connection.set_trace_callback(writes.append)
            assert await agent.dispatch_once() == 1
            store._db._connection.set_trace_callback(None)
            return rows
        finally:
            await agent.aclose()

    (row,) = asyncio.run(work())
    assert seen == [(1, True)]
    assert grouped == []  # the attempt came with the claim
    # One transaction for claim and attempt, one for the outcome: nothing else was written.
    assert write_transactions(writes) == 2
    with Store.open(database) as again:
        assert again.get_operation(row).status == Status.PERFORMED
        (attempt,) = again.attempts(row)
        assert attempt.number == 1 and attempt.outcome == "performed"
        assert [e.kind for e in again.events(row)][-2:] == ["attempt", "performed"]


def test_a_pass_with_nothing_due_never_loads_the_signing_key(tmp_path):
    """Whether a lone attempt may start with its claim is asked of the key already loaded, never
    by loading it: an agent that only browses (the TUI's dispatcher passes, every half second)
    leaves the keyring alone."""
    agent = open_agent(tmp_path)

    async def work() -> None:
        try:
            assert await agent.dispatch_once() == 0
            assert await agent.dispatch_once() == 0
        finally:
            await agent.aclose()

    asyncio.run(work())
    assert not agent.signing_key_loaded()
    assert agent._identity is None


def test_sends_made_together_sign_their_own_session_jwts_and_a_lone_one_leaves_a_spare(
    tmp_path, bulk, monkeypatch
):
    """Spares (sessions.py) are for a request the agent makes alone: between the sends of a group
    the loop is never idle, so there each send signs its own JWT and none is signed ahead."""
    from poppy_tui.agent import sessions as sessions_module

    signed = []
    real = sessions_module.session_claims
    monkeypatch.setattr(
        sessions_module, "session_claims", lambda *a, **k: signed.append(1) or real(*a, **k)
    )
    agent = open_agent(tmp_path)

    async def work() -> tuple[int, int, bool]:
        try:
            await approved_operations(agent, bulk.base_url, 6)
            await agent.settle_resource_reads(
                10
            )  # the reads of the arriving operations sign their own
            agent.sessions._spares.clear()  # the first requests' spare, made while the last one waited
            before = len(signed)
            sent = await agent.dispatch_once()
            group = len(signed) - before
            company = agent.find_company(bulk.base_url)
            result = await agent.call_api(company, "POST", "/items/100/cancel", {})
            await agent.settle_resource_reads(10)
            agent.approve(result.operation_row, result.revision_row)
            agent.sessions._spares.clear()
            assert await agent.dispatch_once() == 1
            return sent, group, bool(agent.sessions._spares)
        finally:
            await agent.aclose()

    sent, group, spare_after_lone = asyncio.run(work())
    assert sent == 6 and group == 6  # one JWT per send, none signed ahead
    assert spare_after_lone  # the lone send's wait signed the next request's
