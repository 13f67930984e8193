"""The transition function: `step(facts, event, now, policy) -> Step`.

`RULES` is the whole lifecycle, in order: the first rule whose state, event and condition match
decides. Each rule names the state it leads to and what the carrier does (`Do`). Nothing here
reads a clock, a store or the network: `now` and the facts are given, so the same inputs always
give the same Step (the simulation and the tests rely on it). docs/state-machine.md's transition
table is `render_table()` (tests/agent/test_lifecycle.py fails when the two differ).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from poppy_tui.agent.lifecycle.events import (
    REFUSALS,
    RETRIES,
    Answer,
    AnswerKind,
    Approve,
    Decline,
    Due,
    Event,
    FoundOut,
    NewRevision,
    ResolveUnknown,
    SendNow,
    SenderGone,
    SignedIn,
    Tick,
    Withdraw,
)
from poppy_tui.agent.lifecycle.facts import Facts, Policy
from poppy_tui.agent.lifecycle.states import INTERRUPTED, NOT_SENT, SIGN_IN_ASKED, Status


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


def step(facts: Facts, event: Event, now: datetime, policy: Policy | None = None) -> Step:
    """What happens next to an operation with these facts when `event` happens at `now`."""
    policy = policy or Policy()
    for rule in RULES:
        if facts.status not in rule.states or not isinstance(event, rule.event):
            continue
        if rule.when is not None and not rule.when(facts, event, now, policy):
            continue
        fields = rule.says(facts, event, now, policy) if rule.says is not None else {}
        return Step(rule.name, rule.to or facts.status, rule.do, **fields)
    raise NoRule(f"no rule for {type(event).__name__} in {facts.status.value}")


# ---- conditions (each docstring is the condition's words in the doc's table) --------------------


def _not_current(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """not the current revision"""
    return bool(e.revision_id != f.current_revision_id)


def _current_expired(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """the current revision's expires_at passed"""
    return f.current_expires_at <= now


