"""The approval goes through the interface that returned the approved revision (Ops §6;
conformance rows A2, A25), against the demo Company: an operation first returned over MCP, its
new revision in a conversation; the approval goes to the conversation."""

from __future__ import annotations

from poppy_tui.agent.store import Status

from .company_app import approval_message, is_mcp_tool_approval


async def test_mcp_then_conversation_is_approved_in_the_conversation(make_agent, shop):
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    first = await agent.call_tool(company, "cancel_subscription", {"subscription_id": "sub_6Tc1"})
    assert first.outcome == "operation"
    said = await agent.say(company, "cancel my coffee subscription")
    assert said.operation_rows == [first.operation_row]
    op = agent.store.get_operation(first.operation_row)
    assert op.interface == "conversation"
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert done.interface == "conversation"
    assert shop.requests(approval_message) and not shop.requests(is_mcp_tool_approval)
