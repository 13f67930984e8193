"""The sending half of the approval state machine (docs/state-machine.md).

approved --(grace ends)--> sending --> performed | not_performed | outcome_unknown
                                   \\-> pending (a new revision, when no earlier send is in doubt)
                                   \\-> sending, waiting for sign-in (a sign-in challenge; the approval
                                       is kept and sent again once signed in, before it expires)

Rules the code below keeps, each because the spec or a crash demands it:
- The decision is in the store before we get here; each attempt row is committed before its
  request leaves, so a process killed mid-send leaves evidence ("interrupted") that the next
  dispatcher treats as "may have been performed".
- Only the lease holder sends. The lease is taken atomically in SQL and renewed while a send
  or an in-process retry wait runs; losing it cancels our send rather than risk two senders.
- Every resend carries the same approval and the same Idempotency-Key (or message ID).
- While any earlier send is in doubt, nothing we hear makes us ask for a new approval (Ops 7).
- An answer naming the same revision we approved is a protocol violation: stop, never loop.
- The approval goes through the interface of the request that returned the approved revision.
- Only an answer that says nothing was performed is a refusal of an approval; any other failure
  (a 5xx whatever its body, an MCP tool error, ...) is in doubt (outcomes.as_approval_answer).
- An approval that can't be signed here never becomes an attempt: it is postponed, kept.
- An outcome left unknown is found out about afterwards (outcome_probe.py, via `prober`).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import os
import socket
import uuid
from dataclasses import dataclass
from datetime import timedelta
from collections.abc import Awaitable, Callable

from poppy_tui.agent.config import Config
from poppy_tui.agent.keys import KeyStorageError
from poppy_tui.agent.sessions import spares_wanted
from poppy_tui.agent.store import (
    AttemptRecord,
    CompanyRecord,
    OperationRecord,
    RevisionRecord,
    StateError,
    Status,
    Store,
    StoreError,
)
from poppy_tui.agent.store.durability import Durability
from poppy_tui.agent.store.store import now_utc, parse_stamp
from poppy_tui.agent.transports import Exchange, outcome_name
from poppy_tui.protocol.approval import Approval
from poppy_tui.protocol.challenges import INVALID_TOKEN
from poppy_tui.protocol.ids import new_id
from poppy_tui.protocol.outcomes import (
    ApprovalRequired,
    BadResponse,
    NotPerformed,
    NotSent,
    Performed,
    RetryLater,
    Unknown,
    as_approval_answer,
)
from poppy_tui.protocol.retry import BackoffPolicy

log = logging.getLogger(__name__)

DEFAULT_LEASE_SECONDS = 30.0
# Waits up to this long are spent holding (and renewing) the lease; longer ones hand the
# operation back to the store with next_attempt_at so any dispatcher can pick it up.
DEFAULT_INLINE_RETRY_SECONDS = 15.0
# Attempt outcomes after which the Company may have performed the operation.
IN_DOUBT = frozenset({"unknown", "retry_later", "interrupted"})
# The attempt outcome of a send the Company answered with a sign-in challenge: not a refusal of
# the operation (Ops 3), nothing performed, and the wait for the person that follows is not resending.
SIGN_IN_ASKED = "sign_in_required"

Sender = Callable[[OperationRecord, Approval], Awaitable[Exchange]]
# Why nothing can be sent from this machine now (the approval can't be signed), or None.
Preflight = Callable[[], "str | None"]
# How long an approval that can't be signed waits before the next try (the key may be fixed).
UNSIGNABLE_RETRY_SECONDS = 30.0
# At most this many of one Company's operations are being sent (or wait to resend) at once,
# per pass of the dispatcher: a thousand approvals must not open a thousand requests at once.
DEFAULT_PER_COMPANY = 8
# Outcomes are committed together (Dispatcher._settle), at the latest this long after the first.
SETTLE_GATHER_SECONDS = 0.005
# At most this many operations are claimed and not yet finished at once, across Companies.
DEFAULT_CLAIM_AHEAD = 32


def new_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class _Lease:
    """Whether this dispatcher still holds an operation's lease. Losing it stops the send under
    way: another dispatcher may already be sending, and two senders must never overlap."""

    def __init__(self) -> None:
        self.lost = asyncio.Event()
        # The task awaiting the send, while it does: losing the lease cancels it there.
        self.sending: asyncio.Task | None = None
        self.renewal: asyncio.TimerHandle | None = None

    def lose(self) -> None:
        if self.lost.is_set():
            return  # lost once, cancelled at most once
        self.lost.set()
        if self.sending is not None:
            self.sending.cancel()


class _Turns:
    """At most `limit` of one Company's operations sending at once. Turns that come free are
    handed out together, once half of them are free: the sends they begin start their attempts
    in the same turn of the event loop, so one commit (one fsync) covers them all."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._busy = 0
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()

    async def __aenter__(self) -> None:
        if self._busy < self._limit and not self._waiting:
            self._busy += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._release()  # the turn was ours already: pass it on
            elif turn in self._waiting:
                self._waiting.remove(turn)
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        self._busy -= 1
        if self._busy > self._limit // 2:
            return
        while self._waiting and self._busy < self._limit:
            turn = self._waiting.popleft()
            if not turn.done():
                self._busy += 1
                turn.set_result(None)


