"""Discrepancy checks of a stored operation: computed once per revision, off the event loop,
and kept in the store (agent/store/checks.py) under the checker's version.

check_record is the one place that decides what is checked about a stored revision; the review
screen calls it directly (fresh, with the current time), lists read what check_missing stored.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from collections.abc import Callable, Sequence

from poppy_tui.agent.store import Store
from poppy_tui.agent.store.checks import StoredChecks, StoredFinding
from poppy_tui.agent.store.records import OperationRecord, RevisionRecord
from poppy_tui.protocol.operation import Operation
from poppy_tui.safety.checker import CHECKER_VERSION
from poppy_tui.safety.discrepancies import Finding, check_operation, key_amount
from poppy_tui.safety.request_reuse import reuse_findings

log = logging.getLogger(__name__)

UNREADABLE = Finding(
    "danger",
    "check_failed",
    "poppy could not read this operation back from its own record, so nothing about it was checked. "
    "Don't approve it until that is explained.",
    None,
)
# Revisions checked per transaction (and per update of the badges on screen).
BATCH = 25


@dataclass(frozen=True)
class Checked:
    operation: Operation | None  # None: the stored revision no longer parses
    previous: RevisionRecord | None  # the revision "what changed" compares with
    previous_operation: Operation | None
    findings: tuple[Any, ...] = field(default=())
    amount: str | None = None


def check_record(
    store: Store, record: OperationRecord, now: datetime, min_read_seconds: float
) -> Checked:
    previous = store.previous_seen_revision(record.id, record.current.id)
    try:
        operation = record.current.as_operation()
    except Exception:  # logged: a damaged record must show as a danger, not crash the inbox
        log.warning("operation %s's revision can't be read", record.id, exc_info=True)
        return Checked(None, previous, None, (UNREADABLE,))
    try:
        previous_operation = previous.as_operation() if previous else None
    except Exception:  # logged: the checks go on without the comparison
        log.warning("operation %s's previous revision can't be read", record.id, exc_info=True)
        previous_operation = None
    findings = check_operation(
        operation,
        record.request,
        previous=previous_operation,
        now=now,
        min_read_seconds=min_read_seconds,
        previous_seen=previous is None or previous.seen_at is not None,
    )
    # An operation_id the Company also gave to a different request (danger, so it goes first).
    earlier = [
        request
        for rev_id, _, _, request in store.revision_requests(record.id)
        if rev_id != record.current.id
    ]
    findings = reuse_findings(record.operation_id, record.request, earlier) + list(findings)
    return Checked(operation, previous, previous_operation, tuple(findings), key_amount(operation))


def check_missing(
    database: Path,
    operation_rows: Sequence[int],
    now: Callable[[], datetime],
    min_read_seconds: float,
    on_batch: Callable[[dict[int, StoredChecks]], None],
    cancelled: Callable[[], bool] = lambda: False,
) -> None:
    """Check the current revisions of `operation_rows` that have no stored checks of this
    CHECKER_VERSION, store them a batch at a time, and hand each batch to `on_batch`.

    Blocking (SQLite and CPU): run it in a thread. It opens its own connection, as SQLite
    connections belong to one thread."""
    with Store.open(database) as store:
        missing = [
            row
            for row in operation_rows
            if row not in store.current_checks(operation_rows, CHECKER_VERSION)
        ]
        for start in range(0, len(missing), BATCH):
            if cancelled():
                return
            done: dict[int, StoredChecks] = {}
            saved: list[tuple[int, str | None, Sequence[Any]]] = []
            for row in missing[start : start + BATCH]:
                try:
                    record = store.get_operation(row)
                except Exception:  # logged: the list shows what it can, the review says why
                    log.info("operation %s is gone or unreadable", row, exc_info=True)
                    continue
                checked = check_record(store, record, now(), min_read_seconds)
                saved.append((record.current.id, checked.amount, checked.findings))
                findings = tuple(
                    StoredFinding(f.severity, f.code, f.message, f.field) for f in checked.findings
                )
                done[row] = StoredChecks(record.current.id, checked.amount, findings)
            store.save_checks(saved, CHECKER_VERSION)
            on_batch(done)
