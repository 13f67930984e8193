"""What a decision of the lifecycle is made of: the `Step` it returns (the rule that decided, the
state it leads to, what to `Do`), and the `Rule`s it is decided by (rules.py holds them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from poppy_tui.agent.lifecycle.facts import Facts, Policy
from poppy_tui.agent.lifecycle.states import Status


class Do(StrEnum):
    """What the carrier does with a Step (the store persists it, the dispatcher carries it out)."""

    RECORD_APPROVAL = "record the approval (send_after = at, a new key)"
    RECORD_DECLINE = "record the decline"
    RECORD_WITHDRAWAL = "record the withdrawal"
    RECORD_RESOLUTION = "record the person's resolution"
    END_GRACE = "send_after = now"
    REFUSE = "refuse, saying why (nothing recorded)"
    SUPERSEDE = "record the revision; clear the approval (it was for other terms)"
    RECORD_REVISION = "record the revision"
    LOOK_AGAIN = "keep what was found; look again at `at`"
    EXPIRE = "record it expired (nothing sent)"
    SEND = "commit an attempt (fsynced), then send the same approval"
    SETTLE = "finish the attempt and end the send"
    RETRY = "finish the attempt; send again at `at`"
    WAIT_FOR_SIGN_IN = "finish the attempt; keep the approval until `at`"
    POSTPONE = "no attempt; try again at `at`"
    RESUME = "due now"
    MARK_INTERRUPTED = "finish that attempt as interrupted (in doubt)"
    NOTHING = "nothing"


@dataclass(frozen=True)
class Step:
    rule: str  # the rule that decided (its row in docs/state-machine.md)
    to: Status
    do: Do
    detail: str = ""  # the words recorded (outcome_detail, the refusal's reason)
    at: datetime | None = None  # the send time, the retry's time, how long a wait lasts
    inline: bool = False  # RETRY: waited for by the lease holder (else via the store)
    record_revision: bool = False  # SETTLE: keep the new revision the answer carried first
    attempt_outcome: str | None = None  # how the attempt is finished, where not as answered
    new_message_id: bool = (
        False  # WAIT_FOR_SIGN_IN: a conversation's approval goes in a new message
    )

    def delay(self, now: datetime) -> float:
        """Seconds from `now` until `at` (0 when there is no `at` or it passed)."""
        return 0.0 if self.at is None else max(0.0, (self.at - now).total_seconds())


Guard = Callable[[Facts, Any, datetime, Policy], bool]
Says = Callable[[Facts, Any, datetime, Policy], dict[str, Any]]


@dataclass(frozen=True)
class Rule:
    name: str
    states: frozenset[Status]
    event: type
    when: Guard | None
    to: Status | None  # None: stays in its state
    do: Do
    says: Says | None = None

    @property
    def condition(self) -> str:
        return (self.when.__doc__ or "").strip() if self.when is not None else ""


class NoRule(LookupError):
    """No rule matches: a hole in the lifecycle (a bug; the tests look for them)."""
