"""Waiting for the person's decision on behalf of an MCP client, with progress notifications.

While it waits it also dispatches (Agent.wait_for_outcome), so an approval made in the TUI is
sent even if the TUI has quit meanwhile; the store's lease keeps two senders from overlapping.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from poppy_tui.agent.store import OperationRecord, Status

# How often a waiting tool call tells the client it is still waiting (some clients reset their
# timeout on progress). The store is read every STEP_SECONDS.
PROGRESS_SECONDS = 5.0
STEP_SECONDS = 0.25
SETTLED = frozenset(
    {
        Status.PERFORMED,
        Status.NOT_PERFORMED,
        Status.OUTCOME_UNKNOWN,
        Status.DECLINED,
        Status.EXPIRED,
    }
)

Report = Callable[[OperationRecord, str], Awaitable[None]]


def _note(record: OperationRecord) -> str:
    if getattr(record, "waiting_sign_in", None):
        return "approved, but the Company wants the person signed in first; sent once they sign in"
    return {
        Status.PENDING: "waiting for the person to decide in poppy-tui",
        Status.WITHDRAWN: "approval withdrawn; waiting for the person to decide in poppy-tui",
        Status.APPROVED: "approved by the person; sent when the grace period ends",
        Status.SENDING: "approved; sending it to the Company",
    }.get(record.status, record.status.value)


async def wait_for_decision(
    agent, row: int, wait_seconds: float, report: Report, request_id: int | None = None
) -> OperationRecord:
    """Returns the operation once it is settled, once the person withdraws an approval made while
    we waited, or when `wait_seconds` have passed (then it is still open: the client may wait again).
    With `request_id` (the client's own request), the outcome is read as that request's: an approval
    that went with another request the Company gave the same operation_id didn't perform this one."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(0.0, wait_seconds)
    record = agent.store.get_operation(row)
    if request_id is not None:
        record = agent.outcome_for_request(
            record, request_id
        )  # settled already, perhaps by another request
    seen = (record.status, record.current.id, getattr(record, "waiting_sign_in", None))
    await report(record, _note(record))
    last_report = loop.time()
    was_approved = False
    while True:
        if record.status in SETTLED:
            return record
        if record.status in (Status.APPROVED, Status.SENDING):
            was_approved = True
        elif record.status == Status.WITHDRAWN and was_approved:
            return record  # the person took their approval back while we waited: say so
        left = deadline - loop.time()
        if left <= 0:
            return record
        # Short steps, so a quick approve-then-withdraw is still seen as an approval taken back.
        record = await agent.wait_for_outcome(
            row, timeout=min(left, STEP_SECONDS), request_id=request_id
        )
        now = (record.status, record.current.id, getattr(record, "waiting_sign_in", None))
        if now != seen:
            note = _note(record)
            if now[1] != seen[1] and record.status.is_open:
                note = "the Company sent new terms (a new revision); waiting for the person to decide on them"
            seen = now
            await report(record, note)
            last_report = loop.time()
        elif loop.time() - last_report >= PROGRESS_SECONDS and record.status not in SETTLED:
            await report(record, _note(record))
            last_report = loop.time()
