"""The point a request passes only once its attempt row is on disk.

The dispatcher commits an attempt row, then fsyncs it in a worker thread. Meanwhile the send
prepares its request (the Session JWT is signed, the Poppy-Approval and other headers written,
the body encoded): that work needs nothing from the disk. The request itself leaves only after
`wait_until_recorded()` returned, which is once the fsync returned; when the fsync failed, it
raises AttemptNotDurable and nothing is sent (docs/reliability.md, "The attempt's fsync overlaps
the request's preparation").

The gate travels in a context variable set on the send's own task, so that nothing between the
dispatcher and the transports needs a new parameter. Only a sender that says it honours the gate
(every path of Agent._send_approval does: the API transport right before its request, the others
before anything else) is started before the fsync returned; any other sender is called after it.
"""

from __future__ import annotations

import asyncio
import contextvars

_GATE: contextvars.ContextVar[asyncio.Future[None] | None] = contextvars.ContextVar("poppy_attempt_durable", default=None)


class AttemptNotDurable(Exception):
    """The attempt row could not be made durable: its request must not leave."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"the attempt was not recorded on disk ({cause}); nothing was sent")
        self.cause = cause


def gated_context(durable: asyncio.Future[None]) -> contextvars.Context:
    """A copy of the current context in which `wait_until_recorded()` waits for `durable`."""
    context = contextvars.copy_context()
    context.run(_GATE.set, durable)
    return context


async def wait_until_recorded() -> None:
    """Return once this send's attempt row is on disk (at once outside a gated send)."""
    gate = _GATE.get()
    if gate is None:
        return
    if not gate.done():
        # Shielded: a send cancelled here must not cancel the fsync's future, which the
        # dispatcher and the other sends of the same group share. Waited for with wait(),
        # which returns without raising: the failure is read below.
        await asyncio.wait([asyncio.shield(gate)])
    failure = gate.exception()
    if failure is not None:
        raise AttemptNotDurable(failure)
