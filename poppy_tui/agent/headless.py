"""Sending without the TUI: the dispatcher run until nothing approved is left (or for ever, as a
service). Used by `poppy-tui send` and by the TUI's "send now and wait" on quit.

It only sends what a person already approved; it never decides anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from poppy_tui.agent.store import OperationRecord, Status, Store

IN_FLIGHT = (Status.APPROVED, Status.SENDING)
# While idle, how often to look for something new to send (a grace period ending is woken sooner).
IDLE_SECONDS = 0.5
# While a pass runs, how often the store is read for a wait that began within it (send_waits).
WAIT_LOOK_SECONDS = 0.2

Settled = Callable[[OperationRecord], Awaitable[None] | None]
# Told of each wait as it begins: the operation, and agent/send_waits.Wait (why, until when).
Waiting = Callable[[OperationRecord, object], None]


def in_flight(store: Store) -> list[int]:
    """Operations approved and not yet settled: in their grace period, being sent, or waiting for sign-in."""
    return [row.id for row in store.list_operations(IN_FLIGHT, limit=10_000, newest_first=False)]


def waiting_for_sign_in(store: Store) -> list[int]:
    """Approvals kept until the person signs in (the Company answered them with a sign-in
    challenge): nothing is sent for them until then, however long a sender runs."""
    return [
        row.id
        for row in store.list_operations(IN_FLIGHT, limit=10_000, newest_first=False)
        if row.waiting_sign_in
    ]


async def send_approved(
    agent,
    *,
    watch: bool = False,
    stop: asyncio.Event | None = None,
    on_settled: Settled | None = None,
    on_wait: Waiting | None = None,
    never: frozenset[int] = frozenset(),
) -> list[OperationRecord]:
    """Dispatch until nothing approved is left but approvals waiting for sign-in (or, with
    `watch`, until `stop` is set). Returns every operation that left approved/sending meanwhile,
    in the order they did; those still waiting for sign-in are the caller's to report
    (waiting_for_sign_in): without `watch`, a run would otherwise wait until their terms expire.
    `never`: rows nothing can send (their Company is a demo's that has stopped), not waited for
    either. `on_wait` hears each wait as it begins (agent/send_waits.py)."""
    from poppy_tui.agent.clock import now_utc
    from poppy_tui.agent.send_waits import current_wait

    said: dict[int, tuple[object, ...]] = {}

    def tell_waits(rows: set[int]) -> None:
        if on_wait is None:
            return
        for row in sorted(rows - never):
            record = agent.store.get_operation(row)
            wait = current_wait(
                agent.store,
                record,
                now_utc(),
                agent.config.retry_window_seconds,
                agent.config.request_timeout_seconds,
            )
            if wait is not None and said.get(row) != wait.key:
                said[row] = wait.key
                on_wait(record, wait)

    async def tell_waits_while(rows: set[int]) -> None:
        # A pass may wait within itself (a short retry delay, the Company's answer): said as the
        # store shows it begins, not after the pass.
        while True:
            await asyncio.sleep(WAIT_LOOK_SECONDS)
            tell_waits(rows)

    stop = stop or asyncio.Event()
    agent.dispatcher.collect_settled()
    agent.dispatcher.take_settled()  # what it settled before this call is not this call's
    watched: set[int] = set(in_flight(agent.store))
    settled: list[OperationRecord] = []
    while not stop.is_set():
        # Read just before sending; the dispatcher's own settles cover what is approved after it.
        watched |= set(in_flight(agent.store))
        tell_waits(watched)
        looking = asyncio.create_task(tell_waits_while(watched)) if on_wait is not None else None
        try:
            await agent.dispatch_once()
        finally:
            if looking is not None:
                looking.cancel()
        now_in_flight = set(in_flight(agent.store))
        # What left approved/sending: the watched rows no longer in flight (expired, settled by
        # another process), and every row this dispatcher settled, even one approved after the
        # read above and claimed, sent and settled within this pass.
        left = (watched - now_in_flight) | (set(agent.dispatcher.take_settled()) - now_in_flight)
        for row in sorted(left):
            record = agent.store.get_operation(row)
            settled.append(record)
            if on_settled is not None:
                maybe = on_settled(record)
                if maybe is not None:
                    await maybe
        watched = now_in_flight  # approvals made meanwhile are sent too
        tell_waits(watched)
        if not watch and set(waiting_for_sign_in(agent.store)) | never >= watched:
            break  # nothing left that sending can finish: the rest waits for the person to sign in
        due = agent.dispatcher.next_due_in()
        pause = IDLE_SECONDS if due is None else min(IDLE_SECONDS, max(0.02, due))
        try:
            await asyncio.wait_for(stop.wait(), pause)
        except TimeoutError:
            pass
    return settled
