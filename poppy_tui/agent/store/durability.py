"""When a commit must be on disk: before the call returns, very soon after, or whenever SQLite gets to it.

Every commit is atomic and, in WAL mode, survives the process being killed at any moment: the
log is written before COMMIT returns. What differs is a power failure or an operating-system
crash, which loses whatever the disk has not been told to keep (fsync). One fsync costs about as
much as a whole request to a Company on loopback, so poppy-tui pays for it before returning only
where a lost commit could lead to something the person did not want:

- NOW (SQLite's synchronous=FULL: the log is fsynced before COMMIT returns): every commit that
  stops or guards a send. An attempt row, before its request leaves (so a send that may have
  happened is never forgotten); a decline, a withdrawal, the person's resolution of an unknown
  outcome, and a new revision that supersedes an approval (lose any of those and an approval the
  person took back could be sent after the reboot).
- SOON (the log is fsynced by a background thread shortly after COMMIT returns: within about
  10 ms, GATHER_SECONDS plus the fsync): commits whose loss is safe, because nothing is sent on them before a NOW commit
  (which fsyncs the log, and with it every commit before it) or because what they record comes
  back by itself. An approval (nothing is sent for it before its attempt row is fsynced; lost, the
  operation is simply still waiting for the person); an outcome (lost, the attempt looks
  interrupted and the same approval is resent, which the Company answers with its first answer,
  Ops 7); requests and operations as they arrive, conversation messages, Company records.
- LAZY (no fsync of our own): leases, which only coordinate senders; a lost lease only frees an
  operation early, and a lease is checked again before each attempt.

docs/state-machine.md lists every store method with its durability.
"""

from __future__ import annotations

import os
import threading
from enum import Enum
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging


def _log() -> logging.Logger:
    # logging (and traceback with it) loads only when there is something to say: every CLI
    # command opens the store, and most never warn.
    import logging

    return logging.getLogger(__name__)


CLOSE_WAIT_SECONDS = 5.0
# How long the flusher lets SOON commits gather before it fsyncs them all at once.
GATHER_SECONDS = 0.01
# How long the flusher thread waits for work before it ends.
IDLE_SECONDS = 30.0


class Durability(Enum):
    NOW = "now"
    SOON = "soon"
    LAZY = "lazy"
    # Committed without an fsync of its own; the caller then waits for sync_through() (off the
    # event loop) before acting on it. As durable as NOW by the time anything depends on it.
    AWAITED = "awaited"


