"""Waiting for an operation's outcome without the TUI (`--wait`, the MCP tools), and the
outcome as the caller of one request must read it."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from poppy_tui.agent.store.status import Status

if TYPE_CHECKING:
    from poppy_tui.agent.store import OperationRecord, Store

# Statuses wait_for_outcome returns on: the send is over, or the person said no.
SETTLED = frozenset(
    {
        Status.PERFORMED,
        Status.NOT_PERFORMED,
        Status.OUTCOME_UNKNOWN,
        Status.DECLINED,
        Status.EXPIRED,
    }
)
# How long a waiter sleeps between its passes at most (it wakes sooner when something is due).
PAUSE_SECONDS = 0.25


def outcome_for_request(store: Store, op: OperationRecord, request_id: int) -> OperationRecord:
    """The operation as the caller of one request sees it. When the Company reused the
    operation_id for a different request (which Ops §3 forbids) and the approved revision
    answered that other request, what was performed is not what this caller asked for: for them
    it is not performed, and the other request's answer is not theirs to print."""
    if op.approved_revision_id is None or op.status not in SETTLED:
        return op
    requests = {
        rev_id: (q_id, request) for rev_id, _, q_id, request in store.revision_requests(op.id)
    }
    approved = requests.get(op.approved_revision_id)
    if approved is None or approved[0] == request_id:
        return op
    try:
        mine, _, _ = store.get_request(request_id)
    except KeyError:
        return op
    # Here, not at the top: it loads the sanitiser (and regex), which `call` never needs.
    from poppy_tui.safety.request_reuse import describe_request, different_requests

    if not different_requests(mine, approved[1]):
        return op  # the same action through another request (another interface, say)
    return dataclasses.replace(
        op,
        status=Status.NOT_PERFORMED,
        outcome=None,
        outcome_detail=(
            f"the approval went with a different request that the Company gave the same operation_id "
            f"({describe_request(approved[1])}); your request ({describe_request(mine)}) was not performed "
            f"by it (the other request is {op.status.value})"
        ),
    )


async def wait_for_outcome(
    store: Store,
    dispatch_once: Callable[[], Awaitable[int]],
    next_due_in: Callable[[], float | None],
    operation_row: int,
    timeout: float | None,
) -> OperationRecord:
    """Returns once the operation is settled (SETTLED), or once a send ended with new terms to
    decide on or met a sign-in challenge, or at `timeout`; dispatches meanwhile."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    attempts_seen = len(store.attempts(operation_row))
    while True:
        op = store.get_operation(operation_row)
        if op.status in SETTLED:
            return op
        if op.status == Status.PENDING and len(store.attempts(operation_row)) > attempts_seen:
            return op  # a send answered with new terms: the person has to decide again
        if op.waiting_sign_in and len(store.attempts(operation_row)) > attempts_seen:
            return op  # a send met a sign-in challenge: the person has to sign in first
        if deadline is not None and loop.time() >= deadline:
            return op
        await dispatch_once()
        op = store.get_operation(operation_row)
        if op.status in SETTLED:
            return op
        due = next_due_in()
        pause = PAUSE_SECONDS if due is None else min(PAUSE_SECONDS, max(0.02, due))
        if deadline is not None:
            pause = min(pause, max(0.0, deadline - loop.time()))
        await asyncio.sleep(pause)
