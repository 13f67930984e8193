"""The lifecycle (poppy_tui/agent/lifecycle): pure, complete, and what docs/state-machine.md says.

Every rule is reached by some state and event, no state and event falls through the rules, the
doc's table is the module's, the module imports nothing with I/O, and a revision's timers are its
own (audit A52)."""

from __future__ import annotations

import ast
import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from poppy_tui.agent import lifecycle as lc
from poppy_tui.agent.lifecycle import (
    Answer,
    AnswerKind,
    Approve,
    AttemptFact,
    Decline,
    Do,
    Due,
    Facts,
    FoundOut,
    Holds,
    NewRevision,
    Policy,
    ResolveUnknown,
    SendNow,
    SenderGone,
    SignedIn,
    Status,
    Tick,
    Why,
    Withdraw,
    explain,
    render_table,
    step,
)
from poppy_tui.protocol.retry import BackoffPolicy

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
POLICY = Policy(retry_window_seconds=600, inline_retry_seconds=15, backoff=BackoffPolicy())
REV1, REV2 = 11, 12


def ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)


def later(seconds: float) -> datetime:
    return NOW + timedelta(seconds=seconds)


def facts(status: Status = Status.PENDING, **changes) -> Facts:
    values = {
        "status": status,
        "current_revision_id": REV1,
        "current_revision": "1",
        "current_expires_at": later(900),
    }
    if status in (Status.APPROVED, Status.SENDING, Status.OUTCOME_UNKNOWN):
        values |= {
            "approved_revision_id": REV1,
            "approved_revision": "1",
            "approved_expires_at": later(900),
            "send_after": ago(1),
        }
    values |= changes
    return Facts(**values)


# ---- the doc is drawn from the module ------------------------------------------------------------


def test_the_docs_transition_table_is_the_modules():
    doc = (ROOT / "docs" / "state-machine.md").read_text(encoding="utf-8")
    table = render_table()
    begin, end = table.splitlines()[0], table.splitlines()[-1]
    assert begin in doc and end in doc, "docs/state-machine.md holds the generated table"
    shown = doc[doc.index(begin) : doc.index(end) + len(end)]
    assert shown == table, (
        "docs/state-machine.md's lifecycle table differs from poppy_tui/agent/lifecycle: paste "
        "`python -c 'from poppy_tui.agent.lifecycle import render_table; print(render_table())'`"
    )


def test_the_check_notices_a_rule_the_doc_lacks(monkeypatch):
    """The neighbour: a rule added to the module changes the table, so the doc no longer matches."""
    from poppy_tui.agent.lifecycle import machine

    before = render_table()
    extra = machine.Rule(
        "a rule nobody documented", frozenset(Status), Tick, None, None, Do.NOTHING
    )
    monkeypatch.setattr(machine, "RULES", (*machine.RULES, extra))
    from poppy_tui.agent.lifecycle import table

    monkeypatch.setattr(table, "RULES", machine.RULES)
    assert render_table() != before and "a rule nobody documented" in render_table()


# ---- pure -------------------------------------------------------------------------------------------

ALLOWED = {"__future__", "collections.abc", "dataclasses", "datetime", "enum", "typing"}


def test_the_lifecycle_imports_only_the_protocol_and_pure_helpers():
    folder = ROOT / "poppy_tui" / "agent" / "lifecycle"
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                ours = name.startswith(("poppy_tui.protocol.", "poppy_tui.agent.lifecycle."))
                assert ours or name in ALLOWED or name == "poppy_tui.lazy_exports", (
                    f"{path.name} imports {name}"
                )


# ---- complete: every state and event has a rule, every rule is reached -------------------------------