class WalFlusher:
    """fsyncs a database's write-ahead log after SOON commits, off the committing thread.

    Commits are numbered as they are reported. A flush started after commit N returned covers
    commits 1..N: their frames are already in the log file, and fsync makes the whole file durable.
    A NOW commit made by SQLite itself covers every commit before it in the same way.
    """

    def __init__(self, database: Path) -> None:
        self._wal = Path(f"{database}-wal")
        self._directory = database.parent
        lock = threading.Lock()
        # Two conditions on one lock, so that waking the flusher and waking those who wait for
        # durability are separate: a thread woken per commit would cost the committing thread
        # more (the GIL changes hands) than the fsync it saves.
        self._work = threading.Condition(lock)
        self._done = threading.Condition(lock)
        self._reported = 0  # SOON commits reported so far
        self._durable = 0  # of those, known to be on disk
        self._thread: threading.Thread | None = None
        self._closing = False
        self._fd: int | None = None
        self._fsyncing = threading.Lock()  # sync_now() and the thread share one descriptor
        self.failures = 0

    # ---- what the store tells us -------------------------------------------------------------

    def committed_soon(self) -> None:
        with self._work:
            self._reported += 1
            if self._reported - self._durable > 1:
                return  # the flusher already has work and will see this commit too
            if self._thread is None and not self._closing:
                self._thread = threading.Thread(
                    target=self._run, name=f"poppy-store-flush:{self._wal.name}", daemon=True
                )
                self._thread.start()
            self._work.notify()

    def committed_now(self) -> None:
        """SQLite just fsynced the log for a NOW commit: every earlier commit is on disk too."""
        with self._done:
            if self._durable < self._reported:
                self._durable = self._reported
                self._done.notify_all()

    def committed_awaited(self) -> int:
        """An AWAITED commit just returned: its number, for sync_through(). The background thread
        is not woken: the committer fsyncs (or finds its commit covered) itself, at once."""
        with self._work:
            self._reported += 1
            return self._reported

    def sync_through(self, target: int) -> None:
        """Return once commits 1..target are on disk, fsyncing the log if nothing covered them yet.
        Safe to call from a worker thread while the store keeps committing on its own thread:
        a commit is reported only after COMMIT returned, so its frames are in the log file before
        any fsync that starts after the report. Callers waiting together share one fsync (the
        first one through the lock covers the others). Raises OSError if the log could not be
        fsynced: then nothing that depends on those commits may go ahead."""
        with self._fsyncing:
            with self._done:
                if self._durable >= target:
                    return
                covering = self._reported  # >= target: every commit reported so far is in the file
            failures = self.failures
            self._fsync_locked()
            if self.failures != failures:
                raise OSError(f"could not flush the database log {self._wal}")
        self._covered(covering)

    def sync_now(self) -> None:
        """Make every commit so far durable before returning (for a SOON commit that turned out
        to need NOW, such as a new revision that superseded an approval)."""
        with self._done:
            target = self._reported
        self._fsync()
        self._covered(target)

    def _covered(self, target: int) -> None:
        with self._done:
            if self._durable < target:
                self._durable = target
                self._done.notify_all()

    # ---- waiting -------------------------------------------------------------------------------

    @property
    def soon_commits(self) -> int:
        """SOON commits reported so far."""
        with self._done:
            return self._reported

    @property
    def pending(self) -> int:
        """SOON commits not yet known to be on disk."""
        with self._done:
            return self._reported - self._durable

    def wait(self, timeout: float | None = None) -> bool:
        """Until every commit reported so far is durable; False if `timeout` ran out first."""
        with self._done:
            target = self._reported
            if self._durable < target:
                self._work.notify()  # skip the gathering pause: someone is waiting
            return self._done.wait_for(lambda: self._durable >= target, timeout)

    def close(self, timeout: float = CLOSE_WAIT_SECONDS) -> None:
        """Flush what is pending, then stop the thread. Called before the connection closes."""
        if not self.wait(timeout):
            _log().warning("the database log was not flushed within %ss of closing", timeout)
        with self._work:
            self._closing = True
            self._work.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        with self._fsyncing:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    # ---- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._work:
                busy = self._work.wait_for(
                    lambda: self._reported > self._durable or self._closing, IDLE_SECONDS
                )
                if self._closing or not busy:
                    # Idle: end the thread (the next SOON commit starts another), so a store
                    # that is dropped without close() doesn't keep one alive for good.
                    self._thread = None
                    return
                # Let the commits of one step gather, and a NOW commit cover them for free,
                # before paying for an fsync.
                self._work.wait(GATHER_SECONDS)
                if self._closing or self._durable >= self._reported:
                    continue
                target = self._reported
            self._fsync()
            self._covered(target)

    def _fsync(self) -> None:
        with self._fsyncing:
            self._fsync_locked()

    def _fsync_locked(self) -> None:
        try:
            if self._fd is None:
                # Opened for writing only because Windows refuses to fsync a read-only descriptor;
                # nothing is written through it. The log carries no fcntl locks (SQLite locks
                # the -shm file and the database), so closing this descriptor can't drop any.
                self._fd = os.open(self._wal, os.O_RDWR)
                if os.name == "posix":
                    # A log created since the database was opened must be findable after a
                    # power failure too: its directory entry is made durable once, as SQLite does.
                    directory = os.open(self._directory, os.O_RDONLY)
                    try:
                        os.fsync(directory)
                    finally:
                        os.close(directory)
            os.fsync(self._fd)
        except FileNotFoundError:
            pass  # no log: everything was checkpointed into the database file, which SQLite synced
        except OSError as exc:
            # Not retried in a loop: the next NOW commit meets the same disk, and SQLite then
            # reports the failure to the caller as a StoreError.
            self.failures += 1
            _log().warning("could not flush the database log %s: %s", self._wal, exc)
