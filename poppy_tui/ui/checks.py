"""Everything the screens check about one stored revision, computed in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from poppy_tui.agent.store import OperationRecord, RevisionRecord, Store
from poppy_tui.protocol.operation import Operation
from poppy_tui.safety.discrepancies import Finding
from poppy_tui.safety.request_reuse import reuse_findings
from poppy_tui.ui.safe import check_operation, key_amount

UNREADABLE = Finding(
    "danger",
    "check_failed",
    "poppy could not read this operation back from its own record, so nothing about it was checked. "
    "Don't approve it until that is explained.",
    None,
)


@dataclass(frozen=True)
class Checked:
    operation: Operation | None  # None: the stored revision no longer parses
    previous: RevisionRecord | None  # the revision "what changed" compares with
    previous_operation: Operation | None
    findings: tuple[Any, ...] = field(default=())
    amount: str | None = None


def check_record(store: Store, record: OperationRecord, now: datetime, min_read_seconds: float) -> Checked:
    previous = store.previous_seen_revision(record.id, record.current.id)
    try:
        operation = record.current.as_operation()
    except Exception:  # a damaged record must show as a danger, not crash the inbox
        return Checked(None, previous, None, (UNREADABLE,))
    try:
        previous_operation = previous.as_operation() if previous else None
    except Exception:
        previous_operation = None
    findings = check_operation(
        operation, record.request, previous=previous_operation, now=now, min_read_seconds=min_read_seconds
    )
    # An operation_id the Company also gave to a different request (danger, so it goes first).
    earlier = [request for rev_id, _, _, request in store.revision_requests(record.id) if rev_id != record.current.id]
    findings = reuse_findings(record.operation_id, record.request, earlier) + list(findings)
    return Checked(operation, previous, previous_operation, tuple(findings), key_amount(operation))
