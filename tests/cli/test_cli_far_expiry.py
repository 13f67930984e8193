"""Every expires_at RFC 3339 allows is an operation to review, never "not performed" (audit A49:
year 9999 was refused, so a valid operation was lost as "the Company's answer can't be used"),
against the strict Company (written from the spec alone): it is queued, `show` keeps and shows
the Company's text, and an approval of it is sent and performed."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import load_config
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status
from poppy_tui.cli.exit_codes import Exit
from tests.cli.conftest import add_to_home

FAR = ["9999-12-31T23:59:59Z", "9999-12-31T23:59:59-05:00", "9999-12-31T23:59:60Z"]


@pytest.mark.parametrize("expires_at", FAR)
def test_a_far_expiry_is_queued_kept_and_shown(cli, home, strict, expires_at):
    strict.state.expires_at_text = expires_at
    add_to_home(cli, strict)
    run = cli(
        "call", strict.base_url, "POST", "/bookings/bk_1/rebook", "--body", '{"date": "2026-12-05"}'
    )
    assert run.code == Exit.PENDING, (run.out, run.err)
    assert "needs your approval" in run.out
    shown = cli("show", "1", "--json")
    assert shown.code == 0, shown.err
    current = json.loads(shown.out)["operation"]["current"]
    assert current["expires_at_as_sent"] == expires_at
    assert current["expires_at"].startswith("9999-12-30")
    text = cli("show", "1")
    assert expires_at in text.out or "9999-12-30" in text.out


@pytest.mark.parametrize("expires_at", ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00+05:00"])
def test_a_far_expiry_is_approved_and_performed_and_a_past_one_expires(home, strict, expires_at):
    strict.state.expires_at_text = expires_at

    async def work() -> Status:
        paths = resolve_paths(home).ensure()
        agent = Agent.open(paths, replace(load_config(paths), request_timeout_seconds=5.0))
        try:
            company = await agent.add_company(strict.base_url)
            first = await agent.call_api(
                company, "POST", "/bookings/bk_1/rebook", {"date": "2026-12-05"}
            )
            assert first.outcome == "operation", first.detail
            op = agent.store.get_operation(first.operation_row)
            if op.current.expires_at.year == 1:
                agent.store.expire_due()
                return agent.store.get_operation(op.id).status
            agent.approve(op.id, op.current.id)
            return (await agent.wait_for_outcome(op.id, timeout=30)).status
        finally:
            await agent.aclose()

    status = asyncio.run(work())
    if expires_at.startswith("9999"):
        assert status == Status.PERFORMED
        assert strict.state.bookings["bk_1"]["date"] == "2026-12-05"
    else:  # long past: expired, never "not performed"
        assert status == Status.EXPIRED