def _held(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """held: the same action in doubt (Ops 7), or signed in as another account (Ops 3)"""
    return f.holds.approval is not None


def _in_grace(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """its send time is still ahead"""
    return f.send_after is not None and f.send_after > now


def _approved_expired(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """the approved revision's expires_at passed"""
    return _expired(f, now)


def _expired_after_success(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """a cut-off 2xx was seen, and the terms expired or the window ended"""
    return f.saw_success and (_expired(f, now) or _window_over(f, now, p))


def _expired_in_doubt(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """the approved terms expired, something in doubt"""
    return _expired(f, now) and f.in_doubt


def _window_over_in_doubt(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """the approved revision's retry window ended, something in doubt"""
    return _window_over(f, now, p) and f.in_doubt


def _window_ended(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """the approved revision's retry window ended"""
    return _window_over(f, now, p)


def _unsignable(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """approvals can't be signed on this machine"""
    return f.holds.unsignable is not None


def _kind(*kinds: AnswerKind, success: bool | None = None, doubt: bool | None = None) -> Guard:
    def guard(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
        if e.kind not in kinds:
            return False
        seen = f.saw_success or e.cut_off_success
        if success is not None and seen != success:
            return False
        return doubt is None or f.in_doubt == doubt

    names = " / ".join(sorted(k.value for k in kinds))
    extra = []
    if success:
        extra.append("after a cut-off 2xx")
    if success is False:
        extra.append("no cut-off 2xx")
    if doubt:
        extra.append("something in doubt")
    if doubt is False:
        extra.append("nothing in doubt")
    guard.__doc__ = names + (f" ({', '.join(extra)})" if extra else "")
    return guard


def _found_performed(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """it found a definite answer: performed"""
    return bool(e.settles == Status.PERFORMED)


def _found_not_performed(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """it found a definite answer: not performed"""
    return bool(e.settles == Status.NOT_PERFORMED)


def _resumable(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """waiting for sign-in; a token other than the refused one, not another account's"""
    return f.waiting_sign_in is not None and e.token_differs and not e.other_account


def _performed(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """performed"""
    return bool(e.performed)


def _newer_revision(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """not performed, and a newer revision arrived"""
    return f.newer_revision


def _expired(f: Facts, now: datetime) -> bool:
    return f.approved_expires_at is not None and f.approved_expires_at <= now


def _window_over(f: Facts, now: datetime, p: Policy) -> bool:
    end = f.window_end(p)
    return end is not None and end <= now


# ---- what each rule says ------------------------------------------------------------------------

OPEN = frozenset({Status.PENDING, Status.WITHDRAWN})
UNSENT = frozenset({Status.PENDING, Status.WITHDRAWN, Status.APPROVED})
SENDABLE = frozenset({Status.APPROVED, Status.SENDING})
ALL = frozenset(Status)
SENDING = frozenset({Status.SENDING})


def _says(detail: str) -> Says:
    return lambda f, e, now, p: {"detail": detail}


def _refused_not_current(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"detail": "a newer revision of these terms arrived; review it before approving"}


def _refused_not_open(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"detail": f"the operation is {f.status.value}; it can't be approved now"}


def _refused_held(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"detail": f.holds.approval or ""}


def _approval(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    grace = max(0.0, e.grace_seconds)
    return {"at": now + timedelta(seconds=grace), "detail": f"grace {e.grace_seconds:g}s"}


def _postpone(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "at": now + timedelta(seconds=p.unsignable_retry_seconds),
        "detail": f"not sent: {f.holds.unsignable}",
    }


def _in_doubt_after_window(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"no definite answer after {p.retry_window_seconds:g}s of resending; check with the "
        "Company whether it was done"
    }


def _unreached(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"the Company could not be reached for {p.retry_window_seconds:g}s; nothing was delivered"
    }


def _wait_expiry(f: Facts) -> datetime | None:
    # A second past expiry: the Due that follows settles it as at any expiry.
    return None if f.approved_expires_at is None else f.approved_expires_at + timedelta(seconds=1)


def _other_account_wait(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"at": _wait_expiry(f), "detail": e.detail, "attempt_outcome": NOT_SENT}


def _sign_in_wait(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    since = e.signed_in_since
    return {
        "at": now if since else _wait_expiry(f),
        "detail": f"{'sending again, signed in since' if since else 'waiting for sign-in'}: {e.detail}",
        "attempt_outcome": SIGN_IN_ASKED,
        "new_message_id": f.interface == "conversation",
    }


def _performed_answer(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"detail": e.detail or "performed"}


def _new_terms(e: Answer) -> str:
    return f"new terms (revision {e.revision})"


def _refusal_detail(e: Answer) -> str:
    return _new_terms(e) if e.kind == AnswerKind.NEW_REVISION else e.detail


def _refused_after_success(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": "an earlier send was answered with a success status (its body was cut off); "
        f"a resend then got: {_refusal_detail(e)}",
        "record_revision": e.kind == AnswerKind.NEW_REVISION,
    }


def _refused_in_doubt(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"{e.detail}; an earlier send may still have been performed, so check with the Company"
    }


def _new_revision_in_doubt(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"the Company answered a resend with new terms (revision {e.revision}); an earlier "
        "send may have been performed, so find out before approving anything new",
        "record_revision": True,
    }


def _new_revision(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"the Company did not perform it and returned new terms (revision {e.revision}); "
        "they need a new approval",
        "record_revision": True,
    }


def _retry(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    # Backoff counts the approved revision's attempts in its window, this one included: a new
    # revision starts again from the first delay, as it starts its own window.
    number = len(f.window_attempts) + 1
    retry_after = e.retry_after if e.kind == AnswerKind.RETRY_LATER else None
    raw = p.backoff.delay_at(number, retry_after, e.jitter)
    # Never past the approval's expiry or the retry window: the Due then ends it there.
    limits = [t for t in (f.approved_expires_at, f.window_end(p, e.started_at or now)) if t]
    limit = (min(limits) - now).total_seconds() if limits else raw
    delay = max(0.0, min(raw, limit))
    words = {
        AnswerKind.RETRY_LATER: f"the Company asked us to wait ({e.detail})",
        AnswerKind.IN_DOUBT: f"no definite answer ({e.detail}); resending",
        AnswerKind.NOT_SENT: f"not delivered ({e.detail}); resending",
    }
    return {
        "at": now + timedelta(seconds=delay),
        # inline_retry_seconds 0: every wait goes through the store, even one of 0 s (a clock that
        # does not move between two sends must not make one pass resend for ever).
        "inline": p.inline_retry_seconds > 0 and delay <= p.inline_retry_seconds,
        "detail": words[e.kind],
    }


def _interrupted(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"the sender ({e.owner}) stopped before an answer arrived; it may have been performed",
        "attempt_outcome": INTERRUPTED,
    }


def _resolution(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"detail": "confirmed performed" if e.performed else "confirmed not performed"}


# ---- the rules, in order -------------------------------------------------------------------------

_SUCCESS_CUT_OFF = "the Company answered with a success status, though its answer was cut off"

RULES: tuple[Rule, ...] = (
    # The person.
    Rule(
        "approve a revision that is not current",
        ALL,
        Approve,
        _not_current,
        None,
        Do.REFUSE,
        _refused_not_current,
    ),
    Rule("approve when not open", ALL - OPEN, Approve, None, None, Do.REFUSE, _refused_not_open),
    Rule(
        "approve an expired revision",
        OPEN,
        Approve,
        _current_expired,
        None,
        Do.REFUSE,
        _says("this revision has expired; it can no longer be approved"),
    ),
    Rule("approve while held", OPEN, Approve, _held, None, Do.REFUSE, _refused_held),
    Rule("approve", OPEN, Approve, None, Status.APPROVED, Do.RECORD_APPROVAL, _approval),
    Rule("decline a revision that is not current", ALL, Decline, _not_current, None, Do.REFUSE),
    Rule("decline", UNSENT, Decline, None, Status.DECLINED, Do.RECORD_DECLINE),
    Rule("decline once sent", ALL - UNSENT, Decline, None, None, Do.REFUSE),
    Rule(
        "withdraw",
        frozenset({Status.APPROVED}),
        Withdraw,
        None,
        Status.WITHDRAWN,
        Do.RECORD_WITHDRAWAL,
    ),
    Rule("withdraw when not approved", ALL - {Status.APPROVED}, Withdraw, None, None, Do.REFUSE),
    Rule(
        "resolve: performed",
        frozenset({Status.OUTCOME_UNKNOWN}),
        ResolveUnknown,
        _performed,
        Status.PERFORMED,
        Do.RECORD_RESOLUTION,
        _resolution,
    ),
    Rule(
        "resolve: not performed, newer terms",
        frozenset({Status.OUTCOME_UNKNOWN}),
        ResolveUnknown,
        _newer_revision,
        Status.PENDING,
        Do.RECORD_RESOLUTION,
        _resolution,
    ),
    Rule(
        "resolve: not performed",
        frozenset({Status.OUTCOME_UNKNOWN}),
        ResolveUnknown,
        None,
        Status.NOT_PERFORMED,
        Do.RECORD_RESOLUTION,
        _resolution,
    ),
    Rule(
        "resolve when not unknown",
        ALL - {Status.OUTCOME_UNKNOWN},
        ResolveUnknown,
        None,
        None,
        Do.REFUSE,
    ),
    Rule("send now", frozenset({Status.APPROVED}), SendNow, _in_grace, None, Do.END_GRACE),
    Rule("send now (nothing to end)", ALL, SendNow, None, None, Do.NOTHING),
    # New terms, not in answer to our approval (the approval of other terms must not be sent).
    Rule(
        "new terms while approved",
        frozenset({Status.APPROVED}),
        NewRevision,
        None,
        Status.PENDING,
        Do.SUPERSEDE,
        _says("a new revision arrived before sending; approve again"),
    ),
    Rule(
        "new terms to decide on",
        frozenset(
            {
                Status.PENDING,
                Status.WITHDRAWN,
                Status.DECLINED,
                Status.EXPIRED,
                Status.NOT_PERFORMED,
            }
        ),
        NewRevision,
        None,
        Status.PENDING,
        Do.RECORD_REVISION,
    ),
    Rule(
        "new terms once sent",
        frozenset({Status.SENDING, Status.OUTCOME_UNKNOWN, Status.PERFORMED}),
        NewRevision,
        None,
        None,
        Do.RECORD_REVISION,
    ),
    # The clock.
    Rule("expire", UNSENT, Tick, _current_expired, Status.EXPIRED, Do.EXPIRE),
    Rule("time passes", ALL, Tick, None, None, Do.NOTHING),
    # A dispatcher's turn (it holds the lease).
    Rule(
        "due, never sent, terms expired",
        frozenset({Status.APPROVED}),
        Due,
        _approved_expired,
        Status.EXPIRED,
        Do.EXPIRE,
        _says("the approved terms expired before they could be sent"),
    ),
    Rule(
        "due after a cut-off success",
        SENDING,
        Due,
        _expired_after_success,
        Status.PERFORMED,
        Do.SETTLE,
        _says(_SUCCESS_CUT_OFF),
    ),
    Rule(
        "due, terms expired in doubt",
        SENDING,
        Due,
        _expired_in_doubt,
        Status.OUTCOME_UNKNOWN,
        Do.SETTLE,
        _says(
            "the approved terms expired before the Company gave a definite answer; check with the "
            "Company (for example the order) whether it was done"
        ),
    ),
    Rule(
        "due, terms expired",
        SENDING,
        Due,
        _approved_expired,
        Status.NOT_PERFORMED,
        Do.SETTLE,
        _says("the approved terms expired before the approval could be delivered"),
    ),
    Rule(
        "due, window over in doubt",
        SENDING,
        Due,
        _window_over_in_doubt,
        Status.OUTCOME_UNKNOWN,
        Do.SETTLE,
        _in_doubt_after_window,
    ),
    Rule(
        "due, window over", SENDING, Due, _window_ended, Status.NOT_PERFORMED, Do.SETTLE, _unreached
    ),
    Rule("due, unsignable", SENDABLE, Due, _unsignable, None, Do.POSTPONE, _postpone),
    Rule("due", SENDABLE, Due, None, Status.SENDING, Do.SEND),
    # The Company's answer to an attempt.
    Rule(
        "held for another account",
        SENDING,
        Answer,
        _kind(AnswerKind.OTHER_ACCOUNT),
        None,
        Do.WAIT_FOR_SIGN_IN,
        _other_account_wait,
    ),
    Rule(
        "sign-in challenge",
        SENDING,
        Answer,
        _kind(AnswerKind.SIGN_IN, success=False),
        None,
        Do.WAIT_FOR_SIGN_IN,
        _sign_in_wait,
    ),
    Rule(
        "performed",
        SENDING,
        Answer,
        _kind(AnswerKind.PERFORMED),
        Status.PERFORMED,
        Do.SETTLE,
        _performed_answer,
    ),
    Rule(
        "refused after a cut-off success",
        SENDING,
        Answer,
        _kind(*REFUSALS, AnswerKind.SIGN_IN, AnswerKind.NEW_REVISION, success=True),
        Status.PERFORMED,
        Do.SETTLE,
        _refused_after_success,
    ),
    Rule(
        "new revision in doubt",
        SENDING,
        Answer,
        _kind(AnswerKind.NEW_REVISION, doubt=True),
        Status.OUTCOME_UNKNOWN,
        Do.SETTLE,
        _new_revision_in_doubt,
    ),
    Rule(
        "new revision",
        SENDING,
        Answer,
        _kind(AnswerKind.NEW_REVISION),
        Status.PENDING,
        Do.SETTLE,
        _new_revision,
    ),
    Rule(
        "refused in doubt",
        SENDING,
        Answer,
        _kind(*REFUSALS, doubt=True),
        Status.OUTCOME_UNKNOWN,
        Do.SETTLE,
        _refused_in_doubt,
    ),
    Rule(
        "refused",
        SENDING,
        Answer,
        _kind(*REFUSALS),
        Status.NOT_PERFORMED,
        Do.SETTLE,
        lambda f, e, now, p: {"detail": e.detail},
    ),
    Rule(
        "in doubt, resending can't tell",
        SENDING,
        Answer,
        _kind(AnswerKind.IN_DOUBT_FINAL),
        Status.OUTCOME_UNKNOWN,
        Do.SETTLE,
        lambda f, e, now, p: {"detail": e.detail},
    ),
    Rule("no definite answer: resend", SENDING, Answer, _kind(*RETRIES), None, Do.RETRY, _retry),
    # Finding out another way (the outcome probe, Ops 7); the person's word wins meanwhile.
    Rule(
        "found out: performed",
        frozenset({Status.OUTCOME_UNKNOWN}),
        FoundOut,
        _found_performed,
        Status.PERFORMED,
        Do.SETTLE,
    ),
    Rule(
        "found out: not performed",
        frozenset({Status.OUTCOME_UNKNOWN}),
        FoundOut,
        _found_not_performed,
        Status.NOT_PERFORMED,
        Do.SETTLE,
    ),
    Rule(
        "nothing definite found",
        frozenset({Status.OUTCOME_UNKNOWN}),
        FoundOut,
        None,
        None,
        Do.LOOK_AGAIN,
        lambda f, e, now, p: {"at": e.next_look},
    ),
    Rule(
        "found out once resolved",
        ALL - {Status.OUTCOME_UNKNOWN},
        FoundOut,
        None,
        None,
        Do.REFUSE,
        _says("the person resolved it meanwhile: their word stands"),
    ),
    # Sign-in changes, leases, restarts.
    Rule(
        "signed in",
        SENDING,
        SignedIn,
        _resumable,
        None,
        Do.RESUME,
        _says("the approval will be sent again"),
    ),
    Rule("signed in (not yet its own)", ALL, SignedIn, None, None, Do.NOTHING),
    Rule(
        "its sender is gone",
        frozenset({Status.SENDING, Status.OUTCOME_UNKNOWN}),
        SenderGone,
        None,
        None,
        Do.MARK_INTERRUPTED,
        _interrupted,
    ),
)
