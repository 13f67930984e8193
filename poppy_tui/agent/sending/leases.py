"""Holding an operation's lease while it is sent or waits to resend. Only the lease holder
sends; losing the lease stops the send under way, since another dispatcher may already be
sending and two senders must never overlap (docs/state-machine.md, "Claim")."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from typing import Any

from poppy_tui.agent.store import Store, StoreError

log = logging.getLogger(__name__)


def new_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Lease:
    """Whether this dispatcher still holds an operation's lease."""

    def __init__(self) -> None:
        self.lost = asyncio.Event()
        # The task awaiting the send, while it does: losing the lease cancels it there.
        self.sending: asyncio.Task[Any] | None = None
        self.renewal: asyncio.TimerHandle | None = None

    def lose(self) -> None:
        if self.lost.is_set():
            return  # lost once, cancelled at most once
        self.lost.set()
        if self.sending is not None:
            self.sending.cancel()

    def stop_renewing(self) -> None:
        if self.renewal is not None:
            self.renewal.cancel()
            self.renewal = None


def keep_lease(store: Store, op_row: int, owner: str, lease_seconds: float, lease: Lease) -> None:
    """Renew the lease every third of its length until `lease.stop_renewing()`, from a timer on
    the loop (a renewal is one short statement: a task per send would cost more than it does).
    The timer paces on the loop's own time; the lease's end is stamped by the agent's clock."""
    loop = asyncio.get_running_loop()
    interval = max(0.05, lease_seconds / 3)
    last_ok = loop.time()

    def renew() -> None:
        nonlocal last_ok
        lease.renewal = None
        try:
            if not store.renew_lease(op_row, owner, lease_seconds):
                lease.lose()
                return
            last_ok = loop.time()
        except StoreError:
            log.warning("renewing the lease of operation %s failed", op_row, exc_info=True)
            if loop.time() - last_ok > lease_seconds * 0.7:
                lease.lose()
                return
        except Exception:  # unsure whether we hold it: stop, as if lost
            log.exception("renewing the lease of operation %s failed", op_row)
            lease.lose()
            return
        lease.renewal = loop.call_later(interval, renew)

    lease.renewal = loop.call_later(interval, renew)
