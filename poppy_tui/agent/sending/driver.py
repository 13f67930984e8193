"""One operation, from its claim to the end of its turn: the lifecycle's Due (send, settle,
postpone or leave it), the send, the Company's Answer, and what the lifecycle says to do with it
(agent/lifecycle/machine.RULES). This module decides nothing itself; it carries out Steps.

Rules it keeps, each because the spec or a crash demands it:
- Each attempt row is committed (fsynced) before its request leaves (attempts.py), so a process
  killed mid-send leaves evidence ("interrupted") the next sender treats as in doubt.
- Only the lease holder sends (leases.py); losing the lease cancels our send.
- Every resend carries the same approval and the same Idempotency-Key (or message ID), through
  the interface, and in the Session, of the request that returned the approved revision (Ops 3, 6).
- A short wait before resending is spent holding the lease but not a Company turn (turns.py):
  another operation's first send never waits behind it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import random
from collections.abc import Callable, Coroutine
from typing import Any

from poppy_tui.agent.keys import KeyStorageError
from poppy_tui.agent.lifecycle.events import Answer, Due, SenderGone
from poppy_tui.agent.lifecycle.facts import Facts, Holds, Policy
from poppy_tui.agent.lifecycle.machine import Do, Step, step
from poppy_tui.agent.sending.answers import answer_of, cut_off_success
from poppy_tui.agent.sending.attempts import AttemptCommits
from poppy_tui.agent.sending.leases import Lease, keep_lease
from poppy_tui.agent.sending.port import DispatchAgent
from poppy_tui.agent.sending.settles import Finished, Settles
from poppy_tui.agent.sending.turns import Turns
from poppy_tui.agent.sessions import spares_wanted
from poppy_tui.agent.store import (
    AttemptRecord,
    OperationRecord,
    RevisionRecord,
    StateError,
    Status,
    Store,
)
from poppy_tui.agent.store.lifecycle_facts import facts_of
from poppy_tui.agent.store.store import now_utc, parse_stamp
from poppy_tui.agent.transports import Exchange, outcome_name
from poppy_tui.protocol.approval import Approval
from poppy_tui.protocol.challenges import INVALID_TOKEN
from poppy_tui.protocol.ids import new_id
from poppy_tui.protocol.outcomes import ApprovalRequired, NotSent, Unknown, as_approval_answer
from poppy_tui.protocol.outcomes import describe

log = logging.getLogger(__name__)

# Hands an operation that waits to resend to the pass, as a coroutine to run in its own task
# given the Company's turns: the pass keeps claiming meanwhile.
HandOn = Callable[[OperationRecord, Callable[[Turns | None], Coroutine[Any, Any, None]]], None]


class Driver:
    def __init__(
        self,
        agent: DispatchAgent,
        owner: str,
        lease_seconds: float,
        policy: Policy,
        settles: Settles,
        wake: Callable[[], None],
    ) -> None:
        self.agent = agent
        self.store: Store = agent.store
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.policy = policy
        self.settles = settles
        self._wake = wake
        # Operations being handled (sending, waiting for a turn or to resend).
        self.handling = 0
        # Of those, the ones waiting to resend in this process (or handed on to): while there are
        # any, the pass keeps looking for newly due work (dispatcher.py).
        self.waiting: set[int] = set()
        self.attempts = AttemptCommits(self.store, owner, settles.commit, lambda: self.handling)
        # The token fingerprint each approval waiting for sign-in was refused with (None: sent
        # signed out): it is resent once another token is held (dispatcher.resume_signed_in).
        self.challenged_with: dict[int, str | None] = {}

    # ---- the operation's turn --------------------------------------------------------------------

    async def handle(
        self,
        op: OperationRecord,
        slot: Turns | None = None,
        started: AttemptRecord | None = None,
        hand_on: HandOn | None = None,
        lease: Lease | None = None,
        after: float = 0.0,
    ) -> None:
        """`started`: the operation's first attempt, committed with its claim, not yet fsynced.
        `hand_on`: where to hand the operation when it waits to resend (a lone send, run in the
        pass's own task); `lease`, `after`: a handed-on operation's lease, and its wait."""
        if lease is None:
            lease = Lease()
            keep_lease(self.store, op.id, self.owner, self.lease_seconds, lease)
        self.handling += 1
        handed = False
        try:
            while True:
                if after > 0 and not await self._wait(op.id, lease, after):
                    return
                if slot is None:
                    again = await self._turn(op, lease, started)
                else:
                    spares_wanted.set(False)  # this task's own context: one of several sends
                    async with slot:  # the lease is held (and renewed) while waiting for a turn
                        again = await self._turn(op, lease, started)
                started = None
                if again is None:
                    return
                op, after = self.store.get_operation(op.id), again
                if hand_on is not None:
                    self.waiting.add(op.id)  # from now: its task may not have started yet
                    hand_on(op, functools.partial(self.handle, op, lease=lease, after=again))
                    handed = True
                    return
        except StateError as exc:
            # Declined, withdrawn, superseded or expired between the claim and the send: nothing
            # was sent for this claim. Give the lease back so the next decision isn't delayed.
            log.info("operation %s not sent: %s", op.id, exc, exc_info=True)
            self.store.release_lease(op.id, self.owner)
        finally:
            self.handling -= 1
            if not handed:
                lease.stop_renewing()

    async def _wait(self, op_row: int, lease: Lease, delay: float) -> bool:
        """Wait to resend, holding the lease (and no Company turn). False: the lease is gone."""
        if not self.store.renew_lease(op_row, self.owner, self.lease_seconds + delay):
            return False
        self.waiting.add(op_row)
        try:
            await asyncio.wait_for(lease.lost.wait(), delay)
            return False  # lost the lease while waiting
        except TimeoutError:
            return True
        finally:
            self.waiting.discard(op_row)

    async def _turn(
        self, op: OperationRecord, lease: Lease, started: AttemptRecord | None
    ) -> float | None:
        """One attempt, or the decision not to make one. Returns how long to wait before resending
        in this process (the lease is kept), or None when the operation's turn is over."""
        attempts = self._mark_interrupted(op)
        if op.approved_revision_id is None:
            raise StateError("nothing is approved")
        approved, sending = self._approved_request(op)
        facts = facts_of(op, approved, sending.interface, attempts)
        if started is not None:
            # Committed with the claim, whose statement checked what the Due would (due, terms not
            # expired, signable: dispatcher.py). What is left is the fsync, before the request
            # leaves; here, on the loop, since no other send of this pass is under way.
            attempt = started
            self.store.sync_through(self.store.take_awaited())
        else:
            due = self._due(facts)
            if due.do != Do.SEND:
                self._not_sent(op, due)
                return None
            if lease.lost.is_set():
                return None
            attempt = await self.attempts.begin(op.id)
        exchange = await self._send_guarded(
            sending, Approval(op.operation_id, approved.revision), lease
        )
        if exchange is None:
            return None  # lease lost mid-send: the attempt stays "interrupted" for whoever is next
        exchange = dataclasses.replace(exchange, outcome=as_approval_answer(exchange.outcome))
        finished = (
            attempt.id,
            outcome_name(exchange.outcome),
            exchange.status,
            exchange.response,
            exchange.detail or describe(exchange.outcome),
        )
        sent = dataclasses.replace(facts, status=Status.SENDING)
        answer, decided = await self._answered(
            op, sending, approved, sent, attempt, exchange, finished
        )
        return self._carry_out(op, sending, exchange, finished, decided, answer.signed_in_since)

    def _due(self, facts: Facts) -> Step:
        now = now_utc()
        due = step(facts, Due(), now, self.policy)
        if due.do == Do.SEND:
            # Asked only now: it may load the key, which a settle or an expiry doesn't need.
            problem = self.agent.signing_problem()
            if problem:
                due = step(
                    dataclasses.replace(facts, holds=Holds(unsignable=problem)),
                    Due(),
                    now,
                    self.policy,
                )
        return due

    def _not_sent(self, op: OperationRecord, due: Step) -> None:
        if due.do == Do.SETTLE:
            self.settles.queue(op.id, due.to, due.detail)
            self.challenged_with.pop(op.id, None)
        elif due.do == Do.EXPIRE:
            # An unsent approval that expired is expire_due's to record (status expired); claims
            # leave those alone, and one that expired since its claim is not sent either.
            raise StateError(due.detail)
        elif due.do == Do.POSTPONE:
            # Nothing can leave the machine: that is no attempt, and certainly no unknown outcome.
            # Keep the approval and try again later (the key may be fixed by then).
            self.store.postpone(op.id, self.owner, due.delay(now_utc()), due.detail)

    async def _answered(
        self,
        op: OperationRecord,
        sending: OperationRecord,
        approved: RevisionRecord,
        facts: Facts,
        attempt: AttemptRecord,
        exchange: Exchange,
        finished: Finished,
    ) -> tuple[Answer, Step]:
        """The answer, and the lifecycle's Step for it; first what the answer tells sign-in."""
        cut_off = cut_off_success(sending.interface, finished[1], finished[2])
        token_refused = signed_in_since = False
        challenge = exchange.challenge
        if exchange.other_account is not None:
            # Not sent: signed in there as another account than the operation's, whose token must
            # not carry it (Ops 3). Kept, as for sign-in, until signed in as its own.
            self.challenged_with[op.id] = await self.agent.sign_in_state(op.company)
        elif (
            challenge is not None and challenge.needs_sign_in and not (facts.saw_success or cut_off)
        ):
            # The token the request carried, not the one held now: a refresh between the send and
            # this answer gave a token the Company never saw (RFC 6750 3.1 refuses the token
            # presented), and it must not be dropped for the old one's refusal.
            refused = exchange.token_fingerprint
            if refused is not None and challenge.error == INVALID_TOKEN:
                token_refused = True
                await self.agent.token_refused(op.company, refused)
            # A token newer than the refused one held already (renewed just now, or refreshed
            # while the request was out): no sign-in to wait for, and none to ask for.
            held = await self.agent.sign_in_state(op.company)
            signed_in_since = held is not None and held != refused
            if signed_in_since:
                self.challenged_with.pop(op.id, None)
            else:
                self.challenged_with[op.id] = refused
        answer = answer_of(
            exchange,
            op.operation_id,
            approved.revision,
            started_at=parse_stamp(attempt.started_at),
            cut_off_success=cut_off,
            token_refused=token_refused,
            signed_in_since=signed_in_since,
            jitter=random.random(),
        )
        return answer, step(facts, answer, now_utc(), self.policy)

    def _carry_out(
        self,
        op: OperationRecord,
        sending: OperationRecord,
        exchange: Exchange,
        finished: Finished,
        decided: Step,
        signed_in_since: bool = False,
    ) -> float | None:
        if decided.do == Do.WAIT_FOR_SIGN_IN:
            # A conversation answers a message sent again with the same ID with its first answer
            # (spec 8.3), this very sign-in request: after sign-in the approval goes in a new
            # message. It was not taken, and a new message with the same approval can't perform
            # it twice (Ops 7).
            assert decided.at is not None
            new_key = new_id("msg_") if decided.new_message_id else None
            self.store.wait_for_sign_in(
                (finished[0], decided.attempt_outcome or finished[1], *finished[2:]),
                op.id,
                self.owner,
                decided.at,
                decided.detail,
                new_key,
                signed_in_since,
            )
            if signed_in_since:
                self._wake()
            return None
        if decided.do == Do.SETTLE:
            if decided.record_revision:
                # Kept with the Session the answer came in: its approval goes there (Ops 3).
                outcome = exchange.outcome
                assert isinstance(outcome, ApprovalRequired)
                self.store.record_operation(
                    op.company.id,
                    sending.request_id,
                    exchange.session_id,
                    outcome.operation,
                    exchange.carrier_text,
                    sending.interface,
                )
            self.settles.queue(op.id, decided.to, decided.detail, exchange.response, finished)
            self.challenged_with.pop(op.id, None)
            return None
        if decided.do == Do.RETRY:
            self.store.finish_attempt(*finished)
            delay = decided.delay(now_utc())
            if not decided.inline:
                self.store.schedule_retry(op.id, self.owner, delay, decided.detail)
                return None
            return delay
        log.error(
            "operation %s: the lifecycle said %s (%s) after a send", op.id, decided.do, decided.rule
        )
        self.store.finish_attempt(*finished)
        return None

    # ---- the approved revision's request ---------------------------------------------------------

    def _approved_request(self, op: OperationRecord) -> tuple[RevisionRecord, OperationRecord]:
        """The approved revision, and the operation as its approval is sent: with the request that
        returned that revision ("the same request again", Ops 6), even if a newer one has since
        come from another request; through that request's interface, which need not be the
        operation's first (Ops 6); in the Session that revision was returned in: an operation
        returned signed out can be approved only there (Ops 3)."""
        if op.current.id == op.approved_revision_id:
            approved = op.current
            return approved, dataclasses.replace(
                op, interface=op.request.interface, session_id=approved.session_id or op.session_id
            )
        assert op.approved_revision_id is not None
        approved = self.store.get_revision(op.approved_revision_id)
        request, _, _ = self.store.get_request(approved.request_id)
        return approved, dataclasses.replace(
            op,
            request=request,
            request_id=approved.request_id,
            interface=request.interface,
            session_id=approved.session_id or op.session_id,
        )

    def _mark_interrupted(self, op: OperationRecord) -> list[AttemptRecord]:
        """Attempts started by a sender that is gone: their requests may have reached the Company
        (the lifecycle's SenderGone). Returns the operation's attempts as they stand afterwards."""
        if op.attempt_count == 0:
            return []  # attempt_count counts every attempt row (written with it): none to read
        attempts = self.store.attempts(op.id)
        orphans = [a for a in attempts if a.finished_at is None and a.owner != self.owner]
        for attempt in orphans:
            gone = step(facts_of(op), SenderGone(attempt.owner or ""), now_utc(), self.policy)
            self.store.finish_attempt(
                attempt.id, gone.attempt_outcome or "interrupted", None, None, gone.detail
            )
        return self.store.attempts(op.id) if orphans else attempts

    # ---- the send ---------------------------------------------------------------------------------

    async def _send_guarded(
        self, op: OperationRecord, approval: Approval, lease: Lease
    ) -> Exchange | None:
        """The send, or None when the lease was lost (the lease renewal then stops the send itself)."""
        if lease.lost.is_set():
            return None
        me = asyncio.current_task()
        lease.sending = me
        self.attempts.sending += 1
        try:
            return await self._send_safely(op, approval)
        except asyncio.CancelledError:
            # Sent from this task (a task of its own per send costs more than the send's own
            # bookkeeping): lose() cancels this task, and only that cancellation is taken back.
            # A lease lost now was lost during this send (one lost before it returned None
            # above), so lose() did cancel us.
            if lease.lost.is_set() and me is not None and me.uncancel() == 0:
                return None  # our send was stopped because the lease is gone; we were not cancelled
            raise
        finally:
            self.attempts.sending -= 1
            lease.sending = None

    async def _send_safely(self, op: OperationRecord, approval: Approval) -> Exchange:
        try:
            return await self.agent.send_approval(op, approval)
        except asyncio.CancelledError:
            raise
        except KeyStorageError as exc:
            # The request could not be signed, so it never left: not sent, not in doubt.
            log.warning("operation %s not sent: %s", op.id, exc, exc_info=True)
            detail = f"not sent: {exc}"
            return Exchange(NotSent(detail), None, {"error": detail}, op.session_id, detail)
        except Exception as exc:  # a bug of ours must not look like "not sent"
            log.exception("sending operation %s failed inside poppy-tui", op.id)
            detail = f"poppy-tui failed while sending ({type(exc).__name__}: {exc})"
            return Exchange(Unknown(detail), None, {"error": detail}, op.session_id, detail)
