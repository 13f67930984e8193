"""`call` and `tool` say "performed" (exit 0) only for what was performed (Ops 5), against the
strict Company (written from the spec alone) on loopback: an outcome the Company reached for
another request under a reused operation_id is not the caller's, with or without --wait, and an
operation carried in a success answer (API 200, MCP isError false) is neither an operation to
approve nor success."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import load_config
from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.cli.exit_codes import Exit


def rebooked_bk_1(home, strict) -> int:
    """Request A (rebook bk_1) approved by the person (the TUI's write path) and performed."""

    async def work() -> int:
        paths = resolve_paths(home).ensure()
        agent = Agent.open(paths, replace(load_config(paths), request_timeout_seconds=5.0))
        try:
            company = await agent.add_company(strict.base_url)
            first = await agent.call_api(
                company, "POST", "/bookings/bk_1/rebook", {"date": "2026-12-05"}
            )
            op = agent.store.get_operation(first.operation_row)
            agent.approve(op.id, op.current.id)
            assert (await agent.wait_for_outcome(op.id, timeout=30)).status == Status.PERFORMED
            return op.id
        finally:
            await agent.aclose()

    return asyncio.run(work())


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_call_without_wait_never_reports_another_requests_performed(cli, home, strict, as_json):
    row = rebooked_bk_1(home, strict)
    extra = ["--json"] if as_json else []
    run = cli(
        "call",
        strict.base_url,
        "POST",
        "/bookings/bk_2/rebook",
        "--body",
        '{"date": "2026-12-07"}',
        *extra,
    )
    assert run.code == Exit.NOT_PERFORMED, (run.out, run.err)
    text = run.err if as_json else run.out + run.err
    assert "performed by the Company" not in text.replace("not performed by the Company", "")
    if as_json:
        data = json.loads(run.out)
        [op] = data["operations"]
        assert op["status"] == "not_performed" and op["id"] == row and op["outcome"] is None
        assert "/bookings/bk_1/rebook" in op["outcome_detail"]
    else:
        assert (
            "/bookings/bk_1/rebook" in run.out + run.err
        )  # it says which request the approval went with
    assert strict.state.bookings["bk_2"]["date"] == "2026-11-20"  # indeed not performed


def test_call_with_wait_says_the_same(cli, home, strict):
    row = rebooked_bk_1(home, strict)
    run = cli(
        "call",
        strict.base_url,
        "POST",
        "/bookings/bk_2/rebook",
        "--body",
        '{"date": "2026-12-07"}',
        "--wait",
    )
    assert run.code == Exit.NOT_PERFORMED, (run.out, run.err)
    text = run.out + run.err
    # The same words as without --wait: never "performed" for bk_2, and which request the outcome
    # belongs to.
    assert "performed by the Company" not in text.replace("not performed by the Company", "")
    assert "/bookings/bk_1/rebook" in text and f"operation {row}: not performed" in text
    assert strict.state.bookings["bk_2"]["date"] == "2026-11-20"  # indeed not performed
    with Store.open(resolve_paths(home).database) as store:
        assert [d.decision for d in store.decisions(row)] == ["approved"]  # nothing new decided


def test_an_operation_in_a_success_answer_is_unknown_not_performed_and_not_queued(
    cli, home, strict
):
    strict.state.operation_in_success = True
    assert cli("companies", "add", strict.base_url).code == Exit.OK
    api = cli("call", strict.base_url, "POST", "/bookings/bk_1/cancel", "--body", "{}")
    assert api.code == Exit.UNKNOWN, (api.out, api.err)
    assert "outcome unknown" in api.err and "carries an operation" in api.err
    tool = cli("tool", strict.base_url, "cancel_booking", "--args", '{"booking_id": "bk_1"}')
    assert tool.code == Exit.UNKNOWN, (tool.out, tool.err)
    assert "isError false" in tool.err
    with Store.open(resolve_paths(home).database) as store:
        assert (
            store.list_operations() == []
        )  # nothing waits for a person: there is nothing to approve


def cancelled_in_doubt(home, strict) -> int:
    """Request A (cancel bk_1) approved; the Company performs it but answers 500 until the retry
    window ends: outcome unknown. It mints a new operation_id for every request."""
    from tests.companies.strict_company import RawAnswer

    strict.state.mint_operation_ids = True
    strict.state.approval_answers = [
        RawAnswer(500, "text/html", b"<h1>oops</h1>") for _ in range(200)
    ]

    async def work() -> int:
        paths = resolve_paths(home).ensure()
        agent = Agent.open(
            paths,
            replace(load_config(paths), request_timeout_seconds=5.0, retry_window_seconds=0.5),
        )
        try:
            company = await agent.add_company(strict.base_url)
            first = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
            agent.approve(first.operation_row, first.revision_row)
            assert (
                await agent.wait_for_outcome(first.operation_row, timeout=30)
            ).status == Status.OUTCOME_UNKNOWN
            return first.operation_row
        finally:
            await agent.aclose()

    return asyncio.run(work())


def test_the_same_request_while_the_first_is_in_doubt_is_queued_but_held_and_says_why(
    cli, home, strict
):
    first = cancelled_in_doubt(home, strict)
    run = cli("call", strict.base_url, "POST", "/bookings/bk_1/cancel", "--body", "{}")
    assert run.code == Exit.PENDING, (run.out, run.err)
    assert "can't be approved yet" in run.err and f"operation {first} (" in run.err
    assert "whether the Company performed it is unknown" in run.err
    second = json.loads(cli("pending", "--json").out)["operations"][-1]["id"]
    shown = cli("show", str(second)).out
    assert "Can't be approved yet:" in shown and f"operation {first}" in shown
    assert json.loads(cli("show", str(second), "--json").out)["operation"]["held_by"] == [first]
