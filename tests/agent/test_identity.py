"""The agent's identity: the documents it publishes, the JWTs it signs, one client_id per home."""

from __future__ import annotations

import json
import time
import urllib.request

import jwt
import pytest

from poppy_tui.agent.identity.settings import settings_file
from poppy_tui.protocol.client_metadata import parse_client_metadata, parse_jwks


def fetch(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def test_development_identity_is_served_and_checks_out(make_agent):
    agent = make_agent()
    identity = agent.identity
    metadata = fetch(identity.client_id)
    checked = parse_client_metadata(metadata, identity.client_id, allow_loopback=True)
    assert checked.token_endpoint_auth_method == "private_key_jwt"
    keys = parse_jwks(fetch(checked.jwks_uri))
    assert list(keys) == [identity.kid]
    assert all("d" not in k for k in identity.public_jwks()["keys"])


def test_sign_and_client_assertion_use_the_published_key(make_agent):
    identity = make_agent().identity
    public = identity.key.public_key()
    token = identity.sign({"hello": "world"}, "example+jwt")
    header = jwt.get_unverified_header(token)
    assert header == {"alg": "ES256", "typ": "example+jwt", "kid": identity.kid}
    assertion = identity.client_assertion("https://auth.shop.example")
    claims = jwt.decode(
        assertion, public, algorithms=["ES256"], audience="https://auth.shop.example"
    )
    assert claims["iss"] == claims["sub"] == identity.client_id
    assert claims["aud"] == "https://auth.shop.example"  # one string, not a list
    assert claims["exp"] - claims["iat"] == 60 and abs(claims["iat"] - time.time()) < 5
    assert (
        identity.client_assertion("https://auth.shop.example") != assertion
    )  # a new jti each time
    assert jwt.get_unverified_header(assertion)["kid"] == identity.kid


def test_every_agent_of_a_home_has_the_same_client_id(make_agent, paths):
    first = make_agent().identity
    second = make_agent().identity
    assert first.client_id == second.client_id and first.kid == second.kid
    assert json.loads(settings_file(paths).read_text())["client_id"] == first.client_id


async def test_without_an_identity_an_approval_is_not_sent_and_says_what_to_do(make_agent, shop):
    """No identity.json and loopback not allowed: nothing can be signed, so nothing is sent."""
    from poppy_tui.agent.store import Status

    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    result = await agent.call_api(
        company,
        "POST",
        "/api/orders/ord_7Hk2/exchanges",
        {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
    )
    op = agent.store.get_operation(result.operation_row)
    agent.store.close()
    from poppy_tui.agent.identity.settings import settings_file

    settings_file(agent.paths).unlink()
    strict = make_agent(allow_loopback=False)
    assert "identity init --client-id" in (strict.signing_problem() or "")
    from poppy_tui.agent.agent import ApprovalUnsignable

    with pytest.raises(ApprovalUnsignable, match="identity init --client-id"):
        strict.approve(op.id, op.current.id)
    assert (
        strict.store.get_operation(op.id).status == Status.PENDING
        and strict.store.decisions(op.id) == []
    )
    await strict.dispatch_once()
    assert shop.performed("exc_5Rt2") == 0 and strict.store.attempts(op.id) == []
