"""Read models returned by the store. Plain frozen dataclasses: safe to hand to any thread.
Status and OperationRow (what lists need) are in status.py, without dataclasses."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

# Imported from here too: re-exported by name (`X as X`), as mypy's strict mode wants.
from poppy_tui.agent.store.status import OperationRow as OperationRow
from poppy_tui.agent.store.status import Status as Status
from poppy_tui.agent.store.status import loads as loads

if TYPE_CHECKING:
    # The protocol's parsers load when a record is turned back into one, not with the records.
    from poppy_tui.protocol.operation import Operation
    from poppy_tui.protocol.requests import RequestDescription


@dataclass(frozen=True)
class CompanyRecord:
    id: int
    base_url: str
    domain: str
    name: str
    document: dict[str, Any]
    supports_operations: bool
    user_id: str
    session_id: str
    discovered_at: str
    updated_at: str

    @property
    def apis(self) -> list[dict[str, Any]]:
        apis = self.document.get("apis")
        return apis if isinstance(apis, list) else []


@dataclass(frozen=True)
class RevisionRecord:
    id: int
    operation_row: int
    revision: str
    request_id: int
    summary: str
    terms: dict[str, Any] | None
    expires_at: datetime
    expires_at_text: str
    raw: dict[str, Any]
    carrier_text: str | None
    received_at: str
    seen_at: str | None
    # The Session of the request (or conversation read) that returned this revision; None for
    # revisions recorded before the store kept it (then the operation's session_id).
    session_id: str | None = None

    def as_operation(self) -> Operation:
        from poppy_tui.protocol.operation import parse_operation

        return parse_operation(self.raw)


@dataclass(frozen=True)
class DecisionRecord:
    id: int
    operation_row: int
    revision_id: int
    decision: str
    decided_at: str
    actor: str
    note: str | None


@dataclass(frozen=True)
class AttemptRecord:
    id: int
    operation_row: int
    revision_id: int
    number: int
    idempotency_key: str | None
    started_at: str
    finished_at: str | None
    outcome: str | None  # None: started, never finished (the process died while sending)
    http_status: int | None
    response: Any
    detail: str | None
    owner: str | None


@dataclass(frozen=True)
class EventRecord:
    id: int
    operation_row: int
    at: str
    kind: str
    detail: str | None


@dataclass(frozen=True)
class OperationRecord:
    """Everything about one operation, for the review screen and the dispatcher."""

    id: int
    company: CompanyRecord
    operation_id: str
    interface: str
    session_id: str
    status: Status
    current: RevisionRecord
    approved_revision_id: int | None
    send_after: str | None
    idempotency_key: str | None
    next_attempt_at: str | None
    attempt_count: int
    outcome: Any
    outcome_detail: str | None
    created_at: str
    updated_at: str
    request: RequestDescription
    request_id: int
    # Returned in a signed-in Session: it belongs to the account, and any signed-in Session of
    # this agent and User at the Company may approve it (Ops 3). Otherwise bound to session_id.
    account_owned: bool = False
    # Set while an approval waits for the person to sign in (the Company answered its send with
    # a sign-in challenge): the one line to show. The approval is kept and sent after sign-in.
    waiting_sign_in: str | None = None
    # The account an account-owned operation belongs to: the one the agent was signed in as when
    # the request that returned the current revision was sent (sign_ins.account). None when that
    # is unknown (recorded before, or a sign-in that never named the account): then any signed-in
    # Session may approve it, as before.
    account: str | None = None

    @property
    def approved(self) -> RevisionRecord | None:
        return self.current if self.approved_revision_id == self.current.id else None


@dataclass(frozen=True)
class RecordResult:
    operation_row: int
    revision_id: int
    new_operation: bool
    new_revision: bool
    previous_revision_id: int | None
    status: Status


def request_of(text: str) -> RequestDescription:
    from poppy_tui.protocol.requests import request_from_json

    return request_from_json(text)
