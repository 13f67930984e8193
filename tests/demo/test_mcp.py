"""The MCP server, through the MCP SDK's own client over streamable HTTP."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from poppy_tui.demo.mcp_server import OPERATION_IN_PROGRESS_CODE
from poppy_tui.demo.testing import AgentSession, mcp_session
from poppy_tui.protocol.approval import approval_to_mcp_meta
from poppy_tui.protocol.operation import operation_from_mcp_result

from tests.waiting import wait_until

from .helpers import SPEC_SUMMARY, approval_of

EXCHANGE = {
    "order_id": "ord_7Hk2",
    "item_id": "itm_4Qa",
    "replacement_sku": "stormline-insulated-m",
}


async def exchange_asked(session) -> tuple[dict, dict]:
    """Ask for the exchange over MCP: the operation it returned, and the _meta that approves it."""
    operation = (await session.call_tool("exchange_item", EXCHANGE)).structured_content["operation"]
    return operation, approval_to_mcp_meta(approval_of(operation))


def wire(result) -> dict:
    return result.model_dump(by_alias=True, exclude_none=True)


async def test_tools_have_json_schemas(company, agent):
    async with mcp_session(company, agent) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert {
        "search_products",
        "get_order",
        "exchange_item",
        "cancel_subscription",
        "change_booking",
    } <= set(tools)
    schema = tools["exchange_item"].input_schema
    assert set(schema["required"]) == {"order_id", "item_id", "replacement_sku"}
    assert all(
        schema["properties"][n]["type"] == "string" and schema["properties"][n]["description"]
        for n in schema["required"]
    )
    assert "ctx_" not in schema["properties"]
    assert tools["change_booking"].input_schema["properties"]["starts_at"]["format"] == "date-time"


async def test_reads(company, agent):
    async with mcp_session(company, agent) as session:
        found = await session.call_tool("search_products", {"query": "insulated"})
        order = await session.call_tool("get_order", {"order_id": "ord_7Hk2"})
        missing = await session.call_tool("get_order", {"order_id": "ord_nope"})
    assert not found.is_error and {p["sku"] for p in found.structured_content["products"]} == {
        "stormline-insulated-m",
        "stormline-insulated-l",
    }
    assert order.structured_content["items"][0]["item_id"] == "itm_4Qa"
    assert missing.is_error and missing.structured_content["error"] == "order_not_found"


async def test_spec_example_over_mcp(company, agent):
    async with mcp_session(company, agent) as session:
        refused = await session.call_tool("exchange_item", EXCHANGE)
        data = wire(refused)
        assert data["isError"] is True
        assert data["content"] == [
            {
                "type": "text",
                "text": "Not done yet. This needs the user's approval: exchange the Stormline Jacket (M) for the "
                "Stormline Insulated Jacket (M), for $70.00 more.",
            }
        ]
        operation = operation_from_mcp_result(data)
        assert (
            operation is not None
            and operation.operation_id == "exc_5Rt2"
            and operation.summary == SPEC_SUMMARY
        )
        assert company.state.performed("exc_5Rt2") == 0

        meta = approval_to_mcp_meta(approval_of(data["structuredContent"]["operation"]))
        done = await session.call_tool("exchange_item", EXCHANGE, meta=meta)
        assert not done.is_error, done
        assert done.structured_content["operation_id"] == "exc_5Rt2"
        assert company.state.performed("exc_5Rt2") == 1

        # A retry gets the first response; the outcome shows in the order.
        again = await session.call_tool("exchange_item", EXCHANGE, meta=meta)
        assert wire(again)["structuredContent"] == wire(done)["structuredContent"]
        order = await session.call_tool("get_order", {"order_id": "ord_7Hk2"})
        assert order.structured_content["items"][0]["status"] == "exchanged"
    assert company.state.performed("exc_5Rt2") == 1


async def test_a_tool_needing_the_extension_returns_an_ordinary_tool_error(company, agent):
    async with mcp_session(company, agent, extensions=False) as session:
        result = await session.call_tool("exchange_item", EXCHANGE)
        reads = await session.call_tool("get_order", {"order_id": "ord_7Hk2"})
    assert result.is_error and result.structured_content is None
    assert "operations" in result.content[0].text
    assert operation_from_mcp_result(wire(result)) is None
    assert not reads.is_error  # the agent isn't refused entirely


async def test_check3_different_arguments_get_a_new_revision(company, agent):
    async with mcp_session(company, agent) as session:
        first = (await session.call_tool("exchange_item", EXCHANGE)).structured_content["operation"]
        other = dict(EXCHANGE, replacement_sku="stormline-insulated-l")
        renewed = await session.call_tool(
            "exchange_item", other, meta=approval_to_mcp_meta(approval_of(first))
        )
        fresh = renewed.structured_content["operation"]
        assert (
            renewed.is_error
            and fresh["operation_id"] == first["operation_id"]
            and fresh["revision"] != first["revision"]
        )
        assert fresh["terms"]["replacement_sku"] == "stormline-insulated-l"
        # A revision returned by another tool call (here the API) is not this tool call's.
    api_operation = httpx.post(
        company.base_url + "/api/orders/ord_7Hk2/exchanges",
        json={"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
        headers=agent.headers(),
    ).json()["operation"]
    async with mcp_session(company, agent) as session:
        crossed = await session.call_tool(
            "exchange_item", EXCHANGE, meta=approval_to_mcp_meta(approval_of(api_operation))
        )
    assert (
        crossed.is_error
        and crossed.structured_content["operation"]["revision"] != api_operation["revision"]
    )
    assert company.state.performed("exc_5Rt2") == 0


async def test_check1_another_session_over_mcp(company, agent):
    async with mcp_session(company, agent) as session:
        operation = (
            await session.call_tool("cancel_subscription", {"subscription_id": "sub_6Tc1"})
        ).structured_content["operation"]
    other = AgentSession.at(company)
    async with mcp_session(company, other) as session:
        result = await session.call_tool(
            "cancel_subscription",
            {"subscription_id": "sub_6Tc1"},
            meta=approval_to_mcp_meta(approval_of(operation)),
        )
    assert (
        result.is_error
        and result.structured_content["operation"]["revision"] != operation["revision"]
    )
    assert company.state.performed(operation["operation_id"]) == 0


async def test_while_performing_mcp_answers_http_503_with_retry_after(start):
    company = start("perform_seconds=1")
    agent = AgentSession.at(company)
    async with mcp_session(company, agent) as session:
        operation, meta = await exchange_asked(session)
        first = asyncio.ensure_future(session.call_tool("exchange_item", EXCHANGE, meta=meta))
        await wait_until(  # until the Company is performing the first (for 1 s)
            lambda: company.desk.in_progress(operation["operation_id"]),
            step=0.01,
            describe="the first approved call performing",
        )
        async with mcp_session(company, agent) as second:
            with pytest.raises(MCPError) as caught:
                await second.call_tool("exchange_item", EXCHANGE, meta=meta)
            assert (
                second.poppy_auth.last_status == 503 and second.poppy_auth.last_retry_after == "1"
            )
        assert caught.value.error.code == OPERATION_IN_PROGRESS_CODE
        assert caught.value.error.data["error"] == "operation_in_progress"
        done = await first
        assert not done.is_error
    assert company.state.performed("exc_5Rt2") == 1


async def test_concurrent_mcp_approvals_perform_once(start):
    company = start("perform_seconds=0.3")
    agent = AgentSession.at(company)
    async with mcp_session(company, agent) as session:
        operation, meta = await exchange_asked(session)

        async def call():
            try:
                return await session.call_tool("exchange_item", EXCHANGE, meta=meta)
            except MCPError as exc:
                return exc

        results = await asyncio.gather(*(call() for _ in range(10)))
    successes = [r for r in results if not isinstance(r, MCPError)]
    assert successes and all(not r.is_error for r in successes)
    assert len({repr(r.structured_content) for r in successes}) == 1
    assert all(
        r.error.data["error"] == "operation_in_progress" for r in results if isinstance(r, MCPError)
    )
    assert company.state.performed("exc_5Rt2") == 1


@pytest.mark.parametrize("headers", [{"Poppy-Version": "0.4"}, {}])
def test_mcp_http_requests_without_a_session_are_refused_like_the_api(company, headers):
    response = httpx.post(
        company.base_url + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        headers={**headers, "Accept": "application/json, text/event-stream"},
    )
    expected = (403, "invalid_session") if headers else (400, "unsupported_version")
    assert (response.status_code, response.json()["error"]) == expected


async def test_busy_over_mcp_then_success(start):
    company = start("busy=1")
    agent = AgentSession.at(company)
    async with mcp_session(company, agent) as session:
        operation, meta = await exchange_asked(session)
        with pytest.raises(MCPError) as caught:
            await session.call_tool("exchange_item", EXCHANGE, meta=meta)
        assert (
            session.poppy_auth.last_status == 503
            and caught.value.error.data["error"] == "temporarily_unavailable"
        )
        assert company.state.performed("exc_5Rt2") == 0
        assert not (await session.call_tool("exchange_item", EXCHANGE, meta=meta)).is_error
    assert company.state.performed("exc_5Rt2") == 1


async def test_drop_after_perform_over_mcp(start):
    company = start("drop_after_perform=1")
    agent = AgentSession.at(company)
    async with mcp_session(company, agent) as session:
        operation, meta = await exchange_asked(session)
        with pytest.raises(MCPError):  # the SSE stream ends without a response
            await session.call_tool("exchange_item", EXCHANGE, meta=meta, read_timeout_seconds=5)
        assert company.state.performed("exc_5Rt2") == 1
        again = await session.call_tool("exchange_item", EXCHANGE, meta=meta)
        assert not again.is_error and again.structured_content["operation_id"] == "exc_5Rt2"
    assert company.state.performed("exc_5Rt2") == 1


async def test_check1_comes_before_check2_over_mcp(start):
    """While A's operation is being performed, B naming it gets a request without an approval
    (a new operation of its own), not 503 "being performed": that would be check 2 before check
    1, and would tell B that A's operation exists and is under way."""
    company = start("perform_seconds=5")
    owner = AgentSession.at(company)
    async with mcp_session(company, owner) as session:
        operation, meta = await exchange_asked(session)
        performing = asyncio.ensure_future(session.call_tool("exchange_item", EXCHANGE, meta=meta))
        await wait_until(
            lambda: company.context.desk.in_progress(operation["operation_id"]),
            timeout=20,
            describe="A's operation performing",
        )
        other = AgentSession.at(company)
        async with mcp_session(company, other) as second:
            answered = await second.call_tool("exchange_item", EXCHANGE, meta=meta)
            assert second.poppy_auth.last_status == 200
        assert answered.is_error
        fresh = answered.structured_content["operation"]
        assert fresh["revision"] != operation["revision"]
        assert "operation_in_progress" not in str(answered.structured_content)
        # The owner still gets 503 while it lasts (check 2, for the one check 1 lets through).
        async with mcp_session(company, owner) as again:
            with pytest.raises(MCPError) as caught:
                await again.call_tool("exchange_item", EXCHANGE, meta=meta)
            assert again.poppy_auth.last_status == 503
        assert caught.value.error.data["error"] == "operation_in_progress"
        done = await performing
        assert not done.is_error
    assert company.state.performed("exc_5Rt2") == 1
