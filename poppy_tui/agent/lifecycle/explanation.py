"""What the person is told about an operation: on its way (and when), or why not.

`explain(facts, now)` is the one answer the TUI, `poppy-tui show` and the MCP tools give, so they
say the same words. It reads only the facts (the store reads them, `Agent.explain` builds them)
and the time; it decides nothing (machine.step does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from poppy_tui.agent.lifecycle.facts import Facts
from poppy_tui.agent.lifecycle.states import Status


class Why(StrEnum):
    """The kind of answer: why the operation is where it is."""

    WAITING_FOR_YOU = "waiting_for_you"  # pending or withdrawn: the person decides
    HELD_SAME_ACTION = "held_same_action"  # can't be approved: the same action is in doubt
    HELD_OTHER_ACCOUNT = "held_other_account"  # can't be approved / sent: another account
    REVISION_EXPIRED = "revision_expired"  # its terms expired; it can no longer be approved
    GRACE = "grace"  # approved; sent when its grace period ends (can be withdrawn until then)
    DUE = "due"  # approved and due: being sent now
    RETRY_WAIT = (
        "retry_wait"  # sent; sent again at a time (the Company asked to wait, or no answer)
    )
    SIGN_IN = "sign_in"  # held until the person signs in
    UNSIGNABLE = "unsignable"  # can't be signed on this machine; tried again later
    IN_DOUBT = "in_doubt"  # sent, outcome unknown; poppy-tui keeps finding out
    PERFORMED = "performed"
    NOT_PERFORMED = "not_performed"
    DECLINED = "declined"
    EXPIRED = "expired"


@dataclass(frozen=True)
class Explanation:
    status: Status
    why: Why
    on_its_way: bool  # an approval that goes out by itself at `at` (or now), with no one acting
    line: str  # one sentence, without the time (`sentence` adds it)
    at: datetime | None = None  # when: the send time, the retry, the expiry, the next look

    def sentence(self, time_text: Callable[[datetime], str] | None = None) -> str:
        """The line with its time, written by `time_text` (default: ISO 8601 in UTC)."""
        if self.at is None or "{at}" not in self.line:
            return self.line.replace(" {at}", "")
        when = time_text(self.at) if time_text is not None else _utc(self.at)
        return self.line.replace("{at}", when)


def explain(facts: Facts, now: datetime) -> Explanation:
    """What the person is told about an operation with these facts at `now`."""
    f, status = facts, facts.status
    if status in (Status.PENDING, Status.WITHDRAWN):
        if f.current_expires_at <= now:
            return Explanation(
                status,
                Why.REVISION_EXPIRED,
                False,
                "its terms expired; it can no longer be approved",
            )
        if f.holds.same_action:
            return Explanation(
                status, Why.HELD_SAME_ACTION, False, f"can't be approved yet: {f.holds.same_action}"
            )
        if f.holds.other_account:
            return Explanation(
                status,
                Why.HELD_OTHER_ACCOUNT,
                False,
                f"can't be approved now: {f.holds.other_account}",
            )
        taken_back = (
            "your approval was withdrawn before anything was sent; "
            if status == Status.WITHDRAWN
            else ""
        )
        return Explanation(
            status,
            Why.WAITING_FOR_YOU,
            False,
            f"{taken_back}waiting for your decision until its terms expire at {{at}}",
            f.current_expires_at,
        )
    if status in (Status.APPROVED, Status.SENDING):
        return _approved(f, now)
    if status == Status.OUTCOME_UNKNOWN:
        reason = f.outcome_detail or "sent without a definite answer"
        if f.next_attempt_at is not None:
            return Explanation(
                status,
                Why.IN_DOUBT,
                False,
                f"sent, outcome unknown ({reason}); poppy-tui looks again at {{at}}",
                f.next_attempt_at,
            )
        return Explanation(
            status,
            Why.IN_DOUBT,
            False,
            f"sent, outcome unknown ({reason}); check with the Company and record what happened",
        )
    final = {
        Status.PERFORMED: (Why.PERFORMED, "performed by the Company"),
        Status.NOT_PERFORMED: (Why.NOT_PERFORMED, "not performed"),
        Status.DECLINED: (Why.DECLINED, "declined; nothing was sent"),
        Status.EXPIRED: (Why.EXPIRED, "expired before it was sent; nothing was sent"),
    }
    why, words = final[status]
    if status == Status.NOT_PERFORMED and f.outcome_detail:
        words = f"not performed: {f.outcome_detail}"
    return Explanation(status, why, False, words)


def _approved(f: Facts, now: datetime) -> Explanation:
    status = f.status
    expires = f.approved_expires_at or f.current_expires_at
    if status == Status.APPROVED and expires <= now:
        return Explanation(
            status,
            Why.EXPIRED,
            False,
            "its terms expired before it could be sent; nothing was sent",
        )
    if f.waiting_sign_in:
        why = Why.HELD_OTHER_ACCOUNT if f.holds.other_account else Why.SIGN_IN
        return Explanation(
            status,
            why,
            False,
            f"not sent: {f.waiting_sign_in} (kept until its terms expire at {{at}})",
            expires,
        )
    if f.holds.other_account:
        # Signed in there as another account: the approval can't go with that token (Ops 3).
        return Explanation(
            status,
            Why.HELD_OTHER_ACCOUNT,
            False,
            f"not sent yet: {f.holds.other_account} (kept until its terms expire at {{at}})",
            expires,
        )
    if f.holds.unconfirmed_account:
        # Not shown to be the operation's account: the next pass holds it, sends nothing (Ops 3).
        return Explanation(
            status,
            Why.SIGN_IN,
            False,
            f"not sent yet: {f.holds.unconfirmed_account} (kept until its terms expire at {{at}})",
            expires,
        )
    when = f.send_after if status == Status.APPROVED else f.next_attempt_at
    if f.holds.unsignable:
        return Explanation(
            status,
            Why.UNSIGNABLE,
            False,
            f"not sent: approvals can't be signed on this machine ({f.holds.unsignable}); "
            "tried again at {at}",
            when,
        )
    if when is not None and when > now:
        if status == Status.APPROVED:
            return Explanation(
                status,
                Why.GRACE,
                True,
                "approved; sent at {at}, when its grace period ends (you can withdraw it until then)",
                when,
            )
        reason = f.outcome_detail or "no definite answer yet"
        return Explanation(
            status, Why.RETRY_WAIT, True, f"being sent; sent again at {{at}} ({reason})", when
        )
    return Explanation(status, Why.DUE, True, "being sent now")


def _utc(moment: datetime) -> str:
    from datetime import UTC

    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
