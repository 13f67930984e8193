"""An MCP approval whose outcome is unknown is also found out through a tool the Company marks
read-only (audit A32), not only by resending it (Ops 7: "finds out another way, such as from the
order in the Company's API"); a tool whose name merely reads like a read is never called. Against
an MCP Company written from the spec alone on the real MCP SDK (tests/companies/mcp_read_company.py),
with the real Agent and store."""

from __future__ import annotations

import asyncio
import time

import pytest

from poppy_tui.agent.store import Status
from tests.companies.mcp_read_company import McpReadCompany


@pytest.fixture
def birch(request) -> McpReadCompany:
    company = McpReadCompany(marks_reads=getattr(request, "param", True))
    company.state.errors_after_perform = 1000  # performs, then answers a tool error: in doubt
    yield company
    company.stop()


async def unknown_after_approval(make_agent, birch):
    agent = make_agent(retry_window_seconds=0.3)
    company = await agent.add_company(birch.base_url)
    result = await agent.call_tool(company, "cancel_subscription", {"subscription_id": "sub_9"})
    assert result.outcome == "operation", result
    row = result.operation_row
    agent.approve(row, agent.store.get_operation(row).current.id)
    assert (await agent.wait_for_outcome(row, timeout=30)).status == Status.OUTCOME_UNKNOWN
    assert birch.state.status == "cancelled"  # it was in fact performed
    return agent, row


async def probed(agent, row: int, until, timeout: float = 20.0) -> None:
    """Run the dispatcher's passes (its prober looks once the first look is due, a second
    after the outcome became unknown) until `until()`."""
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, agent.store.get_operation(row).outcome_detail
        await agent.dispatch_once()
        await asyncio.sleep(0.02)


async def test_an_mcp_outcome_in_doubt_is_read_with_the_tool_the_company_marks_read_only(
    make_agent, birch
):
    agent, row = await unknown_after_approval(make_agent, birch)
    read = "MCP subscription_details(subscription_id=sub_9)"
    await probed(
        agent, row, lambda: any(o.get("source") == read for o in agent.store.observations(row))
    )
    [seen] = [o for o in agent.store.observations(row) if o.get("source") == read]
    assert seen["body"]["status"] == "cancelled"
    detail = agent.store.get_operation(row).outcome_detail or ""
    assert f"{read} says:" in detail and '"cancelled"' in detail
    called = [name for name, _ in birch.state.calls]
    assert "subscription_details" in called and "get_subscription" not in called
    # Shown, not interpreted: the person still records what happened.
    assert agent.store.get_operation(row).status == Status.OUTCOME_UNKNOWN
    assert birch.state.performed == 1  # resending never performed it twice


@pytest.mark.parametrize("birch", [False], indirect=True, ids=["no-tool-marked"])
async def test_a_tool_whose_name_reads_like_a_read_is_never_called_to_find_out(make_agent, birch):
    agent, row = await unknown_after_approval(make_agent, birch)
    resends = sum(1 for name, _ in birch.state.calls if name == "cancel_subscription")
    await probed(
        agent,
        row,
        lambda: sum(1 for name, _ in birch.state.calls if name == "cancel_subscription") > resends,
    )
    assert "get_subscription" not in [name for name, _ in birch.state.calls]
    assert not any(
        str(o.get("source", "")).startswith("MCP ") for o in agent.store.observations(row)
    )
