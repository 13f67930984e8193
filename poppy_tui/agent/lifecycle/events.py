"""What can happen to an operation: the person's answers, the Company's answers by kind, the
clock, sign-in changes, leases and restarts. Plain frozen values; `machine.step` reads them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from poppy_tui.agent.lifecycle.states import Status


# ---- the person (at poppy-tui's own interface only) ---------------------------------------------


@dataclass(frozen=True)
class Approve:
    revision_id: int
    grace_seconds: float


@dataclass(frozen=True)
class Decline:
    revision_id: int


@dataclass(frozen=True)
class Withdraw:
    pass


@dataclass(frozen=True)
class ResolveUnknown:
    """The person found out (from the order, say) whether the send in doubt took effect."""

    performed: bool


@dataclass(frozen=True)
class SendNow:
    """End the grace period now (the quit dialog's "send now")."""


# ---- the clock and the dispatcher's turn --------------------------------------------------------


@dataclass(frozen=True)
class Tick:
    """Time passed: what is undecided (or approved and never sent) may have expired."""


@dataclass(frozen=True)
class Due:
    """A dispatcher holds the operation's lease and its time has come (grace ended, retry due)."""


# ---- the Company's answer to one attempt --------------------------------------------------------


class AnswerKind(StrEnum):
    PERFORMED = "performed"  # 2xx, a tool result without isError, a structured "performed" reply
    NEW_REVISION = "new_revision"  # approval_required with a newer revision of this operation
    SAME_REVISION = "same_revision"  # ... with the revision we sent (Ops 6 forbids it)
    OTHER_OPERATION = "other_operation"  # ... with another operation_id
    REFUSED = "refused"  # a definite refusal: a 4xx, invalid_session, a spec refusal code
    BROKE_PROTOCOL = "broke_protocol"  # an answer that can't be read as any of these
    RETRY_LATER = "retry_later"  # 503 / 429 / operation_in_progress, Retry-After or not
    IN_DOUBT = "in_doubt"  # a 5xx, a dropped connection, a timeout: may have been performed
    IN_DOUBT_FINAL = "in_doubt_final"  # in doubt, and resending can't settle it (words only)
    NOT_SENT = "not_sent"  # nothing left the machine (connect refused): not in doubt
    SIGN_IN = "sign_in"  # a sign-in challenge (sign_in_required, invalid_token, ...)
    OTHER_ACCOUNT = "other_account"  # not sent: signed in there as another account (Ops 3)


REFUSALS = frozenset(
    {
        AnswerKind.REFUSED,
        AnswerKind.BROKE_PROTOCOL,
        AnswerKind.SAME_REVISION,
        AnswerKind.OTHER_OPERATION,
    }
)
RETRIES = frozenset({AnswerKind.RETRY_LATER, AnswerKind.IN_DOUBT, AnswerKind.NOT_SENT})


@dataclass(frozen=True)
class Answer:
    """The Company's answer to the attempt just made (agent/sending/answers.py reads it from the
    transport's Exchange). The facts it is applied to hold the attempts *before* this one."""

    kind: AnswerKind
    detail: str = ""
    retry_after: float | None = None  # seconds (RETRY_LATER)
    revision: str | None = None  # the revision the answer carried (NEW_REVISION)
    started_at: datetime | None = None  # when this attempt started
    cut_off_success: bool = False  # an API 2xx whose body was cut off
    token_refused: bool = False  # 401 invalid_token to the token the request carried
    signed_in_since: bool = False  # a token other than the refused one is held already
    jitter: float = 1.0  # where in the backoff's jitter range the delay falls (0..1)


# ---- finding out another way (Ops 7) --------------------------------------------------------------


@dataclass(frozen=True)
class FoundOut:
    """The outcome probe (agent/outcome_probe.py) looked: `settles` is what a definite answer it
    found says (performed, not_performed), or None; `next_look` when to look again (None: no more,
    the approved terms expired)."""

    settles: Status | None = None
    next_look: datetime | None = None


# ---- a new revision, not in answer to our approval ----------------------------------------------


@dataclass(frozen=True)
class NewRevision:
    """A new revision of the operation arrived in answer to a request (not to its approval), or
    in a conversation: the Company's terms changed (Ops 3, "New terms")."""


# ---- sign-in, leases, restarts ------------------------------------------------------------------


@dataclass(frozen=True)
class SignedIn:
    """The sign-in at the operation's Company changed (checked on every dispatcher pass)."""

    token_differs: bool  # signed in with a token other than the one the Company refused
    other_account: bool = False  # ... but as a known account other than the operation's


@dataclass(frozen=True)
class SenderGone:
    """An attempt whose sender's lease lapsed before it finished (killed, restarted): found by the
    next sender. Its request may have reached the Company."""

    owner: str = ""


Event = (
    Approve
    | Decline
    | Withdraw
    | ResolveUnknown
    | SendNow
    | Tick
    | Due
    | Answer
    | NewRevision
    | FoundOut
    | SignedIn
    | SenderGone
)
