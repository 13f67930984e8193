"""Tasks the agent starts and need not wait for (reading an arriving operation's resource),
which a command that exits lets finish briefly (`settle`) and then stops."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class BackgroundTasks:
    def __init__(self, what: str) -> None:
        self._what = what  # for the log: "reading a resource"
        self._tasks: set[asyncio.Task] = set()

    def start(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run `work` as a task on the running loop (closed unrun when there is no loop)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            work.close()
            return
        task = loop.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    async def settle(self, timeout: float) -> None:
        """Wait up to `timeout` for what was started, then stop what is left."""
        pending = list(self._tasks)
        if not pending:
            return
        _, late = await asyncio.wait(pending, timeout=timeout)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late, timeout=1.0)

    def _done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("%s failed", self._what, exc_info=task.exception())
