"""What a request through the agent came to, for its caller (the CLI, the TUI, the MCP server):
`RequestResult` (an API call or a tool call) and `ConversationResult` (a message said), and how
an Exchange's outcome becomes a RequestResult (`request_result`), one kind of outcome at a time.

Cheap to import (the facade, agent.py, re-exports these and is on the TUI's first-frame path):
the protocol's outcome types are imported where they are read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from poppy_tui.agent.store.status import Status

if TYPE_CHECKING:
    from poppy_tui.agent.store import CompanyRecord, OperationRecord, Store
    from poppy_tui.agent.transports import Exchange
    from poppy_tui.protocol.challenges import Challenge


@dataclass(frozen=True)
class RequestResult:
    outcome: Literal["performed", "operation", "not_performed", "unknown"]
    status: int | None  # HTTP status where there is one
    body: Any  # parsed JSON body / tool result (wire names) / conversation reply
    operation_row: int | None  # the stored operation when outcome == "operation"
    detail: str = ""
    request_id: int | None = None
    challenge: Challenge | None = (
        None  # sign in (or more scopes) to go on, or the Company refused our identity
    )
    # The stored revision the answer carried, when outcome == "operation": what an approval of
    # these terms names (Store.approve refuses it once a newer revision has arrived).
    revision_row: int | None = None


@dataclass(frozen=True)
class ConversationResult:
    conversation_row: int
    conversation_id: str
    messages: list[dict]  # Company messages received in answer, as sent (unsanitised)
    operation_rows: list[int]  # operations (or new revisions) those messages carried
    delivered: bool = True  # False when our message could not be delivered (see detail)
    detail: str = ""
    problems: list[str] = field(default_factory=list)
    challenge: Challenge | None = None  # an `authorization` event, or a challenge to our message
    request_id: int | None = None  # our message, as a stored request (see outcome_for_request)


def request_result(
    store: Store,
    company: CompanyRecord,
    request_id: int,
    exchange: Exchange,
    interface: str,
    declared: bool,
    for_request: Callable[[OperationRecord, int], OperationRecord],
) -> RequestResult:
    """The first answer to a request, recorded (its first response, or the operation it carried,
    in one commit with it) and said as its caller reads it. `declared`: whether the request
    declared the operations extension; `for_request`: Agent.outcome_for_request."""
    from poppy_tui.agent import companies as discovery
    from poppy_tui.protocol.outcomes import (
        ApprovalRequired,
        BadResponse,
        NotPerformed,
        NotSent,
        Performed,
        RetryLater,
        Unknown,
    )

    outcome = exchange.outcome
    if not isinstance(outcome, ApprovalRequired):  # else kept with the operation, in one commit
        store.set_first_response(request_id, exchange.status, exchange.response)
    body = (
        exchange.response.get("body")
        if interface == "api" and isinstance(exchange.response, dict)
        else exchange.response
    )

    def result(kind: Any, detail: str, **more: Any) -> RequestResult:
        status = more.pop("status", exchange.status)
        return RequestResult(kind, status, more.pop("body", body), None, detail, request_id, **more)

    if isinstance(outcome, Performed):
        return result("performed", exchange.detail)
    if isinstance(outcome, ApprovalRequired):
        recorded = store.record_operation(
            company.id,
            request_id,
            exchange.session_id,
            outcome.operation,
            exchange.carrier_text,
            interface,
            first_response=(exchange.status, exchange.response),
            account_owned=exchange.signed_in,
            account=exchange.account if exchange.signed_in else None,
        )
        detail = "the Company needs the person's approval before it does this"
        if not recorded.new_operation:
            # As this request's caller must read it: another request's outcome is not theirs.
            stored = store.get_operation(recorded.operation_row)
            current = for_request(stored, request_id)
            if current is not stored:
                detail = current.outcome_detail or detail
            elif current.status not in (Status.PENDING, Status.WITHDRAWN):
                detail = f"this operation is already {current.status.value}"
        return RequestResult(
            "operation",
            exchange.status,
            body,
            recorded.operation_row,
            detail,
            request_id,
            revision_row=recorded.revision_id,
        )
    if isinstance(outcome, RetryLater):
        wait = f", retry after {outcome.retry_after:g}s" if outcome.retry_after is not None else ""
        return result(
            "unknown", f"the Company is busy or still working on it ({outcome.detail}{wait})"
        )
    if isinstance(outcome, Unknown):
        return result(
            "unknown", f"no complete answer ({outcome.detail}); the Company may have acted on it"
        )
    if isinstance(outcome, NotSent):
        return result("not_performed", f"not delivered: {outcome.detail}", status=None, body=None)
    if isinstance(outcome, NotPerformed) and outcome.error == "extension_required":
        detail = discovery.explain_extension_required(company, outcome.body, declared)
        return result("not_performed", detail)
    if isinstance(outcome, NotPerformed):
        detail = exchange.detail or f"the Company refused it ({outcome.error})"
        return result("not_performed", detail, challenge=exchange.challenge)
    assert isinstance(outcome, BadResponse)
    if outcome.success:
        # A success status with an operation in it: not "performed" (Ops 5), not an operation
        # to approve either (Ops 4 carries one only in a refusal); whether it was done is unclear.
        return result(
            "unknown",
            f"{outcome.error}; check with the Company whether it was done before asking again",
        )
    return result("not_performed", f"the Company's answer can't be used: {outcome.error}")
