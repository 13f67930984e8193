"""Signed-in requests, sign-in challenges and account-owned operations, against a Company with
accounts written from the spec alone (tests/companies/account_company.py), over real HTTP."""

from __future__ import annotations

import jwt

from poppy_tui.agent.store import Status
from tests.companies.account_company import NAME
from tests.signed_in import Tokens


def sid_of(headers: dict) -> str:
    return jwt.decode(headers["poppy-session"], options={"verify_signature": False})["sid"]


async def setup(make_agent, birch, token: str | None):
    agent = make_agent()
    tokens = Tokens(token)
    agent.access_token_source = tokens
    company = await agent.add_company(birch.base_url)
    return agent, company, tokens


async def test_signed_out_order_is_a_sign_in_challenge(make_agent, birch):
    agent, company, _ = await setup(make_agent, birch, None)
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    assert result.outcome == "not_performed" and result.status == 401
    assert result.challenge is not None and result.challenge.kind == "sign_in"
    assert result.challenge.scopes == ("orders",)
    assert result.detail == f"Sign in to {NAME} to continue (scopes orders)"
    assert "authorization" not in birch.state.received[-1]


async def test_insufficient_scope_says_which(make_agent, birch):
    agent, company, _ = await setup(make_agent, birch, "tok_alice_read")
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    assert result.challenge is not None and result.challenge.kind == "scope"
    assert "scopes orders" in result.detail and NAME in result.detail


async def test_bearer_goes_beside_the_session_and_the_operation_is_the_accounts(make_agent, birch):
    agent, company, _ = await setup(make_agent, birch, "tok_alice")
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    assert result.outcome == "operation"
    sent = birch.state.received[-1]
    assert sent["authorization"] == "Bearer tok_alice" and sent["poppy-session"]
    assert agent.store.get_operation(result.operation_row).account_owned


async def test_account_operation_is_approved_from_another_signed_in_session(make_agent, birch):
    agent, company, _ = await setup(make_agent, birch, "tok_alice")
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    op = agent.store.get_operation(result.operation_row)
    renewed = agent.store.new_session(company.id)  # a later Session of the same agent and User
    assert renewed.session_id != op.session_id
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and birch.state.performed["ord_birch_1"] == 1
    approval = [r for r in birch.state.received if "poppy-approval" in r][-1]
    assert (
        sid_of(approval) == renewed.session_id and approval["authorization"] == "Bearer tok_alice"
    )


async def test_signed_out_operation_stays_in_its_session(make_agent, birch):
    agent, company, _ = await setup(make_agent, birch, None)
    result = await agent.call_api(company, "POST", "/wishlist/share", {})
    op = agent.store.get_operation(result.operation_row)
    assert not op.account_owned
    agent.store.new_session(company.id)
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED
    approval = [r for r in birch.state.received if "poppy-approval" in r][-1]
    assert sid_of(approval) == op.session_id


async def test_after_sign_out_an_approval_waits_for_sign_in_then_is_sent_once(make_agent, birch):
    agent, company, tokens = await setup(make_agent, birch, "tok_alice")
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    op = agent.store.get_operation(result.operation_row)
    tokens.token = None  # the person signed out
    agent.approve(op.id, op.current.id)
    waiting = await agent.wait_for_outcome(op.id, timeout=3)
    assert waiting.status == Status.SENDING
    assert (
        waiting.waiting_sign_in
        == f"waiting for sign-in: Sign in to {NAME} to continue (scopes orders)"
    )
    assert "ord_birch_1" not in birch.state.performed
    assert await agent.dispatch_once() == 0  # nothing is resent while signed out
    tokens.token = "tok_alice"  # signed in again
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and done.waiting_sign_in is None
    assert birch.state.performed["ord_birch_1"] == 1
    outcomes = [a.outcome for a in agent.store.attempts(op.id)]
    assert outcomes == [
        "sign_in_required",
        "performed",
    ]  # the 401 was a request to sign in, not a refusal


async def test_a_waiting_approval_is_not_sent_after_it_expires(make_agent, birch):
    from datetime import timedelta

    from poppy_tui.agent.store.connection import stamp

    agent, company, tokens = await setup(make_agent, birch, "tok_alice")
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    op = agent.store.get_operation(result.operation_row)
    tokens.token = None
    agent.approve(op.id, op.current.id)
    await agent.wait_for_outcome(op.id, timeout=3)
    # Time passes beyond the approved terms' expiry while the person is signed out.
    past = op.current.expires_at - timedelta(days=1)
    agent.store._db.execute(
        "UPDATE revisions SET expires_at=? WHERE id=?", (stamp(past), op.current.id)
    )
    agent.store._db.execute(
        "UPDATE operations SET next_attempt_at=? WHERE id=?", (stamp(past), op.id)
    )
    tokens.token = "tok_alice"  # signing in now is too late
    done = await agent.wait_for_outcome(op.id, timeout=10)
    assert done.status == Status.NOT_PERFORMED
    assert "expired before the approval could be delivered" in done.outcome_detail
    assert "ord_birch_1" not in birch.state.performed


async def test_a_company_that_rejects_the_identity_names_the_cimd(make_agent, birch):
    agent, company, _ = await setup(make_agent, birch, None)
    birch.state.reject_identity = True
    result = await agent.call_api(company, "POST", "/wishlist/share", {})
    assert result.outcome == "not_performed" and result.challenge.kind == "identity"
    assert agent.identity.client_id in result.detail
    assert result.detail.startswith(f"{NAME} did not accept this agent's identity")
    assert "\n" not in result.detail


