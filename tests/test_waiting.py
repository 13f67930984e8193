"""The one polling helper (tests/waiting.py): returns the first truthy value, awaits a coroutine
condition, and fails after its deadline naming what it waited for."""

from __future__ import annotations

import time

import pytest

from tests.waiting import TimedOut, wait_until, wait_until_blocking


async def test_returns_the_first_truthy_value_of_the_condition():
    seen = iter([0, [], None, ["ready"], ["later"]])
    assert await wait_until(lambda: next(seen), step=0) == ["ready"]


async def test_a_coroutine_condition_is_awaited_on_every_look():
    looks = []

    async def dispatched_enough() -> bool:
        looks.append(1)
        return len(looks) == 3

    assert await wait_until(dispatched_enough, step=0) is True
    assert len(looks) == 3


async def test_times_out_with_what_it_waited_for_and_what_it_saw():
    with pytest.raises(
        TimedOut, match=r"after 0.05 s waiting: the approval sent \(last seen: \[\]\)"
    ):
        await wait_until(list, timeout=0.05, describe="the approval sent")
    with pytest.raises(AssertionError, match="screen says 'Inbox'"):
        await wait_until(lambda: False, timeout=0.01, describe=lambda: "screen says 'Inbox'")


async def test_without_describe_a_lambda_is_named_by_its_source():
    with pytest.raises(TimedOut, match=r"lambda: 1 > 2"):
        await wait_until(lambda: 1 > 2, timeout=0.01)


def test_the_blocking_twin_waits_on_the_wall_clock_not_on_a_count_of_steps():
    began = time.monotonic()
    with pytest.raises(TimedOut):
        wait_until_blocking(lambda: False, timeout=0.06, step=0.001)
    assert time.monotonic() - began >= 0.06
    flips = iter([False, False, "yes"])
    assert wait_until_blocking(lambda: next(flips), step=0) == "yes"
