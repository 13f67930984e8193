"""Outcomes committed in groups (docs/reliability.md, "Outcomes settled in groups").

`Settles.queue` keeps an operation's end (and its last attempt's) to be committed with the
others that come before the next group of attempts is committed, or within
SETTLE_GATHER_SECONDS, or at the end of the pass, whichever is first: one transaction (one
background fsync) for many. Until then the operation keeps its lease, so no one else sends it;
lost to a crash, its attempt stays unfinished and the same approval is resent.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from poppy_tui.agent.store import Status, Store

log = logging.getLogger(__name__)

# Outcomes are committed together, at the latest this long after the first.
SETTLE_GATHER_SECONDS = 0.005

# An attempt as it is finished: (attempt id, outcome, HTTP status, response, detail).
Finished = tuple[int, str, int | None, Any, str | None]
# One of Store.settle_many's items.
Settle = tuple[Finished | None, int, str, Status, Any, str | None, float | None]


class Settles:
    def __init__(self, store: Store, owner: str, probe_after: float | None) -> None:
        self.store = store
        self.owner = owner
        # An outcome left unknown is first looked at this long after (outcome_probe.py).
        self._probe_after = probe_after
        self._queue: list[Settle] = []
        self._timer: asyncio.TimerHandle | None = None
        # Operations settled (committed), in that order, kept from collect() on until take():
        # headless sending reports them even when an approval made meanwhile was claimed and
        # settled within one pass. None: nobody asked, nothing kept.
        self._settled: list[int] | None = None

    def queue(
        self,
        op_row: int,
        status: Status,
        detail: str,
        outcome: Any = None,
        finished: Finished | None = None,
    ) -> None:
        probe = self._probe_after if status == Status.OUTCOME_UNKNOWN else None
        self._queue.append((finished, op_row, self.owner, status, outcome, detail, probe))
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(SETTLE_GATHER_SECONDS, self.commit)

    def commit(self) -> None:
        """Commit what is queued. Never raises: it runs from timers and other commits."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        group, self._queue = self._queue, []
        if not group:
            return
        try:
            results = self.store.settle_many(group)
        except Exception as exc:  # called from timers and other commits: never raise
            # None of them was committed: their attempts stay unfinished (in doubt) and their
            # leases lapse, so the same approvals are resent, as after a crash.
            log.warning(
                "dispatcher: %d outcomes could not be recorded: %s", len(group), exc, exc_info=True
            )
            return
        for settle, problem in zip(group, results, strict=True):
            if problem is None:
                if self._settled is not None:
                    self._settled.append(settle[1])
            else:
                log.warning(
                    "operation %s could not be settled as %s: %s",
                    settle[1],
                    settle[3].value,
                    problem,
                )

    def collect(self) -> None:
        """From now on keep the operations settled, for take()."""
        if self._settled is None:
            self._settled = []

    def take(self) -> list[int]:
        """The operations settled since collect() or the last call, in that order."""
        rows, self._settled = self._settled or [], []
        return rows
