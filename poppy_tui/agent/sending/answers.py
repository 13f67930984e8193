"""The Company's answer to an approval (a transport's Exchange), read as the lifecycle's Answer:
which kind of answer it is (agent/lifecycle/events.AnswerKind) and the words it came with.
Classifying only; what each kind leads to is the lifecycle's (machine.RULES)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from poppy_tui.agent.lifecycle.events import Answer, AnswerKind
from poppy_tui.agent.transports import Exchange
from poppy_tui.protocol.outcomes import (
    ApprovalRequired,
    BadResponse,
    NotPerformed,
    NotSent,
    Performed,
    RetryLater,
    Unknown,
)


def answer_of(
    exchange: Exchange,
    operation_id: str,
    revision: str,
    *,
    started_at: datetime | None = None,
    cut_off_success: bool = False,
    token_refused: bool = False,
    signed_in_since: bool = False,
    jitter: float = 1.0,
) -> Answer:
    """`exchange.outcome` as outcomes.as_approval_answer reads it; `revision`: the one approved."""

    def answer(kind: AnswerKind, detail: str, **more: Any) -> Answer:
        return Answer(
            kind,
            detail,
            started_at=started_at,
            cut_off_success=cut_off_success,
            token_refused=token_refused,
            signed_in_since=signed_in_since,
            jitter=jitter,
            **more,
        )

    outcome = exchange.outcome
    if exchange.other_account is not None:
        return answer(AnswerKind.OTHER_ACCOUNT, exchange.detail)
    challenge = exchange.challenge
    if challenge is not None and challenge.needs_sign_in:
        return answer(AnswerKind.SIGN_IN, exchange.detail)
    if isinstance(outcome, Performed):
        return answer(AnswerKind.PERFORMED, exchange.detail)
    if isinstance(outcome, ApprovalRequired):
        answered = outcome.operation
        if answered.operation_id != operation_id:
            # Not recorded as an operation to decide on: while this one may be in doubt the
            # person must not be asked to approve another (Ops 7). The attempt row keeps it.
            return answer(
                AnswerKind.OTHER_OPERATION,
                f"the Company answered the approval with a different operation ({answered.operation_id})",
            )
        if answered.revision == revision:
            return answer(
                AnswerKind.SAME_REVISION,
                "protocol violation: the Company answered the approval with the same revision it names "
                f"({answered.revision}), which Ops 6 forbids; stopped instead of resending",
            )
        return answer(AnswerKind.NEW_REVISION, "", revision=answered.revision)
    if isinstance(outcome, RetryLater):
        return answer(AnswerKind.RETRY_LATER, outcome.detail, retry_after=outcome.retry_after)
    if isinstance(outcome, Unknown):
        if exchange.final:
            return answer(AnswerKind.IN_DOUBT_FINAL, exchange.detail or outcome.detail)
        return answer(AnswerKind.IN_DOUBT, outcome.detail)
    if isinstance(outcome, NotSent):
        return answer(AnswerKind.NOT_SENT, outcome.detail)
    if isinstance(outcome, NotPerformed):
        if exchange.session_error:
            return answer(AnswerKind.REFUSED, exchange.detail)
        return answer(
            AnswerKind.REFUSED, f"the Company refused it ({outcome.error}, HTTP {outcome.status})"
        )
    if isinstance(outcome, BadResponse):
        return answer(
            AnswerKind.BROKE_PROTOCOL, f"the Company's answer broke the protocol: {outcome.error}"
        )
    return answer(AnswerKind.BROKE_PROTOCOL, f"unexpected answer {outcome!r}")  # pragma: no cover


def cut_off_success(interface: str, outcome: str, http_status: int | None) -> bool:
    """An API attempt whose 2xx status arrived but not its body: the Company said it was done.
    (For MCP and conversations a 2xx is only the transport's, so it proves nothing.)"""
    return (
        interface == "api"
        and outcome == "unknown"
        and http_status is not None
        and 200 <= http_status < 300
    )
