"""The conditions the lifecycle's rules test, and the words and times each rule's Step carries.
A condition's docstring is its words in docs/state-machine.md's table."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from poppy_tui.agent.lifecycle.events import Answer, AnswerKind
from poppy_tui.agent.lifecycle.facts import Facts, Policy
from poppy_tui.agent.lifecycle.states import INTERRUPTED, NOT_SENT, SIGN_IN_ASKED, Status
from poppy_tui.agent.lifecycle.steps import Guard, Says


def not_current(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """not the current revision"""
    return bool(e.revision_id != f.current_revision_id)


def current_expired(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """the current revision's expires_at passed"""
    return f.current_expires_at <= now


def held(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """held: the same action in doubt (Ops 7), or signed in as another account (Ops 3)"""
    return f.holds.approval is not None


def in_grace(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """its send time is still ahead"""
    return f.send_after is not None and f.send_after > now


def approved_expired(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """the approved revision's expires_at passed"""
    return expired(f, now)


def expired_after_success(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """a cut-off 2xx was seen, and the terms expired or the window ended"""
    return f.saw_success and (expired(f, now) or window_over(f, now, p))


def expired_in_doubt(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """the approved terms expired, something in doubt"""
    return expired(f, now) and f.in_doubt


def window_over_in_doubt(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """the approved revision's retry window ended, something in doubt"""
    return window_over(f, now, p) and f.in_doubt


def window_ended(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """the approved revision's retry window ended"""
    return window_over(f, now, p)


def unsignable(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """approvals can't be signed on this machine"""
    return f.holds.unsignable is not None


def kind(*kinds: AnswerKind, success: bool | None = None, doubt: bool | None = None) -> Guard:
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


def found_performed(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """it found a definite answer: performed"""
    return bool(e.settles == Status.PERFORMED)


def found_not_performed(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """it found a definite answer: not performed"""
    return bool(e.settles == Status.NOT_PERFORMED)


def resumable(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """waiting for sign-in; a token other than the refused one, not another account's"""
    return f.waiting_sign_in is not None and e.token_differs and not e.other_account


def performed(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """performed"""
    return bool(e.performed)


def newer_revision(f: Facts, e: Any, now: datetime, p: Policy) -> bool:
    """not performed, and a newer revision arrived"""
    return f.newer_revision


def expired(f: Facts, now: datetime) -> bool:
    return f.approved_expires_at is not None and f.approved_expires_at <= now


def window_over(f: Facts, now: datetime, p: Policy) -> bool:
    end = f.window_end(p)
    return end is not None and end <= now


# ---- what each rule says ------------------------------------------------------------------------


def says(detail: str) -> Says:
    return lambda f, e, now, p: {"detail": detail}


def refused_not_current(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"detail": "a newer revision of these terms arrived; review it before approving"}


def refused_not_open(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"detail": f"the operation is {f.status.value}; it can't be approved now"}


def refused_held(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"detail": f.holds.approval or ""}


def approval(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    grace = max(0.0, e.grace_seconds)
    return {"at": now + timedelta(seconds=grace), "detail": f"grace {e.grace_seconds:g}s"}


def postpone(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "at": now + timedelta(seconds=p.unsignable_retry_seconds),
        "detail": f"not sent: {f.holds.unsignable}",
    }


def in_doubt_after_window(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"no definite answer after {p.retry_window_seconds:g}s of resending; check with the "
        "Company whether it was done"
    }


def unreached(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"the Company could not be reached for {p.retry_window_seconds:g}s; nothing was delivered"
    }


def wait_expiry(f: Facts) -> datetime | None:
    # A second past expiry: the Due that follows settles it as at any expiry.
    return None if f.approved_expires_at is None else f.approved_expires_at + timedelta(seconds=1)


def other_account_wait(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"at": wait_expiry(f), "detail": e.detail, "attempt_outcome": NOT_SENT}


def sign_in_wait(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    since = e.signed_in_since
    return {
        "at": now if since else wait_expiry(f),
        "detail": f"{'sending again, signed in since' if since else 'waiting for sign-in'}: {e.detail}",
        "attempt_outcome": SIGN_IN_ASKED,
        "new_message_id": f.interface == "conversation",
    }


def performed_answer(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"detail": e.detail or "performed"}


def new_terms(e: Answer) -> str:
    return f"new terms (revision {e.revision})"


def refusal_detail(e: Answer) -> str:
    return new_terms(e) if e.kind == AnswerKind.NEW_REVISION else e.detail


def refused_after_success(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": "an earlier send was answered with a success status (its body was cut off); "
        f"a resend then got: {refusal_detail(e)}",
        "record_revision": e.kind == AnswerKind.NEW_REVISION,
    }


def refused_in_doubt(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"{e.detail}; an earlier send may still have been performed, so check with the Company"
    }


def new_revision_in_doubt(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"the Company answered a resend with new terms (revision {e.revision}); an earlier "
        "send may have been performed, so find out before approving anything new",
        "record_revision": True,
    }


def new_revision(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"the Company did not perform it and returned new terms (revision {e.revision}); "
        "they need a new approval",
        "record_revision": True,
    }


def retry(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
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


def interrupted(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {
        "detail": f"the sender ({e.owner}) stopped before an answer arrived; it may have been performed",
        "attempt_outcome": INTERRUPTED,
    }


def resolution(f: Facts, e: Any, now: datetime, p: Policy) -> dict[str, Any]:
    return {"detail": "confirmed performed" if e.performed else "confirmed not performed"}