def _fact_variants():
    attempt = AttemptFact(REV1, ago(30), "retry_later")
    for status in Status:
        base = facts(status)
        yield base
        if status in (Status.APPROVED, Status.SENDING, Status.OUTCOME_UNKNOWN):
            yield facts(status, attempts=(AttemptFact(REV1, ago(30), "not_sent"),))
            yield facts(status, attempts=(attempt,))
            yield facts(status, attempts=(AttemptFact(REV1, ago(700), "not_sent"),))
            yield facts(status, attempts=(AttemptFact(REV1, ago(700), "unknown"),))
            yield facts(status, attempts=(AttemptFact(REV1, ago(30), "unknown", 201),))
            yield facts(status, approved_expires_at=ago(1), attempts=(attempt,))
            cut_off = AttemptFact(REV1, ago(700), "unknown", 201)
            yield facts(status, attempts=(cut_off,))
            yield facts(status, approved_expires_at=ago(1))
            yield facts(
                status,
                approved_expires_at=ago(1),
                attempts=(AttemptFact(REV1, ago(30), "not_sent"),),
            )
            yield facts(status, holds=Holds(unsignable="no keyring"))
            yield facts(status, holds=Holds(other_account="signed in there as B"))
            yield facts(status, waiting_sign_in="waiting for sign-in: x", send_after=later(5))
            yield facts(status, current_revision_id=REV2)
        else:
            yield facts(status, current_expires_at=ago(1))
            yield facts(status, holds=Holds(same_action="an earlier one is in doubt"))


def _events():
    yield from (Approve(REV1, 5), Approve(REV2, 5), Decline(REV1), Decline(REV2), Withdraw())
    yield from (
        ResolveUnknown(True),
        ResolveUnknown(False),
        SendNow(),
        Tick(),
        Due(),
        NewRevision(),
    )
    for kind in AnswerKind:
        yield Answer(kind, "x", revision="2", started_at=ago(1))
        yield Answer(kind, "x", revision="2", started_at=ago(1), cut_off_success=True)
    yield from (
        SignedIn(True),
        SignedIn(False),
        SignedIn(True, other_account=True),
        SenderGone("x"),
    )
    yield from (
        FoundOut(Status.PERFORMED),
        FoundOut(Status.NOT_PERFORMED),
        FoundOut(None, later(30)),
    )


def test_every_state_and_event_has_a_rule_and_every_rule_is_reached():
    reached = set()
    for f, event in itertools.product(list(_fact_variants()), list(_events())):
        if isinstance(event, (Answer, SenderGone)) and f.status not in (
            Status.SENDING,
            Status.OUTCOME_UNKNOWN,
        ):
            continue  # only a send under way is answered; only an attempt can be interrupted
        if isinstance(event, Due) and f.status not in (Status.APPROVED, Status.SENDING):
            continue  # only approved and sending operations are claimed
        if isinstance(event, Answer) and f.status == Status.OUTCOME_UNKNOWN:
            continue  # the outcome probe answers those (agent/outcome_probe.py)
        result = step(f, event, NOW, POLICY)
        reached.add(result.rule)
        assert result.do != Do.SEND or f.status in (Status.APPROVED, Status.SENDING)
        entered = result.to != f.status
        if entered and (result.to.is_final or result.to == Status.OUTCOME_UNKNOWN):
            assert result.do in (Do.SETTLE, Do.EXPIRE, Do.RECORD_DECLINE, Do.RECORD_RESOLUTION)
    assert reached == {rule.name for rule in lc.RULES}


# ---- the person's answers ---------------------------------------------------------------------------


def test_approve_records_the_send_time_from_now_and_refuses_what_it_must():
    approved = step(facts(), Approve(REV1, 5), NOW)
    assert (approved.to, approved.do, approved.at) == (
        Status.APPROVED,
        Do.RECORD_APPROVAL,
        later(5),
    )
    assert step(facts(), Approve(REV2, 5), NOW).do == Do.REFUSE
    expired = step(facts(current_expires_at=NOW), Approve(REV1, 5), NOW)
    assert expired.do == Do.REFUSE and "expired" in expired.detail
    held = step(facts(holds=Holds(same_action="x is in doubt")), Approve(REV1, 5), NOW)
    assert (held.do, held.detail) == (Do.REFUSE, "x is in doubt")
    assert step(facts(Status.SENDING), Approve(REV1, 5), NOW).do == Do.REFUSE


def test_resolving_not_performed_with_newer_terms_asks_again():
    newer = facts(Status.OUTCOME_UNKNOWN, current_revision_id=REV2)
    assert step(newer, ResolveUnknown(False), NOW).to == Status.PENDING
    assert (
        step(facts(Status.OUTCOME_UNKNOWN), ResolveUnknown(False), NOW).to == Status.NOT_PERFORMED
    )
    assert step(newer, ResolveUnknown(True), NOW).to == Status.PERFORMED


