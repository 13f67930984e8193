"""`poppy-tui send` says every wait as it begins (which operation, why, until when), so it never
waits in silence; and in a demo's home after the demo ended it says its approvals can't be sent
and exits at once, instead of retrying a port nothing listens on until the terms expire (walk C8).
Against the strict Company (written from the spec alone), in-process."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import load_config
from poppy_tui.agent.demo_marker import DemoRun, write_demo_run
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.agent.store.connection import stamp
from poppy_tui.cli.exit_codes import Exit
from tests.companies.strict_company import RawAnswer


def approved_cancellation(home, strict, grace: float) -> int:
    async def work() -> int:
        paths = resolve_paths(home).ensure()
        agent = Agent.open(paths, replace(load_config(paths), request_timeout_seconds=5.0))
        try:
            company = await agent.add_company(strict.base_url)
            result = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
            assert result.outcome == "operation", result.detail
            op = agent.store.get_operation(result.operation_row)
            agent.store.approve(op.id, op.current.id, grace_seconds=grace)
            return op.id
        finally:
            await agent.aclose()

    return asyncio.run(work())


def test_send_says_the_grace_period_it_waits_for(cli, home, strict):
    row = approved_cancellation(home, strict, grace=1.0)
    run = cli("send")
    assert run.code == Exit.OK, run.err
    lines = run.err.splitlines()
    waits = [line for line in lines if "waiting:" in line]
    assert len(waits) == 1, run.err
    assert re.fullmatch(
        rf"operation {row} \(Strict Travel, cxl_bk_1\): waiting: in its grace period "
        r"\(w in the TUI withdraws it\); sent at .+ \(in [01]s\)",
        waits[0],
    ), waits[0]
    # Said before the send, and the outcome after it.
    assert lines.index(waits[0]) < next(i for i, line in enumerate(lines) if "performed" in line)


def test_send_says_each_retry_it_waits_for_and_why(cli, home, strict):
    strict.state.approval_answers = [
        RawAnswer(
            503, "application/json", b'{"error": "busy"}', {"Retry-After": "1"}, perform=False
        )
    ]
    row = approved_cancellation(home, strict, grace=0.0)
    run = cli("send")
    assert run.code == Exit.OK, run.err
    [retry] = [line for line in run.err.splitlines() if "trying again" in line]
    assert retry.startswith(f"operation {row} (Strict Travel, cxl_bk_1): waiting: attempt 1 ")
    assert "'busy, try later' (HTTP 503)" in retry and "resending until " in retry
    assert "next try at " in retry or "trying again within " in retry
    assert strict.state.perform_count["cxl_bk_1"] == 1


def test_send_in_a_stopped_demos_home_says_it_cant_send_and_exits(cli, home, strict):
    row = approved_cancellation(home, strict, grace=0.0)
    paths = resolve_paths(home)
    # As `poppy-tui --demo` leaves its home once it ended: its Company has stopped.
    write_demo_run(paths.data_dir, DemoRun(strict.base_url, 1, stamp(), stamp()))
    run = cli("send")
    assert run.code == Exit.ERROR, run.err
    assert f"operation {row} (Strict Travel, cxl_bk_1): not sent, and it won't be" in run.err
    assert "ran in a demo that ended" in run.err and "poppy-tui --demo" in run.err
    assert "sending 1 approved" not in run.err
    assert strict.state.approvals_received() == []  # nothing tried
    with Store.open(paths.database) as store:
        assert store.get_operation(row).status == Status.APPROVED
        assert store.attempts(row) == []
