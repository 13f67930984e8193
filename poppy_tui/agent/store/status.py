"""The operation's status and the one-line row that lists it: what `pending` and the lists need,
without the dataclasses module (a short command's largest import; docs/architecture.md).
records.py holds the full records and re-exports these."""

from __future__ import annotations

import json
from collections import namedtuple
from enum import StrEnum


class Status(StrEnum):
    """The approval state machine (docs/state-machine.md)."""

    PENDING = "pending"  # waiting for the person
    APPROVED = "approved"  # decision committed; grace period before the first send
    SENDING = "sending"  # at least one send attempt started; retries use the same approval
    PERFORMED = "performed"
    NOT_PERFORMED = "not_performed"
    OUTCOME_UNKNOWN = "outcome_unknown"  # sent, no definite answer: no new approval until resolved
    DECLINED = "declined"
    WITHDRAWN = "withdrawn"  # approval taken back before any send; may be decided again
    EXPIRED = "expired"

    @property
    def is_open(self) -> bool:
        """Waiting for a person to decide."""
        return self in (Status.PENDING, Status.WITHDRAWN)

    @property
    def is_final(self) -> bool:
        return self in (Status.PERFORMED, Status.NOT_PERFORMED, Status.DECLINED, Status.EXPIRED)


_ROW_FIELDS = (
    "id", "company_id", "company_name", "company_domain", "operation_id", "interface", "status", "revision",
    "summary", "terms", "expires_at", "revision_count", "created_at", "updated_at", "decided_at",
    "approved_revision", "outcome_detail", "waiting_sign_in",
)


class OperationRow(namedtuple("OperationRow", _ROW_FIELDS, defaults=(None,))):
    """One line of the inbox or history: enough to list without loading everything. Immutable
    (a named tuple): id, company_id (int); company_name, company_domain, operation_id, interface,
    revision, summary (str); status (Status); terms (dict or None); expires_at (aware datetime);
    revision_count (int); created_at, updated_at (stamps); decided_at, approved_revision,
    outcome_detail (str or None); waiting_sign_in (str or None: an approval held back until the
    person signs in again, why)."""

    __slots__ = ()


def loads(text: str | None) -> object:
    return None if text is None else json.loads(text)
