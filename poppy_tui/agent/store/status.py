"""The operation's status and the one-line row that lists it: what `pending` and the lists need,
without the dataclasses module (a short command's largest import; docs/architecture.md).
records.py holds the full records and re-exports these."""

from __future__ import annotations

import json
from collections import namedtuple
from poppy_tui.agent.lifecycle.states import Status as Status  # the lifecycle's, read from here too


TYPE_CHECKING = False  # typing is not imported on `pending`'s path (docs/architecture.md)
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any, NamedTuple
else:

    class _NamedTupleType(type):
        """`class Row(NamedTuple)` as typing.NamedTuple builds it at run time (a
        collections.namedtuple of the annotated fields, in order, with the defaults given and the
        class's docstring), without importing typing, which `pending` never loads; mypy sees
        typing.NamedTuple itself."""

        def __new__(mcs, name, bases, namespace):
            if not bases:
                return super().__new__(mcs, name, bases, namespace)
            fields = list(namespace["__annotations__"])
            defaults = [namespace[field] for field in fields if field in namespace]
            row = namedtuple(name, fields, defaults=defaults, module=namespace["__module__"])
            row.__doc__ = namespace.get("__doc__") or row.__doc__
            return row

    class NamedTuple(metaclass=_NamedTupleType):
        pass


class OperationRow(NamedTuple):
    """One line of the inbox or history: enough to list without loading everything. Immutable
    (a named tuple)."""

    id: int
    company_id: int
    company_name: str
    company_domain: str
    operation_id: str
    interface: str
    status: Status
    revision: str
    summary: str
    terms: dict[str, Any] | None
    expires_at: datetime
    revision_count: int
    created_at: str  # stamps
    updated_at: str
    decided_at: str | None
    approved_revision: str | None
    outcome_detail: str | None
    # An approval held back until the person signs in again: why.
    waiting_sign_in: str | None = None


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)
