"""What a Company's answer means for an operation, independent of the interface.

Transports turn wire responses into one of these; the approval state machine
acts on them. Keeping the classification pure makes every branch testable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from poppy_tui.protocol.errors import ProtocolError, ProtocolViolation
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
    """The Company answered, but not in a way the protocol allows.

    `refusal`: the answer is one of the spec's refusals (an operation's carrier: 403
    approval_required, an MCP error result with an operation) whose content is unusable; it
    still says nothing was performed. `success`: the answer claims success (2xx, `isError:
    false`) yet carries an operation, which the spec puts only in a refusal (Ops 4), so
    whether the action was done can't be told from it."""

    error: ProtocolError
    status: int | None = None
    refusal: bool = False
    success: bool = False


Outcome = Performed | ApprovalRequired | RetryLater | NotPerformed | Unknown | NotSent | BadResponse

RETRYABLE = (RetryLater, Unknown, NotSent)


def classify_http(
    status: int, headers: dict[str, str], body: Any, retry_after: float | None
) -> Outcome:
    """Classify an API response. `body` is parsed JSON or None; `headers` lower-cased."""
    from poppy_tui.protocol.operation import operation_from_api_body

    if status == 403 and isinstance(body, dict) and body.get("error") == "approval_required":
        try:
            operation = operation_from_api_body(status, body)
        except ProtocolError as exc:
            return BadResponse(exc, status, refusal=True)
        assert operation is not None
        return ApprovalRequired(operation)
    if status in (503, 429) or (status == 409 and _error_code(body) == "operation_in_progress"):
        return RetryLater(retry_after, f"HTTP {status}")
    if status in (502, 504):
        return Unknown(f"HTTP {status} from a gateway")
    if status >= 500:
        # A server error says the Company failed, not that it did nothing: it may have acted
        # first (RFC 9110 15.6). Only an answer that says so is "not performed".
        return Unknown(f"HTTP {status}: the Company failed without saying whether it acted")
    if 200 <= status < 300:
        if carries_an_operation(body):
            return BadResponse(
                operation_in_success(f"HTTP {status}", "a 403 approval_required refusal"),
                status,
                success=True,
            )
        return Performed(status, body)
    return NotPerformed(status, _error_code(body) or f"http_{status}", body)


def carries_an_operation(value: Any) -> bool:
    """Whether an answer's body (API) or structuredContent (MCP) holds what only a refusal may:
    `error: approval_required`, or an `operation` member that is an operation of this extension.
    (An `operation` member that doesn't parse as one is a Company's own data, left alone.)"""
    from poppy_tui.protocol.operation import parse_operation

    if not isinstance(value, dict):
        return False
    if value.get("error") == "approval_required":
        return True
    if not isinstance(value.get("operation"), dict):
        return False
    try:
        parse_operation(value["operation"])
    except ProtocolError:
        return False
    return True


def operation_in_success(answer: str, carrier: str) -> ProtocolViolation:
    """Why an operation in a success answer is no operation and no success (Ops 4, Ops 5)."""
    return ProtocolViolation(
        "operation",
        f"the Company answered with a success ({answer}) that carries an operation; the operations extension "
        f"returns an operation only in {carrier} (Ops 4), so this is neither an operation to approve nor a "
        "sign that it was done",
    )


def as_approval_answer(outcome: Outcome) -> Outcome:
    """What an answer means to a request that carried an approval (conventions.APPROVAL_*).

    Once the approval may have left, only an answer that says nothing was performed settles it
    `not_performed`: a refusal the spec defines, a 4xx, or the Company's structured word.
    Anything else failed without saying so (a 5xx whatever its body, a redirect, an MCP tool
    error, an answer that can't be read): the Company may have performed the action, so it is
    in doubt and Ops 7 sends the same approval again.
    """
    if isinstance(outcome, NotPerformed):
        if says_not_performed(outcome.status, outcome.error):
            return outcome
        if outcome.status in (425,):
            return RetryLater(None, f"HTTP {outcome.status}")
        return Unknown(
            f"{_what_failed(outcome.status, outcome.error)} to the approval; it may have been performed"
        )
    if isinstance(outcome, BadResponse):
        if outcome.refusal or (_is_refusal_status(outcome.status) and not outcome.success):
            return outcome
        return Unknown(
            f"{_what_failed(outcome.status, None)} to the approval that can't be used ({outcome.error}); "
            "it may have been performed"
        )
    return outcome


def says_not_performed(status: int | None, error: str | None) -> bool:
    """Whether a failure answered to an approval says nothing was performed (conventions.py).
    `status` None is a failure of ours before anything left (no conversation to send it in)."""
    from poppy_tui.protocol import conventions as c

    if status is None or error in c.APPROVAL_REFUSAL_CODES:
        return True
    if error is not None and error.startswith("mcp_error_"):
        code = error.removeprefix("mcp_error_")
        return code.lstrip("-").isdigit() and int(code) in c.MCP_REFUSAL_ERROR_CODES
    return _is_refusal_status(status)


def _is_refusal_status(status: int | None) -> bool:
    from poppy_tui.protocol import conventions as c

    return status is not None and 400 <= status < 500 and status not in c.APPROVAL_4XX_IN_DOUBT


def _what_failed(status: int | None, error: str | None) -> str:
    if error == "tool_error":
        return "an MCP tool error" + (f" (HTTP {status})" if status is not None else "")
    shown = f"HTTP {status}" if status is not None else "an answer"
    return f"{shown} ({error})" if error and error != f"http_{status}" else shown


def _error_code(body: Any) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, str) else None


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


def describe(outcome: object) -> str:
    """What an outcome says of itself, in one line: its detail, else its error, else the name of
    its kind (the attempt row's detail when the transport gave none)."""
    for name in ("detail", "error"):
        value = getattr(outcome, name, None)
        if value:
            return str(value)
    return type(outcome).__name__
