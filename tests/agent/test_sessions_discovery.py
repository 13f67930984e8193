"""Discovery and Sessions: what every request carries, and what invalid_session does."""

from __future__ import annotations

import json

import keyring
import pytest

from poppy_tui.agent.companies import DiscoveryError
from poppy_tui.agent.agent import AgentError
from poppy_tui.protocol import conventions as c
from poppy_tui.protocol.session_jwt import read_session_claims, verify_session_jwt

from .company_app import Answer, Rule
from tests.keyring_support import MemoryKeyring


def is_orders(r) -> bool:
    return r.path == "/api/orders"


async def test_discovery_keeps_the_company_with_a_pairwise_identity(make_agent, shop):
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    assert (
        company.name == "Manzanita Outfitters" and company.domain == shop.base_url.split("://")[1]
    )
    assert (
        company.supports_operations
        and company.user_id.startswith("usr_")
        and company.session_id.startswith("ses_")
    )
    again = await agent.add_company(shop.base_url + "/")
    assert (again.id, again.user_id, again.session_id) == (
        company.id,
        company.user_id,
        company.session_id,
    )
    assert agent.find_company("Manzanita Outfitters").id == company.id
    assert agent.find_company(shop.base_url + "/api/orders").id == company.id
    other = make_agent(agent_paths=None)
    assert other.find_company("nobody") is None


async def test_every_request_has_a_fresh_session_jwt(make_agent, shop):
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    for _ in range(3):
        assert (await agent.call_api(company, "GET", "/api/orders")).outcome == "performed"
    sent = shop.requests(is_orders)
    tokens = [r.headers["poppy-session"] for r in sent]
    assert len(set(tokens)) == 3
    verified = [verify_session_jwt(t, shop.issuer, agent.identity.key.public_key()) for t in tokens]
    assert len({v.jti for v in verified}) == 3
    assert {(v.user_id, v.session_id, v.client_id, v.key_id) for v in verified} == {
        (company.user_id, company.session_id, agent.identity.client_id, agent.identity.kid)
    }
    assert agent.identity.client_id.startswith("http://127.0.0.1:")  # the development identity
    for r in sent:
        assert r.headers["poppy-version"] == "0.4"
        assert r.headers["poppy-extensions"] == '"operations";v="2"'
        assert "idempotency-key" not in r.headers  # GET is not a write


async def test_invalid_session_starts_a_new_session_and_retries_once(make_agent, shop):
    shop.add(Rule(is_orders, lambda r: Answer(403, {"error": "invalid_session"})))
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    result = await agent.call_api(company, "GET", "/api/orders")
    assert result.outcome == "performed" and "new Session" in result.detail
    first, second = shop.requests(is_orders)
    sid = lambda r: read_session_claims(r.headers["poppy-session"])["sid"]  # noqa: E731
    renewed = agent.store.get_company(company.id)
    assert (
        sid(first) == company.session_id and sid(second) == renewed.session_id != company.session_id
    )


async def test_invalid_session_twice_is_not_retried_again(make_agent, shop):
    shop.add(Rule(is_orders, lambda r: Answer(403, {"error": "invalid_session"}), times=5))
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    result = await agent.call_api(company, "GET", "/api/orders")
    assert result.outcome == "not_performed" and "new Session too" in result.detail
    assert len(shop.requests(is_orders)) == 2


async def test_a_new_key_for_an_old_session_is_renewed_with_the_real_company(
    make_agent, shop, paths
):
    """The demo binds a Session to the first key that used it; a new key gets invalid_session."""
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    assert (await agent.call_api(company, "GET", "/api/orders")).outcome == "performed"
    keyring.set_keyring(MemoryKeyring())  # the key is gone: a new one will be made
    # The Company refetches a JWKS on an unknown kid only every 30 s; here that time has passed.
    shop.context.agents.refetch_seconds = 0
    second = make_agent()
    result = await second.call_api(company, "GET", "/api/orders")
    assert result.outcome == "performed"
    assert second.store.get_company(company.id).session_id != company.session_id
    assert (
        second.identity.client_id == agent.identity.client_id
        and second.identity.kid != agent.identity.kid
    )


async def test_a_new_key_within_the_refetch_window_names_the_cimd(make_agent, shop):
    """Within 30 s of its last JWKS fetch the Company won't refetch: the agent's key is unknown to
    it (invalid_client), and the agent says which identity document the Company could not match."""
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    assert (await agent.call_api(company, "GET", "/api/orders")).outcome == "performed"
    keyring.set_keyring(MemoryKeyring())
    second = make_agent()
    result = await second.call_api(company, "GET", "/api/orders")
    assert result.outcome == "not_performed"
    assert second.identity.client_id in result.detail and "identity" in result.detail


async def test_openapi_and_unknown_origins(make_agent, shop):
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    document = await agent.fetch_openapi(company)
    assert document["openapi"].startswith("3.")
    with pytest.raises(AgentError, match="only to the Company"):
        await agent.call_api(company, "GET", "http://127.0.0.2:9/api/orders")
    with pytest.raises(AgentError):
        await agent.call_api(company, "GET", "ftp://127.0.0.1/x")


async def test_discovery_refuses_loopback_unless_allowed(make_agent, shop):
    agent = make_agent(allow_loopback=False)
    with pytest.raises(DiscoveryError):
        await agent.add_company(shop.base_url)
    assert agent.store.list_companies() == []


async def test_discovery_refuses_a_redirect_to_plain_http(make_agent, shop):
    shop.add(
        Rule(
            lambda r: r.path == c.WELL_KNOWN_PATH,
            lambda r: Answer(302, {}, {"Location": shop.base_url + "/elsewhere.json"}),
        )
    )
    agent = make_agent()
    with pytest.raises(DiscoveryError, match="not https"):
        await agent.add_company(shop.base_url)


async def test_discovery_bounds_the_document(make_agent, shop):
    huge = {"protocol_version": "0.4", "padding": "x" * (c.MAX_DISCOVERY_BYTES + 10)}
    shop.add(Rule(lambda r: r.path == c.WELL_KNOWN_PATH, lambda r: Answer(200, huge)))
    agent = make_agent()
    with pytest.raises(DiscoveryError, match="bytes"):
        await agent.add_company(shop.base_url)


async def test_discovery_checks_the_domain(make_agent, shop):
    document = json.loads(
        json.dumps(
            {
                "protocol_version": "0.4",
                "organization": {"name": "Someone Else", "domain": "example.com"},
                "apis": [{"type": "openapi", "url": shop.base_url + "/openapi.json"}],
            }
        )
    )
    shop.add(Rule(lambda r: r.path == c.WELL_KNOWN_PATH, lambda r: Answer(200, document)))
    agent = make_agent()
    with pytest.raises(DiscoveryError, match="organization.domain"):
        await agent.add_company(shop.base_url)


async def test_unreachable_company(make_agent, shop):
    agent = make_agent()
    shop.stop()
    with pytest.raises(DiscoveryError, match="could not fetch"):
        await agent.add_company(shop.base_url)