# ---- a revision's timers are its own (A52) -----------------------------------------------------------


def _second_revision_approved(sent_ago: float, **changes) -> Facts:
    """Revision 1 sent `sent_ago` seconds ago and answered with revision 2, now approved."""
    values = {
        "current_revision_id": REV2,
        "approved_revision_id": REV2,
        "approved_revision": "2",
        "approved_expires_at": later(900),
        "attempts": (AttemptFact(REV1, ago(sent_ago), "approval_required", 403),),
    }
    values |= changes
    return facts(values.pop("status", Status.APPROVED), **values)


@pytest.mark.parametrize("sent_ago", [1, 599, 601, 3600])
def test_a_new_revisions_approval_is_sent_however_long_after_the_first_revision(sent_ago):
    """Before or after revision 1's window would have ended: revision 2's approval goes out."""
    assert step(_second_revision_approved(sent_ago), Due(), NOW, POLICY).do == Do.SEND


def test_a_new_revisions_retry_window_starts_at_its_own_first_attempt():
    rev1 = AttemptFact(REV1, ago(3600), "approval_required", 403)
    rev2_first = AttemptFact(REV2, ago(30), "retry_later", 503)
    sending = _second_revision_approved(3600, status=Status.SENDING, attempts=(rev1, rev2_first))
    assert sending.window_start() == ago(30)
    assert step(sending, Due(), NOW, POLICY).do == Do.SEND
    over = _second_revision_approved(
        3600, status=Status.SENDING, attempts=(rev1, AttemptFact(REV2, ago(601), "retry_later"))
    )
    assert step(over, Due(), NOW, POLICY).to == Status.OUTCOME_UNKNOWN


def test_a_new_revisions_first_retry_waits_the_first_backoff_not_a_later_ones():
    """Revision 1 was resent five times; revision 2's first 503 gets the first delay (and its
    Retry-After), counted from now."""
    earlier = tuple(AttemptFact(REV1, ago(3600 - n), "retry_later", 503) for n in range(5))
    sending = _second_revision_approved(3600, status=Status.SENDING, attempts=earlier)
    answer = Answer(AnswerKind.RETRY_LATER, "HTTP 503", retry_after=None, started_at=NOW, jitter=1)
    first = step(sending, answer, NOW, POLICY)
    assert first.do == Do.RETRY and first.delay(NOW) == pytest.approx(POLICY.backoff.base_seconds)
    told = step(
        sending, Answer(AnswerKind.RETRY_LATER, "HTTP 503", retry_after=7, started_at=NOW), NOW
    )
    assert told.at == later(7) and told.inline


def test_a_retry_never_waits_past_the_window_or_the_expiry():
    sending = facts(
        Status.SENDING,
        approved_expires_at=later(4),
        attempts=(AttemptFact(REV1, ago(10), "retry_later"),),
    )
    answer = Answer(AnswerKind.RETRY_LATER, "busy", retry_after=120, started_at=ago(1))
    assert step(sending, answer, NOW, POLICY).at == later(4)
    store_wait = step(
        facts(Status.SENDING), Answer(AnswerKind.RETRY_LATER, "b", retry_after=60), NOW
    )
    assert not store_wait.inline and store_wait.at == later(60)
    every_wait_stored = Policy(inline_retry_seconds=0)
    assert not step(
        facts(Status.SENDING), Answer(AnswerKind.IN_DOUBT, "reset"), NOW, every_wait_stored
    ).inline
    # Even a wait of 0 s (its window or terms end now): the next pass, not this one, goes on.
    ending = facts(Status.SENDING, approved_expires_at=NOW)
    zero = step(ending, Answer(AnswerKind.RETRY_LATER, "busy"), NOW, every_wait_stored)
    assert zero.delay(NOW) == 0 and not zero.inline


def test_the_second_revision_answered_with_a_third_needs_a_new_approval_and_in_doubt_does_not():
    clean = _second_revision_approved(700, status=Status.SENDING)
    third = Answer(AnswerKind.NEW_REVISION, revision="3", started_at=NOW)
    assert step(clean, third, NOW).to == Status.PENDING
    doubt = _second_revision_approved(
        700, status=Status.SENDING, attempts=(AttemptFact(REV1, ago(700), "interrupted"),)
    )
    result = step(doubt, third, NOW)
    assert result.to == Status.OUTCOME_UNKNOWN and result.record_revision


