"""Session header checks on every API, MCP and conversation request."""

from __future__ import annotations

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.demo.testing import AgentSession, publish_test_agent
from poppy_tui.protocol.session_jwt import SessionIdentity, sign_session_jwt

PROTECTED = [
    ("GET", "/api/orders", None),
    ("GET", "/api/orders/ord_7Hk2", None),
    (
        "POST",
        "/api/orders/ord_7Hk2/exchanges",
        {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
    ),
    ("POST", "/poppy/conversations", {"message": {"id": "msg_x", "text": "hi"}}),
    ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
]


def _invalid(response: httpx.Response) -> str:
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["error"] == "invalid_session"
    assert body["error_description"]
    return body["error_description"]


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
def test_missing_session_is_invalid_session(http, method, path, body):
    _invalid(http.request(method, path, json=body, headers={"Poppy-Version": "0.4"}))


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
def test_poppy_version_must_be_0_4(http, agent, method, path, body):
    for headers in ({"Poppy-Version": "0.3"}, {"Poppy-Version": "1.0"}, {}):
        h = agent.headers(version=None)
        h.update(headers)
        response = http.request(method, path, json=body, headers=h)
        assert response.status_code == 400
        assert response.json()["error"] == "unsupported_version"


def test_jti_replay_is_rejected(http, agent):
    headers = agent.headers()
    assert http.get("/api/orders", headers=headers).status_code == 200
    assert "replay" in _invalid(http.get("/api/orders", headers=headers))


def test_a_session_is_bound_to_its_first_key(company, http):
    first = AgentSession.at(company)
    assert http.get("/api/orders", headers=first.headers()).status_code == 200
    thief = AgentSession.at(company, session_id=first.session_id, user_id=first.identity.user_id)
    assert "another key" in _invalid(http.get("/api/orders", headers=thief.headers()))
    # The rightful key keeps working.
    assert http.get("/api/orders", headers=first.headers()).status_code == 200


def test_wrong_audience_and_tampering_are_invalid(company, http):
    key = ec.generate_private_key(ec.SECP256R1())
    identity = SessionIdentity(publish_test_agent(key), "usr_1", "ses_1")
    other_audience = sign_session_jwt(key, identity, "http://127.0.0.1:1")
    _invalid(
        http.get("/api/orders", headers={"Poppy-Version": "0.4", "Poppy-Session": other_audience})
    )
    good = sign_session_jwt(key, identity, company.issuer)
    head, payload, signature = good.split(".")
    tampered = ".".join(
        [head, payload, signature[:-4] + ("AAAA" if signature[-4:] != "AAAA" else "BBBB")]
    )
    _invalid(http.get("/api/orders", headers={"Poppy-Version": "0.4", "Poppy-Session": tampered}))
    hs256 = jwt.encode(
        {"sid": "s"},
        "a-shared-secret-that-is-32-bytes-long!",
        algorithm="HS256",
        headers={"typ": "poppy-session+jwt"},
    )
    _invalid(http.get("/api/orders", headers={"Poppy-Version": "0.4", "Poppy-Session": hs256}))


def test_every_request_needs_a_fresh_jwt_but_the_session_continues(http, agent):
    for _ in range(3):
        assert http.get("/api/orders", headers=agent.headers()).status_code == 200


@pytest.mark.parametrize(
    "member",
    [
        {"jwk": {"kty": "EC", "crv": "P-256", "x": 1, "y": 2}},
        {"jku": "http://127.0.0.1:1/keys.json"},
        {"x5u": "http://127.0.0.1:1/cert.pem"},
    ],
    ids=["embedded-jwk", "jku", "x5u"],
)
def test_a_jwt_pointing_at_its_own_key_is_invalid_session(http, member):
    key = ec.generate_private_key(ec.SECP256R1())
    client_id = publish_test_agent(key)
    token = jwt.encode(
        {"iss": client_id, "sub": "u", "aud": "x", "sid": "s", "iat": 0, "exp": 1, "jti": "j"},
        key,
        algorithm="ES256",
        headers={"typ": "poppy-session+jwt", **member},
    )
    assert "jwks_uri" in _invalid(
        http.get("/api/orders", headers={"Poppy-Version": "0.4", "Poppy-Session": token})
    )


def test_alg_none_is_invalid_session(company, http):
    client_id = publish_test_agent(ec.generate_private_key(ec.SECP256R1()))
    token = jwt.encode(
        {"iss": client_id, "sid": "s"}, None, algorithm="none", headers={"typ": "poppy-session+jwt"}
    )
    assert "alg" in _invalid(
        http.get("/api/orders", headers={"Poppy-Version": "0.4", "Poppy-Session": token})
    )


def test_a_key_the_agent_did_not_publish_is_invalid_client_naming_the_jwks(company, http):
    published = AgentSession.at(company)
    impostor = AgentSession.at(
        company, key=ec.generate_private_key(ec.SECP256R1()), client_id=published.identity.client_id
    )
    response = http.get("/api/orders", headers=impostor.headers())
    assert response.status_code == 401
    body = response.json()
    assert body["error"] == "invalid_client"
    assert body["client_id"] == published.identity.client_id
    assert "jwks.json" in body["error_description"]
    assert http.get("/api/orders", headers=published.headers()).status_code == 200


def test_an_agent_whose_cimd_cannot_be_fetched_is_invalid_client(company, http):
    missing = "http://127.0.0.1:1/nobody/agent.json"
    stranger = AgentSession.at(company, client_id=missing)
    response = http.get("/api/orders", headers=stranger.headers())
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert missing in response.json()["error_description"]
