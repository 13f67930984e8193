"""The one way tests wait for something to happen: poll a condition in short steps until it holds,
and fail after a deadline with a message that says what was awaited and what was seen instead.

    got = await wait_until(lambda: shop.requests(is_api_approval), describe="the approval sent")
    wait_until_blocking(lambda: status_of(home, row) == Status.PERFORMED, timeout=30)

`wait_until` is for tests and helpers on an event loop (`pause=pilot.pause` for a Textual app:
tests/ui/ui_sample.py `wait_for`), `wait_until_blocking` for those outside one (threads, child
processes). Both return the condition's first truthy value. The condition of `wait_until` may be a
coroutine function: "dispatch once, then look" is one condition. The deadline is wall-clock time
(time.monotonic), not a count of steps, so a loaded machine waits as long as an idle one.

A test about time itself (an expiry really passing) waits on the stored moment instead:
tests/clock_waits.py `until_past`.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

STEP_SECONDS = 0.02
DEFAULT_TIMEOUT = 10.0

Describe = str | Callable[[], object] | None


class TimedOut(AssertionError):
    """A condition did not hold within its timeout (an AssertionError: pytest reports it as a failure)."""


def _what(condition: Callable[..., object]) -> str:
    """What a condition given without `describe` waits for: its source line, for a lambda."""
    try:
        line = inspect.getsource(condition).strip()
    except (OSError, TypeError):
        line = ""
    if getattr(condition, "__name__", "") == "<lambda>" and line:
        return line
    return getattr(condition, "__qualname__", repr(condition))


def _message(
    describe: Describe, condition: Callable[..., object], timeout: float, last: object
) -> str:
    what = describe() if callable(describe) else describe or _what(condition)
    said = f"timed out after {timeout:g} s waiting"
    said += f": {what}" if what else ""
    if last is not None and last is not False:
        said += f" (last seen: {last!r})"
    return said


async def wait_until(
    condition: Callable[[], T | Awaitable[T]],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    describe: Describe = None,
    step: float = STEP_SECONDS,
    pause: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> T:
    """Await until `condition()` is truthy and return that value; after `timeout` seconds raise
    TimedOut naming `describe` (a string, or a callable giving what the screen shows, say)."""
    deadline = time.monotonic() + timeout
    while True:
        got = condition()
        if inspect.isawaitable(got):
            got = await got
        if got:
            return got  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            raise TimedOut(_message(describe, condition, timeout, got))
        await pause(step)


def wait_until_blocking(
    condition: Callable[[], T],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    describe: Describe = None,
    step: float = STEP_SECONDS,
) -> T:
    """wait_until, for code outside an event loop: blocks the calling thread between looks."""
    deadline = time.monotonic() + timeout
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() >= deadline:
            raise TimedOut(_message(describe, condition, timeout, got))
        time.sleep(step)
