"""MCP: the real SDK client over streamable HTTP against the demo Company's MCP server."""

from __future__ import annotations

from poppy_tui.agent.store import Status
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.session_jwt import verify_session_jwt

from .company_app import Answer, Rule, is_mcp_tool_approval
from datetime import UTC

ARGS = {"order_id": "ord_7Hk2", "item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"}


def tool_calls(shop):
    return [
        r for r in shop.requests(lambda r: r.path == "/mcp") if r.jsonrpc_method == "tools/call"
    ]


async def ask(agent, shop, tool="exchange_item", arguments=ARGS):
    company = await agent.add_company(shop.base_url)
    result = await agent.call_tool(company, tool, arguments)
    assert result.outcome == "operation", result
    return company, agent.store.get_operation(result.operation_row)


async def test_list_tools_for_the_composer(make_agent, shop):
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    tools = {t["name"]: t for t in await agent.list_tools(company)}
    assert {"exchange_item", "search_products"} <= set(tools)
    assert tools["exchange_item"]["inputSchema"]["required"] == [
        "order_id",
        "item_id",
        "replacement_sku",
    ]


async def test_approval_in_meta_with_the_same_tool_and_arguments(make_agent, shop):
    agent = make_agent()
    _, op = await ask(agent, shop)
    assert op.interface == "mcp" and op.operation_id == "exc_5Rt2"
    assert "approval" in (op.current.carrier_text or "")  # the tool's text, kept for the record
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED and shop.performed("exc_5Rt2") == 1
    first, resent = tool_calls(shop)
    assert first.json()["params"]["name"] == resent.json()["params"]["name"] == "exchange_item"
    assert first.json()["params"]["arguments"] == resent.json()["params"]["arguments"] == ARGS
    assert first.mcp_approval is None
    assert resent.mcp_approval == {"operation_id": "exc_5Rt2", "revision": op.current.revision}
    assert not done.outcome.get("isError")
    # Every HTTP request of every MCP session carried its own Session JWT.
    tokens = [r.headers["poppy-session"] for r in shop.requests(lambda r: r.path == "/mcp")]
    assert len(tokens) == len(set(tokens)) >= 4
    for token in tokens:
        assert (
            verify_session_jwt(token, shop.issuer, agent.identity.key.public_key()).session_id
            == op.session_id
        )
    assert all(
        r.headers.get("poppy-extensions") == '"operations";v="2"'
        for r in shop.requests(lambda r: r.path == "/mcp")
    )


async def test_mcp_503_retry_after(make_agent, start):
    shop = start("busy=1")
    agent = make_agent()
    _, op = await ask(agent, shop)
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED and shop.performed("exc_5Rt2") == 1
    assert [a.outcome for a in agent.store.attempts(op.id)] == ["retry_later", "performed"]
    first, second = [r for r in tool_calls(shop) if r.mcp_approval]
    assert second.at - first.at >= 0.9  # Retry-After: 1, seen by the Auth hook


async def test_mcp_503_with_plain_body_and_http_date(make_agent, shop):
    from datetime import datetime, timedelta
    from email.utils import format_datetime

    def busy(_):
        when = format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)
        return Answer(503, {"error": "temporarily_unavailable"}, {"Retry-After": when})

    shop.add(Rule(is_mcp_tool_approval, busy))
    agent = make_agent()
    _, op = await ask(agent, shop)
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED
    first, second = [r for r in tool_calls(shop) if r.mcp_approval]
    assert second.at - first.at >= 0.9


async def test_mcp_timeout_is_unknown_then_resent(make_agent, start):
    shop = start("perform_seconds=2.0")
    agent = make_agent(request_timeout_seconds=1.0)
    _, op = await ask(agent, shop)
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED and shop.performed("exc_5Rt2") == 1
    outcomes = [a.outcome for a in agent.store.attempts(op.id)]
    assert outcomes[0] == "unknown" and outcomes[-1] == "performed"


async def test_mcp_dropped_answer_after_performing(make_agent, start):
    shop = start("drop_after_perform=1")
    agent = make_agent()
    _, op = await ask(agent, shop)
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=30)
    assert done.status == Status.PERFORMED and shop.performed("exc_5Rt2") == 1
    assert [a.outcome for a in agent.store.attempts(op.id)][0] == "unknown"


async def test_plain_tool_call_and_tool_error(make_agent, shop):
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    ok = await agent.call_tool(company, "get_order", {"order_id": "ord_7Hk2"})
    assert ok.outcome == "performed" and ok.body["structuredContent"]["order_id"] == "ord_7Hk2"
    missing = await agent.call_tool(company, "get_order", {"order_id": "ord_nope"})
    assert missing.outcome == "not_performed"
    assert agent.store.list_operations() == []


async def test_mcp_without_the_extension(make_agent, start):
    shop = start(extension_version=None)
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    result = await agent.call_tool(company, "exchange_item", ARGS)
    assert result.outcome == "not_performed" and agent.store.list_operations() == []
    assert all(
        "poppy-extensions" not in r.headers for r in shop.requests(lambda r: r.path == "/mcp")
    )
    assert c.HEADER_SESSION.lower() in tool_calls(shop)[0].headers


async def test_mcp_server_unreachable_is_not_sent(make_agent, shop):
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    shop.stop()
    result = await agent.call_tool(company, "get_order", {"order_id": "ord_7Hk2"})
    assert result.outcome == "not_performed" and "not delivered" in result.detail
