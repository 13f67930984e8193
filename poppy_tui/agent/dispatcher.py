"""The dispatcher: choosing what is due and handing each operation its turn (docs/state-machine.md).

approved --(grace ends)--> sending --> performed | not_performed | outcome_unknown
                                   \\-> pending (a new revision, when no earlier send is in doubt)
                                   \\-> sending, waiting for sign-in (kept, sent again once signed in)

What happens to each operation is the lifecycle's to decide (agent/lifecycle: `step`); this
module chooses which operations get a turn, and when, and agent/sending/ carries each turn out:
leases.py, turns.py (per Company), attempts.py (group commits), settles.py, answers.py,
driver.py (one operation). An outcome left unknown is found out about afterwards
(outcome_probe.py, run as one of the pass's chores).

A pass claims (leases) what is due, a batch at a time, and keeps claiming while its sends run
whenever something may have become due: an approval made in this process (`wake`), or, while an
operation waits to resend inside the pass, every RECLAIM_SECONDS. So one operation's retries
never delay another's first send: a wait to resend holds the operation's lease, not a turn of
its Company, and never the pass's claiming.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from poppy_tui.agent.lifecycle.events import SignedIn
from poppy_tui.agent.lifecycle.facts import Policy
from poppy_tui.agent.lifecycle.machine import Do, step
from poppy_tui.agent.sending.driver import Driver
from poppy_tui.agent.sending.leases import new_owner
from poppy_tui.agent.sending.port import DispatchAgent
from poppy_tui.agent.sending.settles import SETTLE_GATHER_SECONDS, Settles
from poppy_tui.agent.sending.turns import Turns
from poppy_tui.agent.store import AttemptRecord, CompanyRecord, OperationRecord, StoreError
from poppy_tui.agent.store.lifecycle_facts import facts_of
from poppy_tui.agent.store.store import now_utc
from poppy_tui.protocol.retry import BackoffPolicy

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_CLAIM_AHEAD",
    "DEFAULT_INLINE_RETRY_SECONDS",
    "DEFAULT_LEASE_SECONDS",
    "DEFAULT_PER_COMPANY",
    "SETTLE_GATHER_SECONDS",
    "UNSIGNABLE_RETRY_SECONDS",
    "Dispatcher",
    "new_owner",
]

DEFAULT_LEASE_SECONDS = 30.0
# Waits up to this long are spent holding (and renewing) the lease; longer ones hand the
# operation back to the store with next_attempt_at so any dispatcher can pick it up. 0: every
# wait goes through the store (Agent(inline_retry_seconds=0), for a clock moved by hand).
DEFAULT_INLINE_RETRY_SECONDS = 15.0
# How long an approval that can't be signed waits before the next try (the key may be fixed).
UNSIGNABLE_RETRY_SECONDS = 30.0
# At most this many of one Company's operations are being sent at once, per pass.
DEFAULT_PER_COMPANY = 8
# At most this many operations are claimed and not yet finished at once, across Companies.
DEFAULT_CLAIM_AHEAD = 32
# While an operation waits to resend inside a pass, the pass looks for newly due work this often.
RECLAIM_SECONDS = 0.5


class Dispatcher:
    def __init__(
        self,
        agent: DispatchAgent,
        owner: str | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        backoff: BackoffPolicy | None = None,
        inline_retry_seconds: float = DEFAULT_INLINE_RETRY_SECONDS,
        unsignable_retry_seconds: float = UNSIGNABLE_RETRY_SECONDS,
        probe_after: float | None = None,
        per_company: int = DEFAULT_PER_COMPANY,
    ) -> None:
        self.agent = agent
        self.store = agent.store
        self.owner = owner or new_owner()
        self.lease_seconds = lease_seconds
        self.per_company = max(1, per_company)
        self._claim_ahead = max(self.per_company, DEFAULT_CLAIM_AHEAD)
        self.policy = Policy(
            retry_window_seconds=agent.config.retry_window_seconds,
            inline_retry_seconds=inline_retry_seconds,
            unsignable_retry_seconds=unsignable_retry_seconds,
            backoff=backoff or BackoffPolicy(),
        )
        self._settles = Settles(self.store, self.owner, probe_after)
        self._driver = Driver(
            agent, self.owner, lease_seconds, self.policy, self._settles, self.wake
        )
        # Set by wake() while run() waits between passes, and while a pass runs.
        self._woken: asyncio.Event | None = None
        self._pass_woken: asyncio.Event | None = None

    # ---- a pass -------------------------------------------------------------------------------

    async def dispatch_once(self) -> int:
        """Send every operation whose time has come (and what becomes due while those sends run),
        expire what is due and find out about unknown outcomes that are due. Returns how many
        operations were sent (or tried)."""
        await self.resume_signed_in()
        slots: dict[int, Turns] = {}  # per Company, for this pass
        running: set[asyncio.Task[None]] = set()
        chores: asyncio.Future[None] | None = None
        count = 0
        claiming = True
        self._pass_woken = woken = asyncio.Event()

        def slot(op: OperationRecord) -> Turns:
            return slots.setdefault(op.company.id, Turns(self.per_company))

        def hand_on(
            op: OperationRecord, resend: Callable[[Turns | None], Coroutine[Any, Any, None]]
        ) -> None:
            running.add(asyncio.create_task(resend(slot(op)), name=f"resend-operation-{op.id}"))

        try:
            while True:
                # Claimed (leased) only a little ahead of what can be sent: a thousand approvals are
                # not a thousand leases to renew and a thousand tasks waiting for a turn. Claimed
                # in batches (one statement each), once half of those claimed are done.
                if claiming and len(running) <= self._claim_ahead // 2:
                    wanted = self._claim_ahead - len(running)
                    started: AttemptRecord | None = None
                    if not running and chores is None and self.agent.signing_key_loaded():
                        # The pass's first claim: if it finds one approval alone, never sent,
                        # its attempt is recorded in the claim's own transaction (one commit less).
                        batch, started = self.store.claim_due_starting_alone(
                            self.owner, self.lease_seconds, wanted
                        )
                    else:
                        batch = self.store.claim_due_many(self.owner, self.lease_seconds, wanted)
                    if len(batch) < wanted:
                        # Every operation due now is claimed (by us, or by another process
                        # meanwhile): claimed again only when something may have become due.
                        claiming = False
                    if len(batch) == 1 and not claiming and not running and chores is None:
                        # The only operation due: sent from this task (a task of its own, and
                        # waiting for it, would cost more than the rest of its bookkeeping). If it
                        # must wait to resend, it is handed on to a task of its own.
                        chores = asyncio.ensure_future(self._chores())  # runs while it waits
                        count += 1
                        try:
                            await self._driver.handle(batch[0], started=started, hand_on=hand_on)
                        except Exception:  # logged as a send task's would be
                            log.exception("sending operation %s failed", batch[0].id)
                        if not running:
                            break
                        continue
                    assert started is None  # started only for an operation claimed alone
                    for op in batch:
                        running.add(
                            asyncio.create_task(
                                self._driver.handle(op, slot(op), hand_on=None),
                                name=f"send-operation-{op.id}",
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
                claiming = await self._wait_for_work(running, woken) or claiming
        except asyncio.CancelledError:
            for task in running:  # as gather did: stopping the pass stops its sends
                task.cancel()
            if chores is not None:
                chores.cancel()
            raise
        finally:
            self._pass_woken = None
            self._driver.waiting.clear()  # every task of the pass is over
            self._settles.commit()  # every answer of this pass recorded before it ends
        if chores is not None:
            await chores
        return count

    async def _wait_for_work(self, running: set[asyncio.Task[None]], woken: asyncio.Event) -> bool:
        """Wait until a send finishes, or something may have become due. True: claim again."""
        waking = asyncio.ensure_future(woken.wait())
        timeout = RECLAIM_SECONDS if self._driver.waiting else None
        try:
            done, _ = await asyncio.wait(
                {*running, waking}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            waking.cancel()
        for task in done - {waking}:
            running.discard(task)
            failure = None if task.cancelled() else task.exception()
            if failure is not None:
                log.error("sending an operation failed", exc_info=failure)
        claim = woken.is_set() or not done  # woken, or a wait to resend runs: something may be due
        woken.clear()
        return claim

    async def _chores(self) -> None:
        """Record expiries, then find out about unknown outcomes that are due."""
        self.store.expire_due()
        await self.agent.find_out()

    # ---- sign-in ------------------------------------------------------------------------------

    async def resume_signed_in(self) -> None:
        """Approvals waiting for sign-in whose Company has a sign-in now they can go with."""
        for company_id, rows in self.store.waiting_for_sign_in().items():
            try:
                await self._resume_at(self.store.get_company(company_id), rows)
            except StoreError:
                log.warning("dispatcher: resuming after sign-in failed", exc_info=True)

    async def _resume_at(self, company: CompanyRecord, rows: list[int]) -> list[int]:
        """Make due those of `rows` (approvals waiting for sign-in at `company`) the lifecycle
        resumes: a token other than the one their refused request carried, and not another
        account's than theirs (Ops 3). Returns the rows made due."""
        state = await self.agent.sign_in_state(company)
        if state is None:
            return []
        # Unknown to this process (another one saw the challenge): try once.
        challenged = self._driver.challenged_with
        differs = [r for r in rows if challenged.get(r, "") != state]
        held = self.store.for_other_account(differs) if differs else set()  # one look for all
        now = now_utc()
        due = []
        for row in differs:
            signed_in = SignedIn(token_differs=True, other_account=row in held)
            if (
                step(facts_of(self.store.get_operation(row)), signed_in, now, self.policy).do
                == Do.RESUME
            ):
                due.append(row)
        if not due:
            return []
        resumed = self.store.resume_after_sign_in(company.id, due)
        for row in resumed:
            challenged.pop(row, None)
        log.info("signed in at company %s: sending approvals %s again", company.id, resumed)
        return resumed

    # ---- between passes -------------------------------------------------------------------------

    def next_due_in(self) -> float | None:
        """Seconds until something may be due (a grace period ends, a retry, a lease lapses)."""
        due = self.store.next_due_at()
        probe = self.store.next_probe_at()
        due = probe if due is None or (probe is not None and probe < due) else due
        return None if due is None else max(0.0, (due - now_utc()).total_seconds())

    def wake(self) -> None:
        """Something may be due now (an approval recorded in this process, on the loop's thread):
        a running pass claims again at once, and a waiting `run` starts its next pass at once."""
        for event in (self._woken, self._pass_woken):
            if event is not None:
                event.set()

    async def run(self, stop: asyncio.Event, idle_seconds: float = 0.5) -> None:
        self._woken = woken = asyncio.Event()
        try:
            while not stop.is_set():
                woken.clear()  # a wake during the pass below ends the wait after it at once
                try:
                    await self.dispatch_once()
                except StoreError:
                    log.warning("dispatcher: a pass failed", exc_info=True)
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

    # ---- what headless sending reports ----------------------------------------------------------

    def collect_settled(self) -> None:
        """From now on keep the operations this dispatcher settles, for take_settled()."""
        self._settles.collect()

    def take_settled(self) -> list[int]:
        """The operations settled since collect_settled() or the last call, in that order."""
        return self._settles.take()
