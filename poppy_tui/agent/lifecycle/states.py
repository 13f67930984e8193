"""The states an operation can be in (docs/state-machine.md), and the names the lifecycle gives
an attempt's ending. No imports but the standard library's enum: `pending` reads these on its
light path (store/status.py re-exports Status), and the lifecycle's machine is built on them."""

from __future__ import annotations

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


# Attempt outcomes (the attempts table's spelling) after which the Company may have performed
# the operation: "in doubt" (Ops 7). An attempt never finished (its sender died) is in doubt too.
IN_DOUBT_OUTCOMES = frozenset({"unknown", "retry_later", "interrupted"})
# The attempt outcome of a send the Company answered with a sign-in challenge: not a refusal of
# the operation (Ops 3), nothing performed, and the wait for the person that follows is not
# resending (it does not count against the retry window).
SIGN_IN_ASKED = "sign_in_required"
# The attempt outcome of an approval that never left (signed in as another account; the request
# could not be signed): nothing performed, not in doubt.
NOT_SENT = "not_sent"
# An attempt whose sender stopped before an answer arrived (found by the next sender).
INTERRUPTED = "interrupted"
