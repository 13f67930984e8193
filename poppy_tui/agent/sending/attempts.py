"""Attempt rows committed before their requests leave, in groups (docs/reliability.md,
"Sending many approvals: what is on disk before a request leaves").

`AttemptCommits.begin(row)` returns the operation's new attempt once it is committed and
fsynced. Attempts begun in the same turn of the event loop share one transaction; its fsync runs
in a worker thread while the loop reads answers and commits the next group (a pipeline), or on
the loop when nothing else of ours is under way to overlap it with. No request of a group leaves
before its fsync returned; a failed fsync fails the whole group (nothing sent, in doubt).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from poppy_tui.agent.store import AttemptRecord, StateError, Store
from poppy_tui.agent.store.durability import Durability

log = logging.getLogger(__name__)

Waiting = list[tuple[int, asyncio.Future[AttemptRecord]]]


class AttemptCommits:
    def __init__(
        self,
        store: Store,
        owner: str,
        before_commit: Callable[[], None],
        handling: Callable[[], int],
    ) -> None:
        self.store = store
        self.owner = owner
        # Run just before a group is committed: the answers that freed these sends' turns are
        # recorded first, in the same commit's wake (settles.py).
        self._before_commit = before_commit
        # How many operations the dispatcher is handling (sending, waiting for a turn or a retry).
        self._handling = handling
        # Attempts waiting to be committed together: (operation row, its future).
        self._starting: Waiting = []
        # Sends under way (their requests may be out, waiting for answers): driver.py counts them.
        self.sending = 0
        # Groups whose attempts are committed and whose fsync runs in a worker thread.
        self._syncing: set[asyncio.Task[None]] = set()

    async def begin(self, op_row: int) -> AttemptRecord:
        """The attempt, committed (fsynced) before this returns, so before its request leaves."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[AttemptRecord] = loop.create_future()
        alone = not self._starting and self._handling() == 1
        if not self._starting and not alone:
            loop.call_soon(self._commit_when_settled, loop, 1)
        self._starting.append((op_row, future))
        if alone:
            # No other send of ours is under way, so no other attempt can join this one's
            # commit: commit it now rather than a turn of the loop later.
            self._commit()
        return await future

    def _commit_when_settled(self, loop: asyncio.AbstractEventLoop, seen: int) -> None:
        # Answers that arrive together finish their operations in one turn of the loop, and the
        # sends those free begin in the next: while a turn adds attempts, give the next turn too
        # (a turn is microseconds; the fsync saved is milliseconds).
        if len(self._starting) > seen:
            loop.call_soon(self._commit_when_settled, loop, len(self._starting))
            return
        self._commit()

    def _commit(self) -> None:
        self._before_commit()
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
        except Exception as exc:  # e.g. StoreError: none of them was committed
            log.warning("%d attempts could not be recorded", len(waiting), exc_info=True)
            for _, future in waiting:
                future.set_exception(exc)
            return
        if self.sending == 0 and not self._syncing:
            # No send of ours is waiting for an answer and no other group for its fsync: there is
            # nothing to overlap the fsync with, so it runs here (the two thread hops would cost
            # about half as much again as the fsync; the loop is held for the fsync alone).
            try:
                self.store.sync_through(commit)
            except Exception as exc:  # not on disk: none of these may be sent
                log.warning("the attempts could not be made durable", exc_info=True)
                release(waiting, results, exc)
                return
            release(waiting, results)
            return
        task = asyncio.ensure_future(self._release_when_durable(waiting, results, commit))
        self._syncing.add(task)
        task.add_done_callback(self._syncing.discard)

    async def _release_when_durable(
        self, waiting: Waiting, results: list[AttemptRecord | StateError], commit: int
    ) -> None:
        try:
            await asyncio.to_thread(self.store.sync_through, commit)
        except Exception as exc:  # not on disk: none of these may be sent
            log.warning("the attempts could not be made durable", exc_info=True)
            release(waiting, results, exc)
            return
        release(waiting, results)


def release(
    waiting: Waiting, results: list[AttemptRecord | StateError], failure: Exception | None = None
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
