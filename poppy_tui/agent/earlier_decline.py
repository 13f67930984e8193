"""Whether the revision waiting now follows one the person declined: a Company may answer a later
request for the same action with a new revision of the operation the person turned down (Ops 3,
one operation_id per action), and "waiting for you" alone would hide that they said no before."""

from __future__ import annotations

from typing import Any

from poppy_tui.agent.store.records import Status

WAITING = (Status.PENDING, Status.WITHDRAWN)


def declined_earlier(store: Any, record: Any) -> str | None:
    """The store stamp of the person's latest decline of an earlier revision of this operation,
    while a later revision waits for their decision; None otherwise."""
    if record.status not in WAITING:
        return None
    for decision in reversed(store.decisions(record.id)):
        if decision.decision == "declined" and decision.revision_id != record.current.id:
            return str(decision.decided_at)
    return None
