"""Signed-in and signed-out requests at the demo Company with accounts: sign-in
challenges on the API, MCP and conversations, token checks before the extension's,
account-owned operations (Ops 3), and at most once across a restart."""

from __future__ import annotations

import httpx
import pytest

from poppy_tui.demo.testing import TestAgentIdentity, mcp_session
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.approval import Approval

from tests.demo.signin_helpers import device_sign_in, mediated_sign_in

EXCHANGE = "/api/orders/ord_7Hk2/exchanges"
EXCHANGE_BODY = {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"}


def _signed_in(shop, browser, agent_identity, how=device_sign_in, **session_kwargs):
    tokens = how(browser, shop, agent_identity)
    session = agent_identity.session(shop, **session_kwargs)
    session.access_token = tokens["access_token"]
    return session, tokens


def _approve(session, operation):
    return Approval(operation["operation_id"], operation["revision"])


# ----- challenges on the API ---------------------------------------------------------------


def test_signed_out_browsing_and_sign_in_required(shop, browser, agent_identity):
    session = agent_identity.session(shop)
    products = browser.get("/api/products", params={"q": "jacket"}, headers=session.headers())
    assert products.status_code == 200 and products.json()["products"]
    orders = browser.get("/api/orders", headers=session.headers())
    assert orders.status_code == 401
    assert orders.headers["www-authenticate"].startswith(
        'Bearer error="sign_in_required", scope="poppy:read"'
    )
    assert orders.json()["error"] == "sign_in_required" and orders.json()["scope"] == "poppy:read"


def test_token_checks_come_before_the_extensions(shop, browser, agent_identity):
    session = agent_identity.session(shop)
    # No extension declared and signed out: the challenge, not extension_required (Ops 6).
    response = browser.post(EXCHANGE, json=EXCHANGE_BODY, headers=session.headers(extensions=False))
    assert response.status_code == 401 and response.json()["error"] == "sign_in_required"
    assert response.json()["scope"] == "poppy:write"
    # The Session checks still come first.
    bad = browser.post(
        EXCHANGE, json=EXCHANGE_BODY, headers={**session.headers(), c.HEADER_SESSION: "nope"}
    )
    assert bad.status_code == 403 and bad.json()["error"] == "invalid_session"


def test_insufficient_scope(shop, browser, agent_identity):
    session, _ = _signed_in(
        shop, browser, agent_identity, how=mediated_sign_in
    )  # no bookings scope
    response = browser.post(
        "/api/bookings/bkg_2Fm8/change",
        json={"starts_at": "2030-01-01T10:00:00-08:00"},
        headers=session.headers(),
    )
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope", scope="poppy:write bookings"')
    assert response.json() == {
        "error": "insufficient_scope",
        "scope": "poppy:write bookings",
        "error_description": response.json()["error_description"],
    }
    assert browser.get("/api/orders", headers=session.headers()).status_code == 200


def test_bad_tokens_are_invalid_token(shop, browser, agent_identity):
    session = agent_identity.session(shop)
    session.access_token = "not-a-token"
    response = browser.get("/api/products", headers=session.headers())
    assert (
        response.status_code == 401
        and 'error="invalid_token"' in response.headers["www-authenticate"]
    )
    # A token is the agent's own: another agent's Session can't carry it...
    other = TestAgentIdentity()
    _, tokens = _signed_in(shop, browser, agent_identity)
    stranger = other.session(shop)
    stranger.access_token = tokens["access_token"]
    assert browser.get("/api/orders", headers=stranger.headers()).json()["error"] == "invalid_token"
    # ...and the User's own: the grant binds to the first pairwise User ID that uses it.
    mine = agent_identity.session(shop)
    mine.access_token = tokens["access_token"]
    assert browser.get("/api/orders", headers=mine.headers()).status_code == 200
    someone_else = agent_identity.session(shop)  # same agent, another User ID
    someone_else.access_token = tokens["access_token"]
    assert (
        browser.get("/api/orders", headers=someone_else.headers()).json()["error"]
        == "invalid_token"
    )


def test_expired_access_token_then_refresh(start, agent_identity):
    from poppy_tui.demo.accounts.service import AccountsOptions

    shop = start(accounts=AccountsOptions(access_token_seconds=0))
    with httpx.Client(base_url=shop.base_url) as http:
        session, _ = _signed_in(shop, http, agent_identity)
        assert http.get("/api/orders", headers=session.headers()).json()["error"] == "invalid_token"


def test_after_revocation_sessions_continue_signed_out(shop, browser, agent_identity):
    session, tokens = _signed_in(shop, browser, agent_identity)
    assert browser.get("/api/orders", headers=session.headers()).status_code == 200
    form = {
        **agent_identity.assertion_fields(shop.issuer),
        "token": tokens["refresh_token"],
        "token_type_hint": "refresh_token",
    }
    assert browser.post(shop.accounts.url("/revoke"), data=form).status_code == 200
    assert browser.get("/api/orders", headers=session.headers()).json()["error"] == "invalid_token"
    session.access_token = None  # the same Session, signed out
    assert browser.get("/api/products", headers=session.headers()).status_code == 200
    assert (
        browser.get("/api/orders", headers=session.headers()).json()["error"] == "sign_in_required"
    )


# ----- account-owned operations (Ops 3) ----------------------------------------------------


def test_an_account_operation_is_approved_from_another_signed_in_session(
    shop, browser, agent_identity
):
    first, tokens = _signed_in(shop, browser, agent_identity)
    refused = browser.post(EXCHANGE, json=EXCHANGE_BODY, headers=first.headers())
    assert refused.status_code == 403 and refused.json()["error"] == "approval_required"
    operation = refused.json()["operation"]
    # A second Session of the same agent and User, signed in to the same account.
    second = agent_identity.session(shop, user_id=first.identity.user_id)
    second.access_token = tokens["access_token"]
    assert second.session_id != first.session_id
    # Signed out, that Session gets the account's challenge, and nothing is performed.
    second.access_token = None
    out = browser.post(
        EXCHANGE, json=EXCHANGE_BODY, headers=second.headers(approval=_approve(second, operation))
    )
    assert out.status_code == 401 and out.json()["error"] == "sign_in_required"
    second.access_token = tokens["access_token"]
    done = browser.post(
        EXCHANGE, json=EXCHANGE_BODY, headers=second.headers(approval=_approve(second, operation))
    )
    assert done.status_code == 201, done.text
    assert done.json()["operation_id"] == operation["operation_id"]
    assert shop.state.performed(operation["operation_id"]) == 1
    # The first Session sending the same approval gets the first outcome, nothing more.
    again = browser.post(
        EXCHANGE, json=EXCHANGE_BODY, headers=first.headers(approval=_approve(first, operation))
    )
    assert again.status_code == 201 and shop.state.performed(operation["operation_id"]) == 1


def test_another_users_session_cannot_approve_an_account_operation(shop, browser, agent_identity):
    first, _ = _signed_in(shop, browser, agent_identity)
    operation = browser.post(EXCHANGE, json=EXCHANGE_BODY, headers=first.headers()).json()[
        "operation"
    ]
    other_user, _ = _signed_in(
        shop, browser, agent_identity
    )  # same account, another pairwise User ID
    answer = browser.post(
        EXCHANGE,
        json=EXCHANGE_BODY,
        headers=other_user.headers(approval=_approve(other_user, operation)),
    )
    # Check 1 fails: handled as if it had no approval, so a new revision and nothing performed.
    assert (
        answer.status_code == 403
        and answer.json()["operation"]["revision"] != operation["revision"]
    )
    assert shop.state.performed(operation["operation_id"]) == 0


# ----- MCP -------------------------------------------------------------------------------------


async def test_mcp_challenges_and_signed_in_tools(shop, agent_identity):
    from mcp.shared.exceptions import MCPError

    session = agent_identity.session(shop)
    async with mcp_session(shop, session) as mcp:
        found = await mcp.call_tool("search_products", {"query": "jacket"})
        assert not found.is_error
        with pytest.raises(MCPError) as caught:
            await mcp.call_tool("list_orders", {})
        assert caught.value.error.code == c.MCP_CHALLENGE_CODE
        assert (
            caught.value.error.data["error"] == "sign_in_required"
            and caught.value.error.data["scope"] == "poppy:read"
        )
        assert mcp.poppy_auth.last_status == 401
    async with httpx.AsyncClient(base_url=shop.base_url) as http:
        resource = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
    assert resource["resource"] == shop.base_url + "/mcp" and resource["authorization_servers"] == [
        shop.issuer
    ]


async def test_mcp_account_operation(shop, agent_identity):
    with httpx.Client(base_url=shop.base_url) as http:
        session, tokens = _signed_in(shop, http, agent_identity, how=mediated_sign_in)
    async with mcp_session(shop, session) as mcp:
        orders = await mcp.call_tool("list_orders", {})
        assert not orders.is_error
        with pytest.raises(Exception) as caught:  # noqa: PT011 - the SDK's error; its data is checked below
            await mcp.call_tool(
                "change_booking",
                {"booking_id": "bkg_2Fm8", "starts_at": "2030-01-01T10:00:00-08:00"},
            )
        assert caught.value.error.data["error"] == "insufficient_scope"
        assert mcp.poppy_auth.last_status == 403
        refused = await mcp.call_tool("cancel_subscription", {"subscription_id": "sub_6Tc1"})
        operation = refused.structured_content["operation"]
        done = await mcp.call_tool(
            "cancel_subscription",
            {"subscription_id": "sub_6Tc1"},
            meta={
                c.MCP_APPROVAL_META_KEY: {
                    "operation_id": operation["operation_id"],
                    "revision": operation["revision"],
                }
            },
        )
        assert not done.is_error and done.structured_content["status"] == "cancelled"


# ----- conversations ---------------------------------------------------------------------------


def _say(browser, shop, session, text, conversation_id=None, extensions=None):
    from poppy_tui.protocol.ids import new_id

    message = {"id": new_id("msg_"), "text": text}
    if extensions:
        message["extensions"] = extensions
    path = "/poppy/conversations" + (f"/{conversation_id}/messages" if conversation_id else "")
    return browser.post(path, json={"message": message}, headers=session.headers())


def test_an_approval_in_a_signed_out_conversation_gets_the_authorization_event(
    shop, browser, agent_identity
):
    """An account operation approved in a conversation that never used the account (signed
    out since it began): the challenge comes as an `authorization` event."""
    signed_in, tokens = _signed_in(shop, browser, agent_identity)
    operation = browser.post(EXCHANGE, json=EXCHANGE_BODY, headers=signed_in.headers()).json()[
        "operation"
    ]
    session = agent_identity.session(shop, user_id=signed_in.identity.user_id)  # signed out
    created = _say(browser, shop, session, "hello")
    approval = {
        "operations": {
            "approval": {
                "operation_id": operation["operation_id"],
                "revision": operation["revision"],
            }
        }
    }
    out = _say(
        browser, shop, session, "approved", created.json()["conversation_id"], extensions=approval
    )
    assert out.status_code == 202
    assert [e["error"] for e in out.json()["events"] if e["type"] == "authorization"] == [
        "sign_in_required"
    ]
    assert shop.state.performed(operation["operation_id"]) == 0


def test_conversation_authorization_event_then_signed_in(shop, browser, agent_identity):
    session = agent_identity.session(shop)
    created = _say(browser, shop, session, "exchange my Stormline jacket for the insulated one")
    assert created.status_code == 201
    events = created.json()["events"]
    authorization = [e for e in events if e["type"] == "authorization"]
    assert authorization == [
        {**authorization[0], "error": "sign_in_required", "scope": "poppy:write"}
    ]
    texts = [
        e["message"]["text"]
        for e in events
        if e["type"] == "message" and e["message"]["role"] == "company"
    ]
    assert texts and "Sign in to Manzanita Outfitters" in texts[0]
    assert not any(
        "extensions" in e.get("message", {})
        for e in events
        if e["type"] == "message" and e["message"]["role"] == "company"
    )
    # After sign-in the same conversation continues.
    _, tokens = _signed_in(shop, browser, agent_identity)
    session.access_token = tokens["access_token"]
    conversation_id = created.json()["conversation_id"]
    reply = _say(
        browser,
        shop,
        session,
        "exchange my Stormline jacket for the insulated one",
        conversation_id,
    )
    proposals = [
        e["message"]["extensions"]["operations"]["operation"]
        for e in reply.json()["events"]
        if e["type"] == "message"
        and "extensions" in e["message"]
        and e["message"]["role"] == "company"
    ]
    assert len(proposals) == 1
    operation = proposals[0]
    # Signed out again, the conversation (it used the account) needs sign-in: the approval
    # meets a challenge, never a silent "as if no approval", and reading it is refused too.
    session.access_token = None
    approval = {
        "operations": {
            "approval": {
                "operation_id": operation["operation_id"],
                "revision": operation["revision"],
            }
        }
    }
    out = _say(browser, shop, session, "approved", conversation_id, extensions=approval)
    assert out.status_code == 401 and out.json()["error"] == "sign_in_required"
    assert 'error="sign_in_required"' in out.headers["www-authenticate"]
    read = browser.get(f"/poppy/conversations/{conversation_id}/events", headers=session.headers())
    assert read.status_code == 401
    assert shop.state.performed(operation["operation_id"]) == 0
    session.access_token = tokens["access_token"]
    done = _say(browser, shop, session, "approved", conversation_id, extensions=approval)
    statuses = [
        e["message"].get("data", {}).get("status")
        for e in done.json()["events"]
        if e["type"] == "message"
    ]
    assert "performed" in statuses and shop.state.performed(operation["operation_id"]) == 1


# ----- at most once across a restart --------------------------------------------------------------


def test_a_restart_keeps_at_most_once(start, tmp_path):
    from poppy_tui.demo.testing import AgentSession

    ledger = tmp_path / "performed.sqlite3"
    first = start(ledger_path=ledger)
    session = AgentSession.at(first)
    with httpx.Client(base_url=first.base_url) as http:
        operation = http.post(EXCHANGE, json=EXCHANGE_BODY, headers=session.headers()).json()[
            "operation"
        ]
        approval = Approval(operation["operation_id"], operation["revision"])
        performed = http.post(
            EXCHANGE, json=EXCHANGE_BODY, headers=session.headers(approval=approval)
        )
        assert performed.status_code == 201
    port = first.port
    first.stop()
    # The answer was "lost"; the Company comes back on the same port and the same ledger.
    again = start(port=port, ledger_path=ledger)
    with httpx.Client(base_url=again.base_url) as http:
        retried = http.post(
            EXCHANGE, json=EXCHANGE_BODY, headers=session.headers(approval=approval)
        )
    assert retried.status_code == 201 and retried.json() == performed.json()
    assert again.state.performed(operation["operation_id"]) == 0  # not performed a second time
    # The fresh shop was brought up to date: the jacket is exchanged, so asking again is refused.
    with httpx.Client(base_url=again.base_url) as http:
        order = http.get("/api/orders/ord_7Hk2", headers=session.headers()).json()
        assert order["items"][0]["status"] == "exchanged"
        asked_again = http.post(EXCHANGE, json=EXCHANGE_BODY, headers=session.headers())
    assert asked_again.status_code == 409 and asked_again.json()["error"] == "already_exchanged"


def test_a_restart_keeps_each_operation_id(start, tmp_path):
    """A cancellation (a random operation id) performed before the restart keeps its id after it."""
    from poppy_tui.demo.testing import AgentSession

    ledger = tmp_path / "performed.sqlite3"
    first = start(ledger_path=ledger)
    session = AgentSession.at(first)
    cancel = "/api/subscriptions/sub_6Tc1/cancel"
    with httpx.Client(base_url=first.base_url) as http:
        operation = http.post(cancel, json={}, headers=session.headers()).json()["operation"]
        approval = Approval(operation["operation_id"], operation["revision"])
        assert (
            http.post(cancel, json={}, headers=session.headers(approval=approval)).status_code
            == 200
        )
    port = first.port
    first.stop()
    again = start(port=port, ledger_path=ledger)
    with httpx.Client(base_url=again.base_url) as http:
        assert (
            http.post(cancel, json={}, headers=session.headers(approval=approval)).json()["status"]
            == "cancelled"
        )
        refused = http.post(cancel, json={}, headers=session.headers())
    assert refused.status_code == 409 and refused.json()["error"] == "already_cancelled"
    assert again.state.performed(operation["operation_id"]) == 0


def test_openapi_describes_sign_in(shop, browser):
    document = browser.get("/openapi.json").json()
    scheme = document["components"]["securitySchemes"]["Account"]
    assert scheme["flows"]["authorizationCode"]["tokenUrl"] == shop.accounts.url("/token")
    operations = {
        op["operationId"]: op for path in document["paths"].values() for op in path.values()
    }
    assert operations["changeBooking"]["security"] == [
        {"PoppySession": [], "Account": ["poppy:write", "bookings"]}
    ]
    assert "security" not in operations["searchProducts"]
    assert "401" in operations["listOrders"]["responses"]