async def test_the_company_verified_the_published_identity(make_agent, birch):
    agent, company, _ = await setup(make_agent, birch, None)
    await agent.call_api(company, "POST", "/wishlist/share", {})
    assert birch.state.fetched == [agent.identity.client_id]


async def test_conversation_authorization_event_is_shown(make_agent, birch):
    agent, company, _ = await setup(make_agent, birch, None)
    result = await agent.say(company, "order oats please")
    assert result.challenge is not None and result.challenge.kind == "sign_in"
    assert f"Sign in to {NAME} to continue (scopes orders)" in result.problems


async def test_mcp_and_conversation_requests_carry_the_bearer_too(make_agent, shop):
    agent = make_agent()
    agent.access_token_source = Tokens("tok_demo")
    company = await agent.add_company(shop.base_url)
    args = {
        "order_id": "ord_7Hk2",
        "item_id": "itm_4Qa",
        "replacement_sku": "stormline-insulated-m",
    }
    result = await agent.call_tool(company, "exchange_item", args)
    assert result.outcome == "operation"
    assert agent.store.get_operation(result.operation_row).account_owned
    mcp = shop.requests(lambda r: r.path == "/mcp")
    assert mcp and all(r.headers.get("authorization") == "Bearer tok_demo" for r in mcp)
    await agent.say(company, "What are my orders?")
    talk = shop.requests(lambda r: "/poppy/conversations" in r.path)
    assert talk and all(r.headers.get("authorization") == "Bearer tok_demo" for r in talk)


async def test_signed_out_requests_carry_no_authorization(make_agent, shop):
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    result = await agent.call_tool(
        company,
        "exchange_item",
        {"order_id": "ord_7Hk2", "item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
    )
    assert not agent.store.get_operation(result.operation_row).account_owned
    assert not any("authorization" in r.headers for r in shop.requests())


async def test_a_token_the_company_keeps_refusing_is_not_resent_in_a_loop(make_agent, birch):
    agent, company, tokens = await setup(make_agent, birch, "tok_alice")
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    op = agent.store.get_operation(result.operation_row)
    tokens.token = "tok_alice_read"  # still signed in, but without the `orders` scope
    agent.approve(op.id, op.current.id)
    waiting = await agent.wait_for_outcome(op.id, timeout=5)
    assert waiting.waiting_sign_in and "scopes orders" in waiting.waiting_sign_in
    for _ in range(5):
        await agent.dispatch_once()
    assert len(agent.store.attempts(op.id)) == 1  # the same refused token is not tried again
    tokens.token = "tok_alice"  # signed in again, with the scope
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and birch.state.performed["ord_birch_1"] == 1


async def test_the_access_token_is_not_kept_in_the_database(make_agent, birch, paths, caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    birch.state.tokens["tok_secret_9f3k"] = ("alice", ("orders",))
    agent, company, _ = await setup(make_agent, birch, "tok_secret_9f3k")
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    agent.approve(result.operation_row, agent.store.get_operation(result.operation_row).current.id)
    done = await agent.wait_for_outcome(result.operation_row, timeout=20)
    assert done.status == Status.PERFORMED
    agent.store.close()
    for suffix in ("", "-wal", "-shm"):
        path = paths.database.with_name(paths.database.name + suffix)
        if path.exists():
            assert b"tok_secret_9f3k" not in path.read_bytes()
    assert "tok_secret_9f3k" not in caplog.text


def _mcp_tool_call(r) -> bool:
    return r.path == "/mcp" and r.jsonrpc_method == "tools/call"


MCP_CHALLENGE = {"WWW-Authenticate": 'Bearer error="sign_in_required", scope="orders"'}


async def test_an_mcp_challenge_at_the_http_layer_asks_for_sign_in(make_agent, shop):
    from .company_app import Answer, Rule

    shop.add(
        Rule(
            _mcp_tool_call,
            lambda r: Answer(401, {"error": "sign_in_required", "scope": "orders"}, MCP_CHALLENGE),
        )
    )
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    result = await agent.call_tool(
        company,
        "exchange_item",
        {"order_id": "ord_7Hk2", "item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
    )
    assert result.outcome == "not_performed" and result.challenge is not None
    assert result.challenge.kind == "sign_in" and result.challenge.scopes == ("orders",)
    assert result.detail == "Sign in to Manzanita Outfitters to continue (scopes orders)"


async def test_an_mcp_approval_meeting_a_challenge_waits_for_sign_in(make_agent, shop):
    from .company_app import Answer, Rule

    agent = make_agent()
    tokens = Tokens("tok_demo")
    agent.access_token_source = tokens
    company = await agent.add_company(shop.base_url)
    result = await agent.call_tool(
        company,
        "exchange_item",
        {"order_id": "ord_7Hk2", "item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
    )
    op = agent.store.get_operation(result.operation_row)
    shop.add(
        Rule(
            lambda r: _mcp_tool_call(r) and r.mcp_approval is not None,
            lambda r: Answer(
                401,
                {"error": "invalid_token"},
                {"WWW-Authenticate": 'Bearer error="invalid_token"'},
            ),
        )
    )
    agent.approve(op.id, op.current.id)
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.status == Status.SENDING and waiting.waiting_sign_in
    assert shop.performed("exc_5Rt2") == 0
    tokens.token = "tok_demo_2"  # signed in again: a new token
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and shop.performed("exc_5Rt2") == 1
