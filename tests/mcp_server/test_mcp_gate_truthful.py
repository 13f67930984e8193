"""`poppy-tui mcp` (the real subprocess, the MCP SDK's client over stdio) reports "performed" only
for what was performed (Ops 5), against the strict Company (written from the spec alone): an
operation_id the Company reused for another request, and an operation carried in a success answer."""

from __future__ import annotations

import pytest

from poppy_tui.agent.store import Status
from tests.companies.strict_company import StrictCompany
from tests.mcp_server.conftest import mcp_client, person_agent, register

pytestmark = pytest.mark.slow


@pytest.fixture
def strict(home, strict: StrictCompany) -> StrictCompany:
    """tests/conftest.py's strict Company, registered in the test home."""
    register(home, strict.base_url)
    return strict


async def rebook_bk_1_performed(home, strict) -> int:
    agent = person_agent(home)
    try:
        company = agent.find_company(strict.base_url)
        first = await agent.call_api(
            company, "POST", "/bookings/bk_1/rebook", {"date": "2026-12-05"}
        )
        op = agent.store.get_operation(first.operation_row)
        agent.approve(op.id, op.current.id)  # the person, through the TUI's write path
        assert (await agent.wait_for_outcome(op.id, timeout=30)).status == Status.PERFORMED
        return op.id
    finally:
        await agent.aclose()


@pytest.mark.parametrize("wait_seconds", [0, 5])
async def test_another_requests_outcome_under_a_reused_operation_id_is_not_reported_as_performed(
    home, strict, tmp_path, wait_seconds
):
    row = await rebook_bk_1_performed(home, strict)
    async with mcp_client(home, tmp_path) as session:
        result = await session.call_tool(
            "call_api",
            {
                "company": strict.base_url,
                "method": "POST",
                "path": "/bookings/bk_2/rebook",
                "body": {"date": "2026-12-07"},
                "wait_seconds": wait_seconds,
            },
        )
    data = result.structured_content
    assert data["result"] == "not_performed" and result.is_error is True, data
    assert data["operation"]["operation"] == row and "response" not in data
    assert strict.state.bookings["bk_2"]["date"] == "2026-11-20"


async def test_an_operation_in_a_success_answer_is_outcome_unknown_and_waits_for_nobody(
    home, strict, tmp_path
):
    strict.state.operation_in_success = True
    async with mcp_client(home, tmp_path) as session:
        api = await session.call_tool(
            "call_api",
            {
                "company": strict.base_url,
                "method": "POST",
                "path": "/bookings/bk_1/cancel",
                "body": {},
                "wait_seconds": 0,
            },
        )
        tool = await session.call_tool(
            "call_company_tool",
            {
                "company": strict.base_url,
                "tool": "cancel_booking",
                "arguments": {"booking_id": "bk_1"},
                "wait_seconds": 0,
            },
        )
        pending = await session.call_tool("list_pending", {})
    for result in (api, tool):
        assert result.structured_content["result"] == "outcome_unknown" and result.is_error is True
        assert "carries an operation" in result.structured_content["meaning"] + str(result.content)
    assert pending.structured_content["operations"] == []


async def test_an_operation_held_for_an_earlier_one_in_doubt_says_why_it_cant_be_approved(
    home, strict, tmp_path
):
    from tests.companies.strict_company import RawAnswer

    strict.state.mint_operation_ids = True
    strict.state.approval_answers = [
        RawAnswer(500, "text/html", b"<h1>oops</h1>") for _ in range(200)
    ]
    agent = person_agent(home, retry_window_seconds=0.5)
    try:
        company = agent.find_company(strict.base_url)
        first = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
        agent.approve(first.operation_row, first.revision_row)
        assert (
            await agent.wait_for_outcome(first.operation_row, timeout=30)
        ).status == Status.OUTCOME_UNKNOWN
    finally:
        await agent.aclose()
    # An agent that reads every operation is told which one holds it; one that reads only its own
    # is told why, without the other's number (it isn't one of its requests').
    async with mcp_client(home, tmp_path, "--agent", "scoped") as session:
        mine = await session.call_tool(
            "call_api",
            {
                "company": strict.base_url,
                "method": "POST",
                "path": "/bookings/bk_1/cancel",
                "body": {},
                "wait_seconds": 0,
            },
        )
    scoped = mine.structured_content
    assert scoped["held"] is True and "not one of yours" in scoped["meaning"], scoped
    assert f"operation {first.operation_row} (" not in scoped["meaning"]
    # Where it stands, in the lifecycle's words, scoped the same way.
    stands = scoped["where_it_stands"]
    assert (stands["why"], stands["on_its_way"]) == ("held_same_action", False), stands
    assert "not one of yours" in stands["says"] and f"operation {first.operation_row}" not in str(
        stands
    )
    async with mcp_client(home, tmp_path, "--see-all") as session:
        result = await session.call_tool(
            "call_api",
            {
                "company": strict.base_url,
                "method": "POST",
                "path": "/bookings/bk_1/cancel",
                "body": {},
                "wait_seconds": 0,
            },
        )
        status = await session.call_tool(
            "operation_status",
            {"operation": str(result.structured_content["operation"]["operation"])},
        )
    for answer in (result, status):
        data = answer.structured_content
        assert data["result"] == "waiting_for_person" and data["held"] is True, data
        assert (
            "can't be approved yet" in data["meaning"]
            and f"operation {first.operation_row} (" in data["meaning"]
        )
        assert data["where_it_stands"]["why"] == "held_same_action"
        assert f"operation {first.operation_row} (" in data["where_it_stands"]["says"]
