"""The durable record (store.py says how it is built). Names are loaded on first use, so that a
command that needs one part of the store (`pending`: status.py, history.py, expiry.py) doesn't
import every part of it with the records' dataclasses (docs/architecture.md)."""

from __future__ import annotations

from poppy_tui.lazy_exports import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from poppy_tui.agent.store.connection import StateError, StoreError
    from poppy_tui.agent.store.records import (
        AttemptRecord,
        CompanyRecord,
        DecisionRecord,
        EventRecord,
        OperationRecord,
        RecordResult,
        RevisionRecord,
    )
    from poppy_tui.agent.store.status import OperationRow, Status
    from poppy_tui.agent.store.store import Store

_WHERE = {
    "AttemptRecord": "records",
    "CompanyRecord": "records",
    "DecisionRecord": "records",
    "EventRecord": "records",
    "OperationRecord": "records",
    "OperationRow": "status",
    "RecordResult": "records",
    "RevisionRecord": "records",
    "StateError": "connection",
    "Status": "status",
    "Store": "store",
    "StoreError": "connection",
}

__all__ = [
    "AttemptRecord",
    "CompanyRecord",
    "DecisionRecord",
    "EventRecord",
    "OperationRecord",
    "OperationRow",
    "RecordResult",
    "RevisionRecord",
    "StateError",
    "Status",
    "Store",
    "StoreError",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
