"""What the lifecycle knows of an operation when it decides: plain values the store reads (under
its write lock where a decision is committed), never a connection or a record to load from.

Every timer that belongs to a revision is read from that revision's own facts: its send time
(`send_after`, set when it was approved), its retry window (counted from the first attempt *of
the approved revision* since it last waited for sign-in) and its expiry (`approved_expires_at`).
An earlier revision's attempts never start, shorten or end a later revision's window (audit A52).
"In doubt", though, is the operation's: an earlier revision's send that may have been performed
keeps every later answer from saying "not performed" (Ops 7).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from poppy_tui.agent.lifecycle.states import IN_DOUBT_OUTCOMES, SIGN_IN_ASKED, Status
from poppy_tui.protocol.retry import BackoffPolicy


@dataclass(frozen=True)
class AttemptFact:
    """One attempt to send an approval (a row of the store's attempts)."""

    revision_id: int  # the revision whose approval it carried
    started_at: datetime
    outcome: str | None = None  # the attempts table's spelling; None: never finished
    http_status: int | None = None

    @property
    def in_doubt(self) -> bool:
        """The Company may have performed the operation on this attempt."""
        return self.outcome is None or self.outcome in IN_DOUBT_OUTCOMES


@dataclass(frozen=True)
class Holds:
    """Why the person can't approve now, or why an approval can't leave, each as the one line the
    person is told (computed outside: same_action.py, owning_account.py, the signing key)."""

    same_action: str | None = None  # an earlier operation for the same action is in doubt (Ops 7)
    other_account: str | None = None  # signed in at the Company as another account (Ops 3)
    unsignable: str | None = None  # approvals can't be signed on this machine
    # The sign-in now can't be shown to be the operation's account (Ops 3; agent/account_hold.py):
    # an approval is held, not sent, until the person says it is. Approving is not refused.
    unconfirmed_account: str | None = None

    @property
    def approval(self) -> str | None:
        """Why an approval can't be recorded now, or None."""
        return self.same_action or self.other_account


@dataclass(frozen=True)
class Facts:
    status: Status
    current_revision_id: int
    current_expires_at: datetime
    # The interface the approval goes through: that of the request that returned the approved
    # revision (else the current one's). "api", "mcp" or "conversation".
    interface: str = "api"
    current_revision: str = ""
    approved_revision_id: int | None = None
    approved_revision: str | None = None
    approved_expires_at: datetime | None = None
    send_after: datetime | None = None  # the approved revision's send time (end of its grace)
    next_attempt_at: datetime | None = None  # a retry's time; the next look while unknown
    waiting_sign_in: str | None = None  # the line the person is told while it waits for sign-in
    outcome_detail: str | None = None
    # Every attempt of the operation, oldest first. For an Answer: those before the one answered.
    attempts: tuple[AttemptFact, ...] = ()
    holds: Holds = field(default_factory=Holds)
    lease_until: datetime | None = None  # a sender holds it until then (or lapsed)

    # ---- derived -----------------------------------------------------------------------------

    @property
    def newer_revision(self) -> bool:
        """A revision newer than the approved one has arrived."""
        return self.approved_revision_id is not None and (
            self.approved_revision_id != self.current_revision_id
        )

    @property
    def in_doubt(self) -> bool:
        """Some attempt of this operation (any revision) may have been performed."""
        return any(a.in_doubt for a in self.attempts)

    @property
    def saw_success(self) -> bool:
        """An API attempt got a 2xx status line before its body was cut off: the Company said it
        was done. (For MCP and conversations a 2xx is only the transport's, so it proves nothing.)"""
        return self.interface == "api" and any(
            a.outcome == "unknown" and a.http_status is not None and 200 <= a.http_status < 300
            for a in self.attempts
        )

    @property
    def approved_attempts(self) -> tuple[AttemptFact, ...]:
        """The attempts that carried the approved revision's approval."""
        if self.approved_revision_id is None:
            return ()
        return tuple(a for a in self.attempts if a.revision_id == self.approved_revision_id)

    @property
    def window_attempts(self) -> tuple[AttemptFact, ...]:
        """The approved revision's attempts since it last waited for sign-in: those the retry
        window counts (waiting for the person to sign in is not resending, Ops 3)."""
        attempts = self.approved_attempts
        since = 0
        for number, attempt in enumerate(attempts):
            if attempt.outcome == SIGN_IN_ASKED:
                since = number + 1
        return attempts[since:]

    def window_start(self) -> datetime | None:
        """When the approved revision's retry window began (its first counted attempt)."""
        counted = self.window_attempts
        return counted[0].started_at if counted else None

    def window_end(self, policy: Policy, started: datetime | None = None) -> datetime | None:
        """When resending the approved revision stops; `started`: the attempt just answered,
        when no earlier one counts (it starts the window). None: nothing sent in the window."""
        start = self.window_start() or started
        if start is None:
            return None
        return start + timedelta(seconds=policy.retry_window_seconds)


@dataclass(frozen=True)
class Policy:
    """The settings decisions depend on (agent/config.py's, and the dispatcher's options)."""

    retry_window_seconds: float = 600.0
    # A retry due within this many seconds is waited for by the sender that holds the lease;
    # a later one goes back to the store (next_attempt_at) for any dispatcher. 0: every retry
    # delay goes through the store's schedule (a simulation that moves the clock by hand).
    inline_retry_seconds: float = 15.0
    unsignable_retry_seconds: float = 30.0
    backoff: BackoffPolicy = field(default_factory=BackoffPolicy)
