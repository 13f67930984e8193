"""How a CLI command runs its event loop: `run(main)`, asyncio.run with Ctrl-C that always ends it.

asyncio.run installs a Python-level SIGINT handler. Python runs such a handler only when the main
thread next executes Python code, and nothing wakes an event loop asleep in epoll_wait with no
timer due (a prompt waiting for the person's typing): a Ctrl-C whose C-level handler ran on another
thread (the identity publisher's, a DNS lookup's), or just before the main thread entered
epoll_wait, was noticed only when something else woke the loop, which at a prompt is never. Here
the loop watches SIGINT itself (loop.add_signal_handler): the C-level handler writes the signal to
the loop's own wake-up descriptor, whichever thread runs it and whenever it comes.

The first Ctrl-C cancels `main`, whose `finally` blocks close what it opened (the store flushes
what is recorded), and then raises KeyboardInterrupt (cli/main.py says "interrupted" and exits 130);
a second Ctrl-C raises KeyboardInterrupt at once.

Blocking calls that asyncio hands to the loop's default executor (a DNS lookup, an fsync, opening
the browser) run in daemon threads that the loop's shutdown does not wait for: a ThreadPoolExecutor's
workers are joined when the loop closes and again when Python exits, so a lookup of a name whose
DNS server doesn't answer kept the process alive after Ctrl-C until the resolver gave up. What
such a call leaves behind is harmless to drop: the commits an fsync covers are already in the log.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import signal
import threading
from typing import Any, TypeVar
from collections.abc import Callable, Coroutine

T = TypeVar("T")


# As many blocking calls at once as ThreadPoolExecutor's own default allows on a small machine;
# more wait their turn (a burst of DNS lookups no longer starts a thread each).
MAX_BLOCKING_THREADS = 16


class DaemonThreadExecutor(concurrent.futures.ThreadPoolExecutor):
    """Jobs run in at most MAX_BLOCKING_THREADS daemon threads, which shutdown() never waits for.
    A ThreadPoolExecutor only in name, which loop.set_default_executor requires: its own pool of
    joined workers is never started (submit and shutdown are replaced). A thread takes queued jobs
    until none is left, then ends, so an idle command keeps no threads."""

    def __init__(self, max_threads: int = MAX_BLOCKING_THREADS) -> None:
        super().__init__(max_workers=1)
        self._jobs_lock = threading.Lock()
        self._shut_down = False
        self._max_threads = max_threads
        self._live_threads = 0
        self._jobs: collections.deque[Callable[[], None]] = collections.deque()

    def submit(
        self, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001  (handed to whoever awaits the future)
                future.set_exception(exc)
            else:
                future.set_result(result)

        with self._jobs_lock:
            if self._shut_down:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._jobs.append(job)
            if self._live_threads < self._max_threads:
                self._live_threads += 1
                threading.Thread(target=self._work, name="poppy-blocking-call", daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            with self._jobs_lock:
                if not self._jobs:
                    self._live_threads -= 1
                    return
                job = self._jobs.popleft()
            job()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        # `wait` is not honoured on purpose: a job still running is one nothing awaits any more.
        with self._jobs_lock:
            self._shut_down = True


class CtrlC:
    """SIGINT as the loop sees it: the first cancels the main task (or calls `first`, when a
    command set one), the next raises KeyboardInterrupt."""

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None
        self.count = 0
        # A command's own first answer to Ctrl-C (`send --watch` finishes the send under way).
        self.first: Callable[[], None] | None = None

    def __call__(self) -> None:
        self.count += 1
        if self.count == 1 and self.first is not None:
            self.first()
            return
        if self.task is not None and not self.task.done() and not self.task.cancelling():
            self.task.cancel()
            return
        raise KeyboardInterrupt

    async def guard(self, main: Coroutine[Any, Any, T]) -> T:
        self.task = asyncio.current_task()
        if self.count:  # Ctrl-C came before the first step: nothing has started, nothing to close
            main.close()
            raise KeyboardInterrupt
        return await main


_watching: dict[asyncio.AbstractEventLoop, CtrlC] = {}


def ctrl_c() -> CtrlC | None:
    """The running loop's CtrlC, when it was started by run() and watches SIGINT."""
    return _watching.get(asyncio.get_running_loop())


def run(main: Coroutine[Any, Any, T]) -> T:
    """asyncio.run(main), with Ctrl-C watched by the loop itself and a default executor whose
    threads never keep the process (see the module's docstring)."""
    watcher = CtrlC()
    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        loop.set_default_executor(DaemonThreadExecutor())
        try:
            # Before runner.run: asyncio.Runner then leaves SIGINT to the loop.
            loop.add_signal_handler(signal.SIGINT, watcher)
        except (NotImplementedError, RuntimeError, ValueError):
            return runner.run(main)  # Windows, or not the main thread: asyncio's own handling
        _watching[loop] = watcher
        try:
            return runner.run(watcher.guard(main))
        except asyncio.CancelledError:
            task = watcher.task
            if watcher.count and task is not None and task.uncancel() == 0:
                raise KeyboardInterrupt from None
            raise
        finally:
            del _watching[loop]
        # Runner's close (on leaving `with`) removes the handler with the loop: SIGINT is
        # Python's default again for whatever runs next.
