"""`show` and `pending --json` say why an outcome is unknown and what poppy-tui found out since
(Ops §7: finding out another way; docs/state-machine.md), against the strict Company (written
from the spec alone) on loopback."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace


from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import load_config
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status
from tests.waiting import wait_until


def unknown_then_looked_at(home, strict) -> int:
    strict.state.error_after_perform, strict.state.error_after_perform_times = 500, 10_000

    async def work() -> int:
        paths = resolve_paths(home).ensure()
        agent = Agent.open(
            paths,
            replace(load_config(paths), retry_window_seconds=0.3, request_timeout_seconds=5.0),
        )
        try:
            company = await agent.add_company(strict.base_url)
            first = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
            op = agent.store.get_operation(first.operation_row)
            agent.approve(op.id, op.current.id)
            assert (
                await agent.wait_for_outcome(op.id, timeout=30)
            ).status == Status.OUTCOME_UNKNOWN
            await wait_until(
                lambda: (agent.dispatcher.next_due_in() or 0) <= 0,
                timeout=30,
                describe="the outcome probe due",
            )
            await agent.dispatch_once()
            return op.id
        finally:
            await agent.aclose()

    return asyncio.run(work())


def test_show_and_pending_say_why_unknown_and_what_was_found(cli, home, strict):
    row = unknown_then_looked_at(home, strict)
    shown = cli("show", str(row)).out
    assert "Status: outcome_unknown" in shown
    assert "Why the outcome is unknown: no definite answer" in shown
    assert "Found out since (another way, Ops 7):" in shown
    assert f"GET {strict.base_url}/bookings/bk_1" in shown and "cancelled" in shown
    data = json.loads(cli("show", str(row), "--json").out)["operation"]
    assert data["unknown_reason"].startswith("no definite answer")
    assert {f["source"] for f in data["found_out"]} >= {f"GET {strict.base_url}/bookings/bk_1"}
    assert data["next_look_at"] is not None
    [pending] = json.loads(cli("pending", "--json").out)["operations"]
    assert pending["status"] == "outcome_unknown"
    assert (
        "no definite answer" in pending["outcome_detail"]
        and "Found out so far" in pending["outcome_detail"]
    )


def test_call_wait_gets_only_its_own_requests_outcome(cli, home, strict):
    """The Company reuses one operation_id for two bookings (which Ops §3 forbids); the person
    approves the other booking's terms. `call --wait` for the first booking must not print the other's answer."""
    import threading

    from poppy_tui.cli.exit_codes import Exit

    paths = resolve_paths(home).ensure()

    async def add() -> None:
        agent = Agent.open(paths, load_config(paths))
        try:
            await agent.add_company(strict.base_url)
        finally:
            await agent.aclose()

    asyncio.run(add())
    result: dict = {}
    waiting = threading.Thread(
        target=lambda: result.update(
            run=cli(
                "call",
                "Strict Travel",
                "POST",
                "/bookings/bk_1/rebook",
                "--json",
                '{"date": "2026-12-05"}',
                "--wait",
            )
        )
    )
    waiting.start()

    async def other_request_approved() -> None:
        agent = Agent.open(paths, load_config(paths))
        try:
            await wait_until(
                agent.store.list_operations, timeout=30, describe="the first request recorded"
            )
            company = agent.find_company("Strict Travel")
            second = await agent.call_api(
                company, "POST", "/bookings/bk_2/rebook", {"date": "2026-12-07"}
            )
            op = agent.store.get_operation(second.operation_row)
            agent.approve(op.id, op.current.id)
            done = await agent.wait_for_outcome(op.id, timeout=30, request_id=second.request_id)
            assert done.status == Status.PERFORMED
        finally:
            await agent.aclose()

    asyncio.run(other_request_approved())
    waiting.join(60)
    run = result["run"]
    assert run.code == Exit.NOT_PERFORMED, (run.out, run.err)
    assert "bk_2" not in run.out  # the other booking's answer is not this request's
    assert "different request" in run.err and "/bookings/bk_1/rebook" in run.err
    assert (
        strict.state.bookings["bk_2"]["date"] == "2026-12-07"
        and strict.state.bookings["bk_1"]["date"] == "2026-11-02"
    )
