"""At most `limit` of one Company's operations sending at once, per pass of the dispatcher: a
thousand approvals must not open a thousand requests at once. A turn is held for a send only,
never while an operation waits to resend, so one operation's retries never delay another's
first send (driver.py)."""

from __future__ import annotations

import asyncio
import collections


class Turns:
    """Turns that come free are handed out together, once half of them are free: the sends
    they begin start their attempts in the same turn of the event loop, so one commit (one
    fsync) covers them all."""

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