# ---- the Company's answers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "clean", "in_doubt"),
    [
        (AnswerKind.PERFORMED, Status.PERFORMED, Status.PERFORMED),
        (AnswerKind.REFUSED, Status.NOT_PERFORMED, Status.OUTCOME_UNKNOWN),
        (AnswerKind.SAME_REVISION, Status.NOT_PERFORMED, Status.OUTCOME_UNKNOWN),
        (AnswerKind.OTHER_OPERATION, Status.NOT_PERFORMED, Status.OUTCOME_UNKNOWN),
        (AnswerKind.BROKE_PROTOCOL, Status.NOT_PERFORMED, Status.OUTCOME_UNKNOWN),
        (AnswerKind.NEW_REVISION, Status.PENDING, Status.OUTCOME_UNKNOWN),
        (AnswerKind.IN_DOUBT_FINAL, Status.OUTCOME_UNKNOWN, Status.OUTCOME_UNKNOWN),
        (AnswerKind.RETRY_LATER, Status.SENDING, Status.SENDING),
        (AnswerKind.IN_DOUBT, Status.SENDING, Status.SENDING),
        (AnswerKind.NOT_SENT, Status.SENDING, Status.SENDING),
        (AnswerKind.SIGN_IN, Status.SENDING, Status.SENDING),
        (AnswerKind.OTHER_ACCOUNT, Status.SENDING, Status.SENDING),
    ],
)
def test_each_answer_kind_leads_where_the_spec_says(kind, clean, in_doubt):
    """Not performed only after an answer that settles it, and only when nothing is in doubt."""
    answer = Answer(kind, "x", revision="2", started_at=NOW)
    assert step(facts(Status.SENDING), answer, NOW).to == clean
    doubtful = facts(Status.SENDING, attempts=(AttemptFact(REV1, ago(5), None),))
    assert step(doubtful, answer, NOW).to == in_doubt


def test_a_sign_in_challenge_keeps_the_approval_until_it_expires_and_resumes_on_a_new_token():
    waiting = step(
        facts(Status.SENDING, interface="conversation"), Answer(AnswerKind.SIGN_IN, "sign in"), NOW
    )
    assert waiting.do == Do.WAIT_FOR_SIGN_IN and waiting.at == later(901) and waiting.new_message_id
    held = facts(Status.SENDING, waiting_sign_in="waiting for sign-in: sign in")
    assert step(held, SignedIn(True), NOW).do == Do.RESUME
    assert step(held, SignedIn(False), NOW).do == Do.NOTHING
    assert step(held, SignedIn(True, other_account=True), NOW).do == Do.NOTHING


# ---- the explanation ----------------------------------------------------------------------------------


def test_every_approval_is_on_its_way_or_says_why_not():
    for f in _fact_variants():
        said = explain(f, NOW)
        assert said.line and said.status == f.status
        if f.status in (Status.APPROVED, Status.SENDING) and not said.on_its_way:
            assert said.why in (Why.SIGN_IN, Why.HELD_OTHER_ACCOUNT, Why.UNSIGNABLE, Why.EXPIRED)


def test_the_explanation_names_the_send_time_and_the_retry_time():
    grace = explain(facts(Status.APPROVED, send_after=later(5)), NOW)
    assert grace.why == Why.GRACE and grace.at == later(5)
    assert grace.sentence() == (
        "approved; sent at 2026-12-07 12:00:05 UTC, when its grace period ends (you can withdraw it until then)"
    )
    retry = explain(
        facts(
            Status.SENDING,
            next_attempt_at=later(30),
            outcome_detail="the Company asked us to wait (HTTP 503)",
        ),
        NOW,
    )
    assert retry.why == Why.RETRY_WAIT and retry.on_its_way and "HTTP 503" in retry.sentence()
    held = explain(facts(holds=Holds(same_action="the same request was approved before")), NOW)
    assert held.why == Why.HELD_SAME_ACTION and not held.on_its_way
    other = explain(facts(Status.APPROVED, holds=Holds(other_account="signed in as B")), NOW)
    assert other.why == Why.HELD_OTHER_ACCOUNT and not other.on_its_way and other.at == later(900)
