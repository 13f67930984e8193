from poppy_tui.agent.store.records import (
    AttemptRecord,
    CompanyRecord,
    DecisionRecord,
    EventRecord,
    OperationRecord,
    OperationRow,
    RecordResult,
    RevisionRecord,
    Status,
)
from poppy_tui.agent.store.store import StateError, Store, StoreError

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