@dataclass(frozen=True)
class _Settle:
    status: Status
    detail: str
    outcome: object = None


@dataclass(frozen=True)
class _Retry:
    delay: float
    detail: str


class Dispatcher:
    def __init__(
        self,
        store: Store,
        sender: Sender,
        config: Config,
        owner: str | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        backoff: BackoffPolicy | None = None,
        inline_retry_seconds: float = DEFAULT_INLINE_RETRY_SECONDS,
        preflight: Preflight | None = None,
        unsignable_retry_seconds: float = UNSIGNABLE_RETRY_SECONDS,
        signable: Callable[[], bool] | None = None,
        prober: Callable[[], Awaitable[int]] | None = None,
        probe_after: float | None = None,
        per_company: int = DEFAULT_PER_COMPANY,
    ) -> None:
        self.store = store
        self._per_company = max(1, per_company)
        self._claim_ahead = max(self._per_company, DEFAULT_CLAIM_AHEAD)
        # Attempts waiting to be committed together (_begin_attempt): (operation row, its future).
        self._starting: list[tuple[int, asyncio.Future[AttemptRecord]]] = []
        # Settles waiting to be committed together (_settle), as settle_many's items.
        self._settling: list[tuple] = []
        self._settle_timer: asyncio.TimerHandle | None = None
        # Operations this dispatcher settled (committed), in that order, kept from
        # collect_settled() on until take_settled(): headless sending reports them even when an
        # approval made meanwhile was claimed and settled within one pass, between two of its
        # reads of what is in flight. None: nobody asked, nothing kept.
        self._settled_rows: list[int] | None = None
        # Set by wake() while run() waits between passes.
        self._woken: asyncio.Event | None = None
        # Sends under way (their requests may be out, waiting for answers).
        self._sending = 0
        # Operations being handled (_handle), whether sending, waiting for a turn or a retry.
        self._handling = 0
        # Groups whose attempts are committed and whose fsync runs in a worker thread.
        self._syncing: set[asyncio.Task[None]] = set()
        # Finding out about unknown outcomes (outcome_probe.py): run after each pass of sends,
        # first due `probe_after` seconds after a send ended unknown.
        self._prober = prober
        self._probe_after = probe_after if prober is not None else None
        self._preflight = preflight
        # Whether approvals can be signed here, known without loading anything (the key is loaded
        # already): a pass asks before every claim, and must not touch the keyring when nothing
        # is due. None: never known, so a lone attempt is never started with its claim.
        self._signable = signable
        self._unsignable_retry = unsignable_retry_seconds
        self._send = sender
        self._config = config
        self.owner = owner or new_owner()
        self.lease_seconds = lease_seconds
        self._backoff = backoff or BackoffPolicy()
        self._inline = inline_retry_seconds
        # The agent's sign-in at a Company now, as a fingerprint of its access token (None: signed
        # out); the Agent wires it to its token source. An approval waiting for sign-in is sent
        # again once the fingerprint is not None and differs from the one its request carried
        # (Exchange.token_fingerprint), so a token the Company keeps refusing (too few scopes,
        # revoked) is not resent in a loop, and one refreshed while the refused request was out
        # is used at once.
        self.sign_in_state: Callable[[CompanyRecord], Awaitable[str | None]] | None = None
        # Told when the Company refused the access token a send carried (401 invalid_token), with
        # that token's fingerprint: the Agent drops it, and the sign-in if it can't be renewed,
        # so the person is asked to sign in again instead of being told they are signed in.
        self.token_refused: Callable[[CompanyRecord, str | None], Awaitable[None]] | None = None
        self._challenged_with: dict[int, str | None] = {}

    # ---- the loop ------------------------------------------------------------------------------

    async def dispatch_once(self) -> int:
        """Send every operation whose time has come, expire what is due and find out about
        unknown outcomes that are due. Returns how many operations were sent (or tried)."""
        await self._resume_signed_in()
        slots: dict[int, _Turns] = {}  # per Company, for this pass
        running: set[asyncio.Task[None]] = set()
        chores: asyncio.Future[None] | None = None
        count = 0
        claiming = True
        try:
            while True:
                # Claimed (leased) only a little ahead of what can be sent: a thousand approvals are
                # not a thousand leases to renew and a thousand tasks waiting for a turn. Claimed
                # in batches (one statement each), once half of those claimed are done.
                if claiming and len(running) <= self._claim_ahead // 2:
                    wanted = self._claim_ahead - len(running)
                    started: AttemptRecord | None = None
                    if not running and chores is None and self._can_send():
                        # The pass's first claim: if it finds one approval alone, never sent,
                        # its attempt is recorded in the claim's own transaction (one commit less).
                        batch, started = self.store.claim_due_starting_alone(
                            self.owner, self.lease_seconds, wanted
                        )
                    else:
                        batch = self.store.claim_due_many(self.owner, self.lease_seconds, wanted)
                    if len(batch) < wanted:
                        # Every operation due now is claimed (by us, or by another process
                        # meanwhile): what becomes due from now on is the next pass's.
                        claiming = False
                    if len(batch) == 1 and not claiming and not running:
                        # The only operation due: sent from this task (a task of its own, and
                        # waiting for it, would cost more than the rest of its bookkeeping).
                        chores = asyncio.ensure_future(self._chores())  # runs while it waits
                        count = 1
                        try:
                            await self._handle(batch[0], started=started)
                        except Exception as exc:  # noqa: BLE001 - logged as a send task's would be
                            log.error("sending an operation failed", exc_info=exc)
                        break
                    assert started is None  # started only for an operation claimed alone
                    for op in batch:
                        slot = slots.setdefault(op.company.id, _Turns(self._per_company))
                        running.add(
                            asyncio.create_task(
                                self._handle(op, slot), name=f"send-operation-{op.id}"
                            )
                        )
                        count += 1
                if chores is None:
                    if not running:
                        await self._chores()
                        break
                    # Begun after the sends' tasks, so it runs once they wait for their fsync or
                    # their answers: the pass's expiries and findings-out cost the sends nothing.
                    # (An expired approval is never claimed: the claim itself checks expiry.)
                    chores = asyncio.ensure_future(self._chores())
                if not running:
                    break
                done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    failure = None if task.cancelled() else task.exception()
                    if failure is not None:
                        log.error("sending an operation failed", exc_info=failure)
        except asyncio.CancelledError:
            for task in running:  # as gather did: stopping the pass stops its sends
                task.cancel()
            if chores is not None:
                chores.cancel()
            raise
        finally:
            self._commit_settles()  # every answer of this pass recorded before it ends
        if chores is not None:
            await chores
        return count

    async def _chores(self) -> None:
        """Record expiries, then find out about unknown outcomes that are due (the prober)."""
        self.store.expire_due()
        if self._prober is not None:
            await self._prober()

    async def _resume_signed_in(self) -> None:
        if self.sign_in_state is None:
            return
        for company_id, rows in self.store.waiting_for_sign_in().items():
            try:
                await self._resume_at(self.store.get_company(company_id), rows)
            except StoreError as exc:
                log.warning("dispatcher: %s", exc)

    async def _resume_at(self, company: CompanyRecord, rows: list[int]) -> list[int]:
        """Make due those of `rows` (approvals waiting for sign-in at `company`) whose refused
        request carried another token than the one held now. Returns the rows made due."""
        assert self.sign_in_state is not None
        state = await self.sign_in_state(company)
        if state is None:
            return []
        # Unknown to this process (another one saw the challenge): try once. Not those that
        # belong to another account than the one signed in now (Ops 3).
        due = [r for r in rows if self._challenged_with.get(r, "") != state]
        if due:
            held = self.store.for_other_account(due)  # one look for all of them
            due = [r for r in due if r not in held]
        if not due:
            return []
        resumed = self.store.resume_after_sign_in(company.id, due)
        for row in resumed:
            self._challenged_with.pop(row, None)
        log.info("signed in at company %s: sending approvals %s again", company.id, resumed)
        return resumed

    def next_due_in(self) -> float | None:
        """Seconds until something may be due (a grace period ends, a retry, a lease lapses)."""
        due = self.store.next_due_at()
        if self._prober is not None:
            probe = self.store.next_probe_at()
            due = probe if due is None or (probe is not None and probe < due) else due
        return None if due is None else max(0.0, (due - now_utc()).total_seconds())

    def wake(self) -> None:
        """Something may be due now (an approval recorded in this process, on the loop's thread):
        a running `run` starts its next pass at once instead of at the end of its wait."""
        if self._woken is not None:
            self._woken.set()

    async def run(self, stop: asyncio.Event, idle_seconds: float = 0.5) -> None:
        self._woken = woken = asyncio.Event()
        try:
            while not stop.is_set():
                woken.clear()  # a wake during the pass below ends the wait after it at once
                try:
                    await self.dispatch_once()
                except StoreError as exc:
                    log.warning("dispatcher: %s", exc)
                due = self.next_due_in()
                wait = idle_seconds if due is None else min(idle_seconds, max(0.05, due))
                waits = (asyncio.ensure_future(stop.wait()), asyncio.ensure_future(woken.wait()))
                try:
                    await asyncio.wait(waits, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for waiting in waits:
                        waiting.cancel()
        finally:
            self._woken = None

    # ---- one operation ---------------------------------------------------------------------------

    def _can_send(self) -> bool:
        """Whether an approval can be signed here now, known without loading the key (when it is
        not known, _drive asks the preflight, which may load it, and postpones if it fails)."""
        return self._signable is not None and self._signable()

    async def _handle(
        self, op: OperationRecord, slot: _Turns | None = None, started: AttemptRecord | None = None
    ) -> None:
        """`started`: the operation's first attempt, committed with its claim, not yet fsynced."""
        lease = _Lease()
        self._keep_lease(op.id, lease)
        self._handling += 1
        try:
            if slot is None:
                await self._drive(op, lease, started)
            else:
                spares_wanted.set(False)  # this task's own context: one of several sends at once
                async with slot:  # the lease is held (and renewed) while waiting for a turn
                    await self._drive(op, lease)
        except StateError as exc:
            # Declined, withdrawn, superseded or expired between the claim and the send: nothing
            # was sent for this claim. Give the lease back so the next decision isn't delayed.
            log.info("operation %s not sent: %s", op.id, exc)
            self.store.release_lease(op.id, self.owner)
        finally:
            self._handling -= 1
            if lease.renewal is not None:
                lease.renewal.cancel()

    def _keep_lease(self, op_row: int, lease: _Lease) -> None:
        """Renew the lease every third of its length until the send ends, from a timer on the
        loop (a renewal is one short statement: a task per send would cost more than it does)."""
        loop = asyncio.get_running_loop()
        interval = max(0.05, self.lease_seconds / 3)
        last_ok = loop.time()

        def renew() -> None:
            nonlocal last_ok
            lease.renewal = None
            try:
                if not self.store.renew_lease(op_row, self.owner, self.lease_seconds):
                    lease.lose()
                    return
                last_ok = loop.time()
            except StoreError:
                if loop.time() - last_ok > self.lease_seconds * 0.7:
                    lease.lose()
                    return
            except Exception:  # noqa: BLE001 - unsure whether we hold it: stop, as if lost
                log.exception("renewing the lease of operation %s failed", op_row)
                lease.lose()
                return
            lease.renewal = loop.call_later(interval, renew)

        lease.renewal = loop.call_later(interval, renew)

    async def _drive(
        self, op: OperationRecord, lease: _Lease, started: AttemptRecord | None = None
    ) -> None:
        attempts = self._mark_interrupted(op.id, op.attempt_count)
        if op.approved_revision_id is None:
            raise StateError("nothing is approved")
        # The approval goes with the request that returned the approved revision ("the same
        # request again", Ops 6), even if a newer revision has since come from another request.
        # Its interface is that request's, which need not be the operation's first (Ops 6).
        # Its Session is the one that revision was returned in: an operation returned signed out
        # can be approved only there (Ops 3), and a later revision may come in a later Session.
        if op.current.id == op.approved_revision_id:
            approved = op.current
            sending = dataclasses.replace(
                op, interface=op.request.interface, session_id=approved.session_id or op.session_id
            )
        else:
            approved = self.store.get_revision(op.approved_revision_id)
            request, _, _ = self.store.get_request(approved.request_id)
            sending = dataclasses.replace(
                op,
                request=request,
                request_id=approved.request_id,
                interface=request.interface,
                session_id=approved.session_id or op.session_id,
            )
        approval = Approval(op.operation_id, approved.revision)
        retries = 0
        while True:
            # `attempts` holds every earlier attempt, read once per pass: only the lease holder
            # (us) adds or finishes attempts while we hold it.
            in_doubt = _in_doubt(attempts)
            if started is not None:
                # Committed with the claim, whose statement checked what _should_stop and the
                # checks below would (due, terms not expired, signable: see dispatch_once). What
                # is left is the fsync, before the request leaves; here, on the loop, since no
                # other send of this pass is under way to overlap it with.
                attempt, started = started, None
                self.store.sync_through(self.store.take_awaited())
            else:
                stop = self._should_stop(
                    op, approved, attempts, in_doubt, _saw_success(sending, attempts)
                )
                if stop is not None:
                    self._settle(op.id, stop)
                    return
                if lease.lost.is_set():
                    return
                problem = self._preflight() if self._preflight is not None else None
                if problem:
                    # Nothing can leave the machine: that is no attempt, and certainly no unknown
                    # outcome. Keep the approval and try again later (the key may be fixed by then).
                    self.store.postpone(
                        op.id, self.owner, self._unsignable_retry, f"not sent: {problem}"
                    )
                    return
                attempt = await self._begin_attempt(op.id)
            exchange = await self._send_guarded(sending, approval, lease)
            if (
                exchange is None
            ):  # lease lost mid-send: the attempt stays "interrupted" for whoever is next
                return
            exchange = dataclasses.replace(exchange, outcome=as_approval_answer(exchange.outcome))
            finished = (
                attempt.id,
                outcome_name(exchange.outcome),
                exchange.status,
                exchange.response,
                exchange.detail or _describe(exchange),
            )
            if exchange.other_account is not None:
                # Not sent: signed in there as another account than the operation's, whose token
                # must not carry it (Ops 3). Kept, as for sign-in, until signed in as its own.
                self._challenged_with[op.id] = (
                    await self.sign_in_state(op.company) if self.sign_in_state else None
                )
                self.store.wait_for_sign_in(
                    finished,
                    op.id,
                    self.owner,
                    approved.expires_at + timedelta(seconds=1),
                    exchange.detail,
                )
                return
            saw_success = _saw_success(sending, attempts) or _cut_off_success(sending, finished)
            challenge = exchange.challenge
            if challenge is not None and challenge.needs_sign_in and not saw_success:
                # Not a refusal of the operation: the Company wants the person signed in (Ops 3).
                # Keep the approval and send it again after sign-in, while it is still valid.
                # The token the request carried, not the one held now: a refresh between the send
                # and this answer gave a token the Company never saw (RFC 6750 3.1 refuses the
                # token presented), and it must not be dropped for the old one's refusal.
                refused = exchange.token_fingerprint
                if (
                    refused is not None
                    and challenge.error == INVALID_TOKEN
                    and self.token_refused is not None
                ):
                    # The Company no longer takes this token (revoked, or expired early): drop it,
                    # if it is still the one held (SignIns.token_refused).
                    await self.token_refused(op.company, refused)
                # A token newer than the refused one held already (renewed just now, or refreshed
                # while the request was out): no sign-in to wait for, and none to ask for.
                held = (
                    await self.sign_in_state(op.company) if self.sign_in_state is not None else None
                )
                signed_in_since = held is not None and held != refused
                if signed_in_since:
                    self._challenged_with.pop(op.id, None)
                else:
                    self._challenged_with[op.id] = refused
                # A conversation answers a message sent again with the same ID with its first
                # answer (spec 8.3), this very sign-in request: after sign-in the approval goes in a
                # new message. It was not taken (the Company asked for sign-in instead), and a new
                # message with the same approval can't perform it twice (Ops 7).
                new_key = new_id("msg_") if sending.interface == "conversation" else None
                self.store.wait_for_sign_in(
                    (finished[0], SIGN_IN_ASKED, *finished[2:]),
                    op.id,
                    self.owner,
                    approved.expires_at + timedelta(seconds=1),
                    f"{'sending again, signed in since' if signed_in_since else 'waiting for sign-in'}: {exchange.detail}",
                    new_key,
                    signed_in_since,
                )
                if signed_in_since:
                    self.wake()
                return
            verdict = self._decide(sending, approved, exchange, in_doubt, retries, saw_success)
            if isinstance(verdict, _Settle):
                self._settle(op.id, verdict, finished)
                return
            self.store.finish_attempt(*finished)
            retries += 1
            attempts = self.store.attempts(op.id)  # now with this one: the first starts the window
            window_end = self._window_end(attempts)
            # Never wait past the approval's expiry or the retry window; _should_stop ends it there.
            limit = (
                approved.expires_at if window_end is None else min(approved.expires_at, window_end)
            ) - now_utc()
            delay = max(0.0, min(verdict.delay, limit.total_seconds()))
            if delay > self._inline:
                self.store.schedule_retry(op.id, self.owner, delay, verdict.detail)
                return
            if not self.store.renew_lease(op.id, self.owner, self.lease_seconds + delay):
                return
            try:
                await asyncio.wait_for(lease.lost.wait(), delay)
                return  # lost the lease while waiting
            except TimeoutError:
                pass

    async def _begin_attempt(self, op_row: int) -> AttemptRecord:
        """The attempt, committed (fsynced) before this returns, so before its request leaves.
        Attempts begun in the same turn of the event loop share one transaction and one fsync
        (group commit): when answers arrive together, their operations' next sends do too."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[AttemptRecord] = loop.create_future()
        alone = not self._starting and self._handling == 1
        if not self._starting and not alone:
            loop.call_soon(self._commit_when_settled, loop, 1)
        self._starting.append((op_row, future))
        if alone:
            # No other send of ours is under way, so no other attempt can join this one's
            # commit: commit it now rather than a turn of the loop later.
            self._commit_attempts()
        return await future

    def _commit_when_settled(self, loop: asyncio.AbstractEventLoop, seen: int) -> None:
        # Answers that arrive together finish their operations in one turn of the loop, and the
        # sends those free begin in the next: while a turn adds attempts, give the next turn too
        # (a turn is microseconds; the fsync saved is milliseconds).
        if len(self._starting) > seen:
            loop.call_soon(self._commit_when_settled, loop, len(self._starting))
            return
        self._commit_attempts()

    def _commit_attempts(self) -> None:
        # The answers that freed these sends' turns are recorded first: one commit for them all.
        self._commit_settles()
        # A waiter cancelled before this commit is left out: nothing was recorded, nothing sent.
        waiting = [(row, future) for row, future in self._starting if not future.done()]
        self._starting = []
        if not waiting:
            return
        try:
            # Committed here, on the loop's thread (one connection, one transaction at a time),
            # without an fsync; the fsync runs in a worker thread (_release_when_durable) while
            # the loop goes on reading answers and committing the next group: a pipeline. No
            # request of this group leaves before its fsync returned (docs/reliability.md).
            results = self.store.start_attempts(
                [row for row, _ in waiting], self.owner, Durability.AWAITED
            )
            commit = self.store.take_awaited()
        except Exception as exc:  # noqa: BLE001 - e.g. StoreError: none of them was committed
            for _, future in waiting:
                future.set_exception(exc)
            return
        if self._sending == 0 and not self._syncing:
            # No send of ours is waiting for an answer and no other group for its fsync: there is
            # nothing to overlap the fsync with, so it runs here (the two thread hops would cost
            # about half as much again as the fsync; the loop is held for the fsync alone).
            try:
                self.store.sync_through(commit)
            except Exception as exc:  # noqa: BLE001 - not on disk: none of these may be sent
                self._release(waiting, results, exc)
                return
            self._release(waiting, results)
            return
        task = asyncio.ensure_future(self._release_when_durable(waiting, results, commit))
        self._syncing.add(task)
        task.add_done_callback(self._syncing.discard)

    async def _release_when_durable(
        self, waiting: list[tuple[int, asyncio.Future[AttemptRecord]]], results: list, commit: int
    ) -> None:
        try:
            await asyncio.to_thread(self.store.sync_through, commit)
        except Exception as exc:  # noqa: BLE001 - not on disk: none of these may be sent
            self._release(waiting, results, exc)
            return
        self._release(waiting, results)

    @staticmethod
    def _release(
        waiting: list[tuple[int, asyncio.Future[AttemptRecord]]],
        results: list,
        failure: Exception | None = None,
    ) -> None:
        """Let the sends of a group go, once its fsync returned; or fail them all when it failed:
        the attempts are committed but maybe not durable, so their operations keep an unfinished
        attempt, which every later pass treats as in doubt (never as unsent)."""
        if failure is not None:
            for _, future in waiting:
                if not future.done():
                    future.set_exception(failure)
            return
        for (_, future), result in zip(waiting, results, strict=True):
            if future.done():
                continue  # its sender was cancelled meanwhile: the attempt stays unfinished, in doubt
            if isinstance(result, StateError):
                future.set_exception(result)
            else:
                future.set_result(result)

    async def _send_guarded(
        self, op: OperationRecord, approval: Approval, lease: _Lease
    ) -> Exchange | None:
        """The send, or None when the lease was lost (the lease renewal then stops the send itself)."""
        if lease.lost.is_set():
            return None
        me = asyncio.current_task()
        lease.sending = me
        self._sending += 1
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
            self._sending -= 1
            lease.sending = None

    async def _send_safely(self, op: OperationRecord, approval: Approval) -> Exchange:
        try:
            return await self._send(op, approval)
        except asyncio.CancelledError:
            raise
        except KeyStorageError as exc:
            # The request could not be signed, so it never left: not sent, not in doubt.
            detail = f"not sent: {exc}"
            return Exchange(NotSent(detail), None, {"error": detail}, op.session_id, detail)
        except Exception as exc:  # noqa: BLE001 - a bug of ours must not look like "not sent"
            log.exception("sending operation %s failed inside poppy-tui", op.id)
            detail = f"poppy-tui failed while sending ({type(exc).__name__}: {exc})"
            return Exchange(Unknown(detail), None, {"error": detail}, op.session_id, detail)

    # ---- deciding ----------------------------------------------------------------------------------

    def _mark_interrupted(self, op_row: int, op_attempts: int | None = None) -> list[AttemptRecord]:
        """An attempt started by a process that died: its request may have reached the Company.
        Returns the operation's attempts as they stand afterwards."""
        if op_attempts == 0:
            return []  # attempt_count counts every attempt row (written with it): none to read
        attempts = self.store.attempts(op_row)
        orphans = [a for a in attempts if a.finished_at is None and a.owner != self.owner]
        for attempt in orphans:
            self.store.finish_attempt(
                attempt.id,
                "interrupted",
                None,
                None,
                f"the sender ({attempt.owner}) stopped before an answer arrived; it may have been performed",
            )
        return self.store.attempts(op_row) if orphans else attempts

    def _window_end(self, attempts: list[AttemptRecord]):
        """When resending stops (retry_window_seconds after the first attempt since the approval
        last waited for sign-in), or None when nothing was sent since. Waiting for the person to
        sign in is not resending: it lasts as long as the approved terms (Ops 3)."""
        start = _window_start(attempts)
        if start is None:
            return None
        return parse_stamp(start.started_at) + timedelta(seconds=self._config.retry_window_seconds)

    def _should_stop(
        self,
        op: OperationRecord,
        approved: RevisionRecord,
        attempts: list[AttemptRecord],
        in_doubt: bool,
        saw_success: bool,
    ) -> _Settle | None:
        if not attempts:
            # An unsent approval that expired is expire_due's to record (status expired); claims
            # leave those alone, and one that expired since its claim is not sent either.
            if approved.expires_at <= now_utc():
                raise StateError("the approved terms expired before they could be sent")
            return None
        now = now_utc()
        window_end = self._window_end(attempts)
        window_over = window_end is not None and window_end <= now
        if saw_success and (approved.expires_at <= now or window_over):
            return _Settle(
                Status.PERFORMED,
                "the Company answered with a success status, though its answer was cut off",
            )
        if approved.expires_at <= now:
            # After expires_at the Company may forget the operation (Ops 7), so a resend could
            # no longer tell us anything; stop and say what we know.
            if in_doubt:
                return _Settle(
                    Status.OUTCOME_UNKNOWN,
                    "the approved terms expired before the Company gave a definite answer; check with the "
                    "Company (for example the order) whether it was done",
                )
            return _Settle(
                Status.NOT_PERFORMED,
                "the approved terms expired before the approval could be delivered",
            )
        if window_over:
            if in_doubt:
                return _Settle(
                    Status.OUTCOME_UNKNOWN,
                    f"no definite answer after {self._config.retry_window_seconds:g}s of resending; check with the "
                    "Company whether it was done",
                )
            return _Settle(
                Status.NOT_PERFORMED,
                f"the Company could not be reached for {self._config.retry_window_seconds:g}s; nothing was delivered",
            )
        return None

    def _decide(
        self,
        op: OperationRecord,
        approved: RevisionRecord,
        exchange: Exchange,
        in_doubt: bool,
        retries: int,
        saw_success: bool = False,
    ) -> _Settle | _Retry:
        outcome = exchange.outcome

        def refused(detail: str) -> _Settle:
            if saw_success:
                return _Settle(
                    Status.PERFORMED,
                    f"an earlier send was answered with a success status (its body was cut off); a resend then got: {detail}",
                    exchange.response,
                )
            if in_doubt:
                return _Settle(
                    Status.OUTCOME_UNKNOWN,
                    f"{detail}; an earlier send may still have been performed, so check with the Company",
                    exchange.response,
                )
            return _Settle(Status.NOT_PERFORMED, detail, exchange.response)

        if isinstance(outcome, Performed):
            return _Settle(Status.PERFORMED, exchange.detail or "performed", exchange.response)
        if isinstance(outcome, ApprovalRequired):
            answered = outcome.operation
            if answered.operation_id != op.operation_id:
                # Not recorded as an operation to decide on: while this one may be in doubt the
                # person must not be asked to approve another (Ops 7). The attempt row keeps it.
                return refused(
                    f"the Company answered the approval with a different operation ({answered.operation_id})"
                )
            if answered.revision == approved.revision:
                return refused(
                    "protocol violation: the Company answered the approval with the same revision it names "
                    f"({answered.revision}), which Ops 6 forbids; stopped instead of resending"
                )
            # Kept with the Session the answer came in: its approval goes there (Ops 3).
            self.store.record_operation(
                op.company.id,
                op.request_id,
                exchange.session_id,
                answered,
                exchange.carrier_text,
                op.interface,
            )
            if saw_success:
                return refused(f"new terms (revision {answered.revision})")
            if in_doubt:
                return _Settle(
                    Status.OUTCOME_UNKNOWN,
                    f"the Company answered a resend with new terms (revision {answered.revision}); an earlier "
                    "send may have been performed, so find out before approving anything new",
                    exchange.response,
                )
            return _Settle(
                Status.PENDING,
                f"the Company did not perform it and returned new terms (revision {answered.revision}); "
                "they need a new approval",
                exchange.response,
            )
        if isinstance(outcome, RetryLater):
            return _Retry(
                self._backoff.delay(retries + 1, outcome.retry_after),
                f"the Company asked us to wait ({outcome.detail})",
            )
        if isinstance(outcome, Unknown):
            if exchange.final:
                return _Settle(
                    Status.OUTCOME_UNKNOWN, exchange.detail or outcome.detail, exchange.response
                )
            return _Retry(
                self._backoff.delay(retries + 1),
                f"no definite answer ({outcome.detail}); resending",
            )
        if isinstance(outcome, NotSent):
            return _Retry(
                self._backoff.delay(retries + 1), f"not delivered ({outcome.detail}); resending"
            )
        if isinstance(outcome, NotPerformed):
            if exchange.session_error:
                return refused(exchange.detail)
            return refused(f"the Company refused it ({outcome.error}, HTTP {outcome.status})")
        if isinstance(outcome, BadResponse):
            return refused(f"the Company's answer broke the protocol: {outcome.error}")
        return refused(f"unexpected answer {outcome!r}")  # pragma: no cover

    def _settle(self, op_row: int, verdict: _Settle, finished: tuple | None = None) -> None:
        """The operation's end (and its last attempt's), committed with the settles that come
        before the next group of attempts is committed, or within SETTLE_GATHER_SECONDS, or at the
        end of the pass, whichever is first: one transaction (one background fsync) for many.
        Until then the operation keeps its lease, so no one else sends it; lost to a crash, its
        attempt stays unfinished and the same approval is resent (docs/reliability.md)."""
        probe = self._probe_after if verdict.status == Status.OUTCOME_UNKNOWN else None
        self._settling.append(
            (finished, op_row, self.owner, verdict.status, verdict.outcome, verdict.detail, probe)
        )
        if self._settle_timer is None:
            self._settle_timer = asyncio.get_running_loop().call_later(
                SETTLE_GATHER_SECONDS, self._commit_settles
            )

    def collect_settled(self) -> None:
        """From now on keep the operations this dispatcher settles, for take_settled()."""
        if self._settled_rows is None:
            self._settled_rows = []

    def take_settled(self) -> list[int]:
        """The operations settled since collect_settled() or the last call, in that order."""
        rows, self._settled_rows = self._settled_rows or [], []
        return rows

    def _commit_settles(self) -> None:
        if self._settle_timer is not None:
            self._settle_timer.cancel()
            self._settle_timer = None
        group, self._settling = self._settling, []
        if not group:
            return
        try:
            results = self.store.settle_many(group)
        except Exception as exc:  # noqa: BLE001 - called from timers and other commits: never raise
            # None of them was committed: their attempts stay unfinished (in doubt) and their
            # leases lapse, so the same approvals are resent, as after a crash.
            log.warning(
                "dispatcher: %d outcomes could not be recorded: %s",
                len(group),
                exc,
                exc_info=not isinstance(exc, StoreError),
            )
            return
        for settle, problem in zip(group, results, strict=True):
            if problem is None:
                if self._settled_rows is not None:
                    self._settled_rows.append(settle[1])
            else:
                log.warning(
                    "operation %s could not be settled as %s: %s",
                    settle[1],
                    settle[3].value,
                    problem,
                )


def _window_start(attempts: list[AttemptRecord]) -> AttemptRecord | None:
    """The first attempt after the last one the Company answered with a sign-in challenge."""
    since = 0
    for number, attempt in enumerate(attempts):
        if attempt.outcome == SIGN_IN_ASKED:
            since = number + 1
    return attempts[since] if since < len(attempts) else None


def _in_doubt(attempts: list[AttemptRecord]) -> bool:
    return any(a.outcome in IN_DOUBT or a.finished_at is None for a in attempts)


def _saw_success(op: OperationRecord, attempts: list[AttemptRecord]) -> bool:
    """An API attempt got a 2xx status line before its body was cut off: the Company said it
    was done. (For MCP and conversations a 2xx is only the transport's, so it proves nothing.)"""
    return any(_cut_off_success(op, (a.id, a.outcome, a.http_status)) for a in attempts)


def _cut_off_success(op: OperationRecord, attempt: tuple) -> bool:
    """(id, outcome, http_status, ...) of an API attempt whose 2xx status arrived but not its body."""
    _, outcome, status = attempt[:3]
    return (
        op.interface == "api"
        and outcome == "unknown"
        and status is not None
        and 200 <= status < 300
    )


def _describe(exchange: Exchange) -> str:
    outcome = exchange.outcome
    for name in ("detail", "error"):
        value = getattr(outcome, name, None)
        if value:
            return str(value)
    return type(outcome).__name__
