"""What a Company's answer means for an operation, independent of the interface.

Transports turn wire responses into one of these; the approval state machine
acts on them. Keeping the classification pure makes every branch testable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from poppy_tui.protocol.errors import ProtocolError
from poppy_tui.protocol.operation import Operation


@dataclass(frozen=True)
class Performed:
    """The Company responded as it would without operations (2xx, non-error tool result, ...)."""

    status: int | None
    body: Any


@dataclass(frozen=True)
class ApprovalRequired:
    operation: Operation


@dataclass(frozen=True)
class RetryLater:
    """503 and the like: being performed, or the Company doesn't know yet. Never a failure."""

    retry_after: float | None
    detail: str = ""


@dataclass(frozen=True)
class NotPerformed:
    """A definite refusal or error: the action did not happen."""

    status: int | None
    error: str
    body: Any


@dataclass(frozen=True)
class Unknown:
    """The request may have reached the Company (timeout, dropped connection)."""

    detail: str


@dataclass(frozen=True)
class NotSent:
    """The request certainly did not reach the Company (connect refused)."""

    detail: str


@dataclass(frozen=True)
class BadResponse:
    """The Company answered, but not in a way the protocol allows."""

    error: ProtocolError
    status: int | None = None


Outcome = Union[Performed, ApprovalRequired, RetryLater, NotPerformed, Unknown, NotSent, BadResponse]

RETRYABLE = (RetryLater, Unknown, NotSent)


def classify_http(status: int, headers: dict[str, str], body: Any, retry_after: float | None) -> Outcome:
    """Classify an API response. `body` is parsed JSON or None; `headers` lower-cased."""
    from poppy_tui.protocol.operation import operation_from_api_body

    if status == 403 and isinstance(body, dict) and body.get("error") == "approval_required":
        try:
            operation = operation_from_api_body(status, body)
        except ProtocolError as exc:
            return BadResponse(exc, status)
        assert operation is not None
        return ApprovalRequired(operation)
    if status in (503, 429) or (status == 409 and _error_code(body) == "operation_in_progress"):
        return RetryLater(retry_after, f"HTTP {status}")
    if status in (502, 504):
        return Unknown(f"HTTP {status} from a gateway")
    if 200 <= status < 300:
        return Performed(status, body)
    return NotPerformed(status, _error_code(body) or f"http_{status}", body)


def as_approval_answer(outcome: Outcome) -> Outcome:
    """What an answer means to a request that carried an approval.

    A 5xx (500 included) is no definite refusal there: the Company may have performed the
    action and then failed, and Ops 7 says a request with an approval that fails is sent again
    with the same approval. Only 4xx refusals and the Company's own words settle it.
    """
    if isinstance(outcome, NotPerformed) and outcome.status is not None and outcome.status >= 500:
        return Unknown(f"HTTP {outcome.status} ({outcome.error}) to the approval; it may have been performed")
    return outcome


def _error_code(body: Any) -> str | None:
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return body["error"]
    return None


def conversation_reply(message: Any, operation_id: str) -> str:
    """What a Company conversation message says about an approved operation, by the structured
    convention in conventions.py: "performed", "not_performed", "in_progress", "unrelated" (about
    another operation), or "words" (no structured status: only its text says anything)."""
    from poppy_tui.protocol import conventions as c

    data = message.get("data") if isinstance(message, dict) else None
    if not isinstance(data, dict):
        return "words"
    about = data.get(c.CONVERSATION_OUTCOME_OPERATION_FIELD)
    if about is not None and about != operation_id:
        return "unrelated"
    status = data.get(c.CONVERSATION_OUTCOME_STATUS_FIELD)
    if status in c.CONVERSATION_PERFORMED_STATUSES:
        return "performed"
    if status in c.CONVERSATION_NOT_PERFORMED_STATUSES:
        return "not_performed"
    if status in c.CONVERSATION_IN_PROGRESS_STATUSES:
        return "in_progress"
    return "words"
