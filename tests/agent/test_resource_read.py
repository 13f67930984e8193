"""The resource an operation changes, read before the decision (agent/resource_read.py), against
a Company written from the spec alone (tests/companies/resource_company.py) and, for MCP, the
demo's read tools."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from poppy_tui.agent.resource_read import mcp_read_call, named_api_url, source_label
from poppy_tui.safety.resource_checks import compare_resource
from tests.companies.resource_company import EVIL_NOTE, ResourceCompany


@pytest.fixture
def juniper() -> Iterator[ResourceCompany]:
    company = ResourceCompany()
    yield company
    company.stop()


async def operation_for(agent, juniper, order_id: str) -> int:
    company = await agent.add_company(juniper.base_url)
    result = await agent.call_api(
        company, "POST", f"/orders/{order_id}/exchanges", {"item_id": "it_1"}
    )
    assert result.outcome == "operation", result
    return result.operation_row


async def test_an_arriving_operation_gets_its_resource_read_and_kept(make_agent, juniper):
    agent = make_agent()
    row = await operation_for(agent, juniper, "ord_true")
    await agent.settle_resource_reads(10)  # the read started on arrival
    read = agent.store.resource_read(row)
    assert read is not None and read.ok, read
    assert (
        read.source == f"GET {juniper.base_url}/orders/ord_true"
        and source_label(read.source) == "GET /orders/ord_true"
    )
    assert read.body["items"][0]["item_id"] == "it_1"
    assert read.revision_id == agent.store.get_operation(row).current.id
    # Only GETs of the one order, with the operation's Session and no Bearer (returned signed out).
    assert {path for path, _ in juniper.state.reads} == {"/orders/ord_true"}
    for _, headers in juniper.state.reads:
        assert "poppy-session" in headers and "authorization" not in headers
    assert juniper.state.writes == ["/orders/ord_true/exchanges"]  # nothing written by the read
    assert (
        compare_resource(
            agent.store.get_operation(row).current.terms, read.body, read.source
        ).findings
        == ()
    )


async def test_a_resource_that_disagrees_with_the_terms(make_agent, juniper):
    agent = make_agent()
    row = await operation_for(agent, juniper, "ord_other")
    read = await agent.read_resource(row)
    assert read is not None and read.ok
    codes = {
        f.code
        for f in compare_resource(
            agent.store.get_operation(row).current.terms, read.body, read.source
        ).findings
    }
    assert codes == {"resource_mismatch"}


async def test_a_read_that_fails_says_why_in_one_line(make_agent, juniper):
    agent = make_agent()
    row = await operation_for(agent, juniper, "ord_gone")
    read = await agent.read_resource(row)
    assert read is not None and not read.ok and read.body is None
    assert read.problem == "the Company answered HTTP 500 (server_error)"
    assert agent.store.resource_read(row).problem == read.problem


async def test_a_trickling_read_is_bounded_by_the_deadline(make_agent, juniper):
    agent = make_agent(request_timeout_seconds=30.0)
    row = await operation_for(agent, juniper, "ord_slow")
    started = time.monotonic()
    read = await agent.read_resource(row, deadline=1.0)
    assert time.monotonic() - started < 10  # the read timeout alone (30 s) would never end it
    assert read is not None and not read.ok and read.problem == "no complete answer within 1 s"


async def test_a_redirect_is_not_followed(make_agent, juniper):
    agent = make_agent()
    row = await operation_for(agent, juniper, "ord_moved")
    read = await agent.read_resource(row)
    assert read is not None and not read.ok
    assert "HTTP 302" in read.problem and "not follow" in read.problem
    assert {path for path, _ in juniper.state.reads} == {
        "/orders/ord_moved"
    }  # /orders/ord_true never asked


async def test_escapes_in_the_resource_are_kept_as_data_and_quoted_sanitised(make_agent, juniper):
    agent = make_agent()
    row = await operation_for(agent, juniper, "ord_evil")
    read = await agent.read_resource(row)
    assert read is not None and read.ok
    assert (
        EVIL_NOTE in read.body.values()
    )  # kept as received; every display sanitises it (tests/ui, tests/cli)


async def test_nothing_is_read_once_the_operation_is_decided(make_agent, juniper):
    agent = make_agent()
    row = await operation_for(agent, juniper, "ord_true")
    await agent.settle_resource_reads(10)
    op = agent.store.get_operation(row)
    agent.decline(row, op.current.id)
    before = len(juniper.state.reads)
    assert await agent.read_resource(row) is None
    assert len(juniper.state.reads) == before


async def test_mcp_reads_the_subscription_with_the_demos_read_tool(make_agent, shop):
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    result = await agent.call_tool(company, "cancel_subscription", {"subscription_id": "sub_6Tc1"})
    assert result.outcome == "operation", result
    read = await agent.read_resource(result.operation_row)
    assert read is not None and read.ok, read
    assert read.source == "MCP get_subscription(subscription_id=sub_6Tc1)"
    assert read.body["subscription_id"] == "sub_6Tc1" and read.body["status"] == "active"
    terms = agent.store.get_operation(result.operation_row).current.terms
    comparison = compare_resource(terms, read.body, read.source)
    assert comparison.findings == () and "price" in comparison.named


TOOLS = [
    {"name": "cancel_subscription", "inputSchema": {"required": ["subscription_id"]}},
    {"name": "list_subscriptions", "inputSchema": {}, "annotations": {"readOnlyHint": True}},
    {
        "name": "search",
        "inputSchema": {"required": ["query"]},
        "annotations": {"readOnlyHint": True},
    },
    {"name": "get_subscription", "inputSchema": {"required": ["subscription_id"]}},
]


def test_the_mcp_read_rule():
    args = {"subscription_id": "sub_6Tc1"}
    # A tool whose name reads like a read is no read: only the Company's mark says so (A47).
    assert mcp_read_call("cancel_subscription", args, TOOLS) is None
    # A marked read is called, whatever its name.
    marked = [
        *TOOLS,
        {
            "name": "subscription_details",
            "inputSchema": {"required": ["subscription_id"]},
            "annotations": {"readOnlyHint": True},
        },
    ]
    assert mcp_read_call("cancel_subscription", args, marked) == ("subscription_details", args)
    # a name alone that the Company contradicts, or a name that doesn't match the ID, is no read
    assert (
        mcp_read_call(
            "cancel_subscription",
            args,
            [
                {
                    "name": "get_subscription",
                    "inputSchema": {"required": ["subscription_id"]},
                    "annotations": {"readOnlyHint": False},
                },
                {"name": "get_plan", "inputSchema": {"required": ["subscription_id"]}},
                {"name": "renew_subscription", "inputSchema": {"required": ["subscription_id"]}},
                {
                    "name": "purge",
                    "inputSchema": {"required": ["subscription_id"]},
                    "annotations": {"readOnlyHint": True, "destructiveHint": True},
                },
            ],
        )
        is None
    )
    # never the call's own tool, never one needing an argument the call didn't pass
    assert mcp_read_call("get_subscription", args, TOOLS) is None
    assert mcp_read_call("cancel_subscription", {}, TOOLS) is None
    # the ID that comes first in the call (the order, not the item); only required IDs are passed
    exchange = {"order_id": "ord_7Hk2", "item_id": "itm_4Qa", "replacement_sku": "x-m"}
    reads = {"readOnlyHint": True}
    tools = [
        {"name": "get_item", "inputSchema": {"required": ["item_id"]}, "annotations": reads},
        {
            "name": "get_order",
            "inputSchema": {"required": ["order_id"], "properties": {"verbose": {}}},
            "annotations": reads,
        },
    ]
    assert mcp_read_call("exchange_item", exchange, tools) == (
        "get_order",
        {"order_id": "ord_7Hk2"},
    )


def test_a_conversation_reads_only_an_api_resource_its_terms_name():
    from poppy_tui.agent.store.records import CompanyRecord

    company = CompanyRecord(
        id=1,
        base_url="https://shop.test",
        domain="shop.test",
        name="Shop",
        document={"apis": [{"type": "openapi", "url": "https://api.shop.test/openapi.json"}]},
        supports_operations=True,
        user_id="u",
        session_id="s",
        discovered_at="",
        updated_at="",
    )
    assert named_api_url({"order_id": "ord_7Hk2", "item_id": "itm_4Qa"}, company) is None
    assert (
        named_api_url({"order": "/api/orders/ord_7Hk2"}, company)
        == "https://shop.test/api/orders/ord_7Hk2"
    )
    assert (
        named_api_url({"order": {"href": "https://api.shop.test/orders/1"}}, company)
        == "https://api.shop.test/orders/1"
    )
    assert named_api_url({"order": "https://evil.test/orders/1"}, company) is None
    assert named_api_url({"order": "//evil.test/orders/1"}, company) is None


async def test_mcp_calls_the_read_the_company_marks_and_never_one_it_says_writes(make_agent):
    from tests.companies.mcp_read_company import McpReadCompany

    birch = McpReadCompany()
    try:
        agent = make_agent()
        company = await agent.add_company(birch.base_url)
        result = await agent.call_tool(company, "cancel_subscription", {"subscription_id": "sub_9"})
        assert result.outcome == "operation", result
        await agent.settle_resource_reads(10)
        read = agent.store.resource_read(result.operation_row)
        assert read is not None and read.ok, read
        assert read.source == "MCP subscription_details(subscription_id=sub_9)"
        assert [name for name, _ in birch.state.calls] == [
            "cancel_subscription",
            "subscription_details",
        ]
        # the price changed since the terms were written: the check says so
        birch.state.price = "21.00"
        read = await agent.read_resource(result.operation_row)
        terms = agent.store.get_operation(result.operation_row).current.terms
        assert [f.code for f in compare_resource(terms, read.body, read.source).findings] == [
            "resource_price_mismatch"
        ]
        assert "get_subscription" not in [name for name, _ in birch.state.calls]
    finally:
        birch.stop()


async def test_mcp_with_no_tool_marked_read_only_offers_no_read_and_calls_none(make_agent):
    """A47: the Company marks no tool; `get_subscription` reads by its name only, and is never
    called before the person decides. The read says "no read offered", not a failure."""
    from tests.companies.mcp_read_company import McpReadCompany

    birch = McpReadCompany(marks_reads=False)
    try:
        agent = make_agent()
        company = await agent.add_company(birch.base_url)
        result = await agent.call_tool(company, "cancel_subscription", {"subscription_id": "sub_9"})
        assert result.outcome == "operation", result
        read = await agent.read_resource(result.operation_row)
        assert read is not None and read.state == "no_read_offered", read
        assert read.problem.startswith("no read offered: the MCP server marks no tool read-only")
        assert [name for name, _ in birch.state.calls] == ["cancel_subscription"]
    finally:
        birch.stop()


async def test_the_api_read_never_gets_the_actions_own_url(make_agent, juniper):
    """A47: an OpenAPI whose only GET is a catch-all matching the action's own path."""
    juniper.state.catch_all = True
    agent = make_agent()
    row = await operation_for(agent, juniper, "ord_true")
    read = await agent.read_resource(row)
    assert read is not None and read.state == "no_read_offered", read
    assert juniper.state.action_gets == [] and juniper.state.reads == []
    assert read.to_json()["state"] == "no_read_offered"
