"""The demo Company's authorization server, over real loopback HTTP: issuer binding,
Direct (PKCE), Device and Mediated Sign-In, client authentication, refresh, revocation."""

from __future__ import annotations

import jwt
import pytest

from poppy_tui.demo.accounts.service import AccountsOptions
from poppy_tui.demo.accounts.users import DEMO_ONE_TIME_CODE, DEMO_PASSWORD, DEMO_USERNAME
from poppy_tui.demo.testing import TestAgentIdentity
from poppy_tui.protocol import conventions as c

from tests.demo.signin_helpers import (
    authorize_params,
    device_approve,
    device_poll,
    device_sign_in,
    device_start,
    direct_code,
    direct_sign_in,
    hidden_fields,
    mediated,
    mediated_code,
    mediated_sign_in,
    pkce,
    redirect_query,
    token,
)

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


# ----- discovery and issuer binding ---------------------------------------------------


def test_metadata_binds_the_issuer_to_the_company(shop, browser):
    poppy = browser.get(c.WELL_KNOWN_PATH).json()
    auth = poppy["auth"]
    # RFC 8414 3.1: the issuer has a path, so the well-known part goes before it.
    assert auth["issuer"] == shop.base_url + "/auth"
    meta = browser.get("/.well-known/oauth-authorization-server/auth").json()
    assert meta["issuer"] == auth["issuer"]
    assert poppy["organization"]["domain"] in meta["poppy_domains"]
    for name in (
        "token_endpoint",
        "revocation_endpoint",
        "authorization_endpoint",
        "device_authorization_endpoint",
    ):
        assert meta[name].startswith(auth["issuer"] + "/")
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["token_endpoint_auth_methods_supported"] == ["private_key_jwt"]
    # An agent that appends the suffix to the issuer finds nothing.
    assert browser.get("/auth/.well-known/oauth-authorization-server").status_code == 404
    assert auth["direct"]["scopes"] and auth["device"]["scopes"]
    assert auth["mediated"]["endpoint"] == auth["issuer"] + "/mediated"
    assert auth["mediated"]["fields"] == [
        {"name": "username", "label": "Email", "secret": False},
        {"name": "password", "label": "Password", "secret": True},
    ]
    assert "bookings" in auth["custom_scopes"]
    # The Session JWT audience is that issuer, exactly.
    assert shop.issuer == auth["issuer"]


def test_without_accounts_the_company_has_only_an_issuer(company, http):
    assert http.get(c.WELL_KNOWN_PATH).json()["auth"] == {"issuer": company.base_url}
    assert http.get("/.well-known/oauth-authorization-server/auth").status_code == 404


# ----- Direct Sign-In ------------------------------------------------------------------


def test_direct_sign_in_with_pkce(shop, browser, agent_identity):
    verifier, challenge = pkce()
    page = browser.get(
        shop.accounts.url("/authorize"), params=authorize_params(agent_identity, challenge)
    )
    assert page.status_code == 200
    assert (
        agent_identity.client_name in page.text
        and "bookings" in page.text
        and "poppy:write" in page.text
    )
    assert page.headers["x-frame-options"] == "DENY"
    query = direct_code(browser, shop, agent_identity, challenge, state="st_abc")
    assert query["state"] == "st_abc"
    assert query["iss"] == shop.issuer  # RFC 9207
    response = token(
        browser,
        shop,
        agent_identity,
        grant_type="authorization_code",
        code=query["code"],
        redirect_uri=agent_identity.redirect_uris[0],
        code_verifier=verifier,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "Bearer" and body["access_token"] and body["refresh_token"]
    assert body["scope"] == "poppy:read poppy:write bookings"
    assert 0 < body["expires_in"] <= 300
    assert response.headers["cache-control"] == "no-store"
    # A code is good once.
    again = token(
        browser,
        shop,
        agent_identity,
        grant_type="authorization_code",
        code=query["code"],
        redirect_uri=agent_identity.redirect_uris[0],
        code_verifier=verifier,
    )
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


def test_bad_pkce_verifier_gets_no_tokens(shop, browser, agent_identity):
    _, challenge = pkce()
    query = direct_code(browser, shop, agent_identity, challenge)
    other_verifier, _ = pkce()
    response = token(
        browser,
        shop,
        agent_identity,
        grant_type="authorization_code",
        code=query["code"],
        redirect_uri=agent_identity.redirect_uris[0],
        code_verifier=other_verifier,
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"


@pytest.mark.parametrize("change", [{"code_challenge": ""}, {"code_challenge_method": "plain"}])
def test_pkce_s256_is_required(shop, browser, agent_identity, change):
    _, challenge = pkce()
    params = {**authorize_params(agent_identity, challenge), **change}
    params = {k: v for k, v in params.items() if v}
    query = redirect_query(browser.get(shop.accounts.url("/authorize"), params=params))
    assert query["error"] == "invalid_request"
    assert query["iss"] == shop.issuer and query["state"] == "st_1"  # iss in error redirects too


def test_redirect_uri_must_be_listed_exactly(shop, browser, agent_identity):
    _, challenge = pkce()
    for wrong in (
        agent_identity.redirect_uris[0] + "/",
        "http://127.0.0.1:8765/callback?x=1",
        "https://evil.example/cb",
    ):
        page = browser.get(
            shop.accounts.url("/authorize"),
            params=authorize_params(agent_identity, challenge, redirect_uri=wrong),
        )
        # Never redirected to an unlisted URI: an error page at the Company instead.
        assert page.status_code == 400 and "location" not in page.headers
    # At the token endpoint too, the code is bound to its redirect_uri.
    verifier, challenge = pkce()
    query = direct_code(browser, shop, agent_identity, challenge)
    response = token(
        browser,
        shop,
        agent_identity,
        grant_type="authorization_code",
        code=query["code"],
        redirect_uri="http://127.0.0.1:9999/other",
        code_verifier=verifier,
    )
    assert response.status_code == 400


def test_deny_and_wrong_password(shop, browser, agent_identity):
    _, challenge = pkce()
    page = browser.get(
        shop.accounts.url("/authorize"), params=authorize_params(agent_identity, challenge)
    )
    form = {
        **hidden_fields(page.text),
        "username": DEMO_USERNAME,
        "password": "not-it",
        "decision": "allow",
    }
    wrong = browser.post(shop.accounts.url("/authorize"), data=form)
    assert (
        wrong.status_code == 401
        and "location" not in wrong.headers
        and "match an account" in wrong.text
    )
    assert "not-it" not in wrong.text  # the password is never shown back
    denied = redirect_query(
        browser.post(shop.accounts.url("/authorize"), data={**form, "decision": "deny"})
    )
    assert denied["error"] == "access_denied" and denied["iss"] == shop.issuer


def test_consent_page_escapes_the_agents_name(start, agent_identity):
    hostile = TestAgentIdentity(client_name="<script>alert(1)</script>\u202eevil\x1b[31m")
    shop = start(accounts=AccountsOptions())
    import httpx

    with httpx.Client(base_url=shop.base_url) as http:
        _, challenge = pkce()
        page = http.get(
            shop.accounts.url("/authorize"), params=authorize_params(hostile, challenge)
        )
    assert page.status_code == 200
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text
    assert "\u202e" not in page.text and "\x1b" not in page.text


def test_unknown_agent_gets_an_error_page(shop, browser):
    stranger = TestAgentIdentity()
    stranger.client_id = stranger.client_id.replace(
        "/agent.json", "/nobody.json"
    )  # nothing served there
    _, challenge = pkce()
    page = browser.get(
        shop.accounts.url("/authorize"), params=authorize_params(stranger, challenge)
    )
    assert page.status_code == 400 and "nobody.json" in page.text and "404" in page.text


# ----- Device Sign-In ----------------------------------------------------------------------


def test_device_sign_in(shop, browser, agent_identity):
    started = device_start(browser, shop, agent_identity)
    assert started["verification_uri"] == shop.accounts.url("/device/verify")
    assert started["interval"] == 1 and started["expires_in"] > 0
    assert (
        device_poll(browser, shop, agent_identity, started["device_code"]).json()["error"]
        == "authorization_pending"
    )
    assert (
        device_poll(browser, shop, agent_identity, started["device_code"]).json()["error"]
        == "slow_down"
    )
    # Opening the link shows who asks and for what, and approves nothing.
    page = browser.get(started["verification_uri_complete"])
    assert (
        page.status_code == 200
        and agent_identity.client_name in page.text
        and "poppy:read" in page.text
    )
    assert "error" in device_poll(browser, shop, agent_identity, started["device_code"]).json()
    assert (
        device_approve(browser, shop, started["user_code"].lower().replace("-", " ")).status_code
        == 200
    )
    response = device_poll(browser, shop, agent_identity, started["device_code"])
    assert response.status_code == 200, response.text
    assert response.json()["scope"] == "poppy:read poppy:write bookings"
    # A device code gives tokens once.
    assert device_poll(browser, shop, agent_identity, started["device_code"]).status_code == 400


def test_device_denied_and_expired(start, agent_identity):
    import httpx

    shop = start(accounts=AccountsOptions(device_interval=1))
    with httpx.Client(base_url=shop.base_url) as http:
        started = device_start(http, shop, agent_identity)
        assert device_approve(http, shop, started["user_code"], password="wrong").status_code == 400
        assert device_approve(http, shop, started["user_code"], decision="deny").status_code == 200
        assert (
            device_poll(http, shop, agent_identity, started["device_code"]).json()["error"]
            == "access_denied"
        )
    expiring = start(accounts=AccountsOptions(device_expires_in=0))
    with httpx.Client(base_url=expiring.base_url) as http:
        started = device_start(http, expiring, agent_identity)
        assert (
            device_poll(http, expiring, agent_identity, started["device_code"]).json()["error"]
            == "expired_token"
        )


def test_device_scope_outside_the_declared_set_is_refused(shop, browser, agent_identity):
    form = {**agent_identity.assertion_fields(shop.issuer), "scope": "poppy:read admin"}
    response = browser.post(shop.accounts.url("/device"), data=form)
    assert response.status_code == 400 and response.json()["error"] == "invalid_scope"


# ----- Mediated Sign-In ----------------------------------------------------------------------


def test_mediated_sign_in_with_code_step(shop, browser, agent_identity):
    first = mediated(
        browser, shop, agent_identity, {"username": DEMO_USERNAME, "password": DEMO_PASSWORD}
    )
    assert first.status_code == 200
    body = first.json()
    assert body["status"] == "code_required" and body["sign_in_id"]
    wrong = mediated_code(browser, shop, agent_identity, body["sign_in_id"], "000000").json()
    assert wrong["status"] == "failed"
    done = mediated_code(browser, shop, agent_identity, body["sign_in_id"], DEMO_ONE_TIME_CODE)
    assert done.json()["status"] == "complete"
    assert done.json()["scope"] == "poppy:read poppy:write" and done.json()["access_token"]
    for response in (first, done):  # credentials never come back
        assert DEMO_PASSWORD not in response.text and DEMO_USERNAME not in response.text
        assert DEMO_ONE_TIME_CODE not in response.text


def test_mediated_failed_wrong_fields_and_rate_limit(shop, browser, agent_identity):
    extra = mediated(
        browser,
        shop,
        agent_identity,
        {"username": DEMO_USERNAME, "password": DEMO_PASSWORD, "otp": "1"},
    )
    assert extra.status_code == 400 and extra.json()["status"] == "failed"
    for _ in range(5):
        failed = mediated(
            browser, shop, agent_identity, {"username": DEMO_USERNAME, "password": "guess"}
        )
        assert failed.status_code == 200 and failed.json()["status"] == "failed"
    limited = mediated(
        browser, shop, agent_identity, {"username": DEMO_USERNAME, "password": DEMO_PASSWORD}
    )
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) > 0
    assert "guess" not in limited.text


def test_mediated_expired_and_scope(start, agent_identity):
    import httpx

    shop = start(accounts=AccountsOptions(mediated_expires_in=0))
    with httpx.Client(base_url=shop.base_url) as http:
        first = mediated(
            http, shop, agent_identity, {"username": DEMO_USERNAME, "password": DEMO_PASSWORD}
        ).json()
        assert (
            mediated_code(
                http, shop, agent_identity, first["sign_in_id"], DEMO_ONE_TIME_CODE
            ).json()["status"]
            == "expired"
        )
        too_much = mediated(
            http,
            shop,
            agent_identity,
            {"username": DEMO_USERNAME, "password": DEMO_PASSWORD},
            scope="bookings",
        )
        assert too_much.status_code == 400


def test_mediated_needs_client_authentication(shop, browser, agent_identity):
    other = TestAgentIdentity()
    mismatched = browser.post(
        shop.accounts.url("/mediated"),
        json={
            "client_id": other.client_id,
            **agent_identity.assertion_fields(shop.issuer),
            "fields": {"username": DEMO_USERNAME, "password": DEMO_PASSWORD},
        },
    )
    assert mismatched.status_code == 401 and mismatched.json()["error"] == "invalid_client"
    response = browser.post(
        shop.accounts.url("/mediated"),
        json={
            "client_id": agent_identity.client_id,
            "fields": {"username": DEMO_USERNAME, "password": DEMO_PASSWORD},
        },
    )
    assert response.status_code == 401 and response.json()["status"] == "failed"


# ----- client authentication (private_key_jwt) -------------------------------------------------


def _refresh(browser, shop, agent, refresh_token, scope=None, **assertion_kwargs):
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    if scope is not None:
        form["scope"] = scope
    return browser.post(
        shop.accounts.url("/token"),
        data={**agent.assertion_fields(shop.issuer, **assertion_kwargs), **form},
    )


def test_assertion_aud_must_be_the_issuer_as_one_string(shop, browser, agent_identity):
    tokens = device_sign_in(browser, shop, agent_identity)
    for aud in (shop.accounts.url("/token"), [shop.issuer], shop.issuer + "/"):
        form = {
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_assertion_type": c.CLIENT_ASSERTION_TYPE,
            "client_assertion": agent_identity.client_assertion(aud),
        }
        response = browser.post(shop.accounts.url("/token"), data=form)
        assert (
            response.status_code in (400, 401) and response.json()["error"] == "invalid_client"
        ), aud
    assert _refresh(browser, shop, agent_identity, tokens["refresh_token"]).status_code == 200


def test_replayed_jti_is_refused(shop, browser, agent_identity):
    tokens = device_sign_in(browser, shop, agent_identity)
    first = _refresh(browser, shop, agent_identity, tokens["refresh_token"], jti="jti_once")
    assert first.status_code == 200
    again = _refresh(browser, shop, agent_identity, first.json()["refresh_token"], jti="jti_once")
    assert again.json()["error"] == "invalid_client"


def test_assertions_with_other_keys_or_algorithms_are_refused(shop, browser, agent_identity):
    from cryptography.hazmat.primitives.asymmetric import ec

    tokens = device_sign_in(browser, shop, agent_identity)
    bad = [
        agent_identity.client_assertion(shop.issuer, kid="key_unknown"),
        agent_identity.client_assertion(
            shop.issuer, key=ec.generate_private_key(ec.SECP256R1())
        ),  # right kid, wrong key
        jwt.encode(
            {
                "iss": agent_identity.client_id,
                "sub": agent_identity.client_id,
                "aud": shop.issuer,
                "exp": 2**31,
                "jti": "h",
            },
            "secret-secret-secret-secret-secret",
            algorithm="HS256",
            headers={"kid": agent_identity.kid},
        ),
        jwt.encode(
            {
                "iss": agent_identity.client_id,
                "sub": agent_identity.client_id,
                "aud": shop.issuer,
                "exp": 2**31,
                "jti": "n",
            },
            None,
            algorithm="none",
            headers={"kid": agent_identity.kid},
        ),
        agent_identity.client_assertion(shop.issuer, lifetime=3600),
    ]
    for assertion in bad:
        form = {
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_assertion_type": c.CLIENT_ASSERTION_TYPE,
            "client_assertion": assertion,
        }
        response = browser.post(shop.accounts.url("/token"), data=form)
        assert response.json()["error"] == "invalid_client", assertion
    missing = browser.post(
        shop.accounts.url("/token"),
        data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
    )
    assert missing.status_code == 401


def test_another_agent_cannot_use_the_refresh_token(shop, browser, agent_identity):
    other = TestAgentIdentity()
    tokens = device_sign_in(browser, shop, agent_identity)
    assert (
        _refresh(browser, shop, other, tokens["refresh_token"]).json()["error"] == "invalid_grant"
    )


# ----- refresh and revocation -----------------------------------------------------------


def test_refresh_rotates_and_a_reused_refresh_token_ends_the_grant(start, agent_identity):
    import httpx

    shop = start(accounts=AccountsOptions(refresh_reuse_grace_seconds=0))
    browser = httpx.Client(base_url=shop.base_url)
    tokens = mediated_sign_in(browser, shop, agent_identity)
    rotated = _refresh(browser, shop, agent_identity, tokens["refresh_token"])
    assert rotated.status_code == 200
    new = rotated.json()
    assert (
        new["refresh_token"] != tokens["refresh_token"]
        and new["access_token"] != tokens["access_token"]
    )
    assert new["scope"] == tokens["scope"]
    narrower = _refresh(browser, shop, agent_identity, new["refresh_token"], scope="poppy:read")
    assert narrower.status_code == 200 and narrower.json()["scope"] == "poppy:read"
    wider = _refresh(
        browser, shop, agent_identity, narrower.json()["refresh_token"], scope="poppy:read bookings"
    )
    assert wider.json()["error"] == "invalid_scope"
    # The first refresh token again: a leak, so the whole grant ends.
    assert (
        _refresh(browser, shop, agent_identity, tokens["refresh_token"]).json()["error"]
        == "invalid_grant"
    )
    assert (
        _refresh(browser, shop, agent_identity, narrower.json()["refresh_token"]).json()["error"]
        == "invalid_grant"
    )
    browser.close()


def test_a_refresh_race_between_two_processes_keeps_the_grant(shop, browser, agent_identity):
    """Two processes of one agent refresh with the same token: one wins; the other, refused,
    retries with the winner's token (the grace for a just-rotated token)."""
    tokens = device_sign_in(browser, shop, agent_identity)
    winner = _refresh(browser, shop, agent_identity, tokens["refresh_token"])
    assert winner.status_code == 200
    loser = _refresh(browser, shop, agent_identity, tokens["refresh_token"])
    assert loser.json()["error"] == "invalid_grant"
    retried = _refresh(browser, shop, agent_identity, winner.json()["refresh_token"])
    assert retried.status_code == 200, retried.text


def test_revocation_ends_the_grant(shop, browser, agent_identity):
    tokens = direct_sign_in(browser, shop, agent_identity)
    form = {
        **agent_identity.assertion_fields(shop.issuer),
        "token": tokens["refresh_token"],
        "token_type_hint": "refresh_token",
    }
    assert browser.post(shop.accounts.url("/revoke"), data=form).status_code == 200
    assert (
        _refresh(browser, shop, agent_identity, tokens["refresh_token"]).json()["error"]
        == "invalid_grant"
    )
    # Revoking needs the agent's own assertion; an unknown token is fine (RFC 7009 2.2).
    form = {
        **agent_identity.assertion_fields(shop.issuer),
        "token": "not-a-token",
        "token_type_hint": "refresh_token",
    }
    assert browser.post(shop.accounts.url("/revoke"), data=form).status_code == 200
    assert browser.post(shop.accounts.url("/revoke"), data={"token": "x"}).status_code == 401


def test_no_token_or_credential_reaches_the_log(shop, browser, agent_identity, caplog):
    import logging

    with caplog.at_level(logging.DEBUG):
        tokens = device_sign_in(browser, shop, agent_identity)
        mediated_tokens = mediated_sign_in(browser, shop, agent_identity)
        refreshed = _refresh(browser, shop, agent_identity, tokens["refresh_token"]).json()
    logged = caplog.text + "".join(str(r.args) for r in caplog.records)
    for secret in (
        tokens["access_token"],
        tokens["refresh_token"],
        mediated_tokens["refresh_token"],
        refreshed["refresh_token"],
        DEMO_PASSWORD,
        DEMO_ONE_TIME_CODE,
    ):
        assert secret not in logged


def test_malformed_requests_get_clear_errors_never_a_500(shop, browser, agent_identity):
    a = shop.accounts
    assertion = agent_identity.assertion_fields(shop.issuer)
    cases = [
        ("POST", a.url("/token"), {"data": {}}),
        ("POST", a.url("/token"), {"data": {**assertion}}),  # no grant_type
        (
            "POST",
            a.url("/token"),
            {"data": {**agent_identity.assertion_fields(shop.issuer), "grant_type": "password"}},
        ),
        (
            "POST",
            a.url("/token"),
            {
                "data": {
                    "client_assertion_type": c.CLIENT_ASSERTION_TYPE,
                    "client_assertion": "a.b.c",
                }
            },
        ),
        (
            "POST",
            a.url("/token"),
            {
                "data": {
                    "client_assertion_type": c.CLIENT_ASSERTION_TYPE,
                    "client_assertion": "x" * 20000,
                }
            },
        ),
        (
            "POST",
            a.url("/token"),
            {"content": b"\xff\xfe{not json", "headers": {"content-type": "application/json"}},
        ),
        (
            "POST",
            a.url("/token"),
            {
                "data": {
                    **agent_identity.assertion_fields(shop.issuer),
                    "grant_type": "authorization_code",
                }
            },
        ),
        (
            "POST",
            a.url("/token"),
            {"data": {**agent_identity.assertion_fields(shop.issuer), "grant_type": DEVICE_GRANT}},
        ),
        ("POST", a.url("/revoke"), {"data": {**agent_identity.assertion_fields(shop.issuer)}}),
        (
            "POST",
            a.url("/revoke"),
            {
                "data": {
                    **agent_identity.assertion_fields(shop.issuer),
                    "token": "t",
                    "token_type_hint": "weird",
                }
            },
        ),
        ("POST", a.url("/device"), {"data": {}}),
        ("GET", a.url("/authorize"), {}),
        ("GET", a.url("/authorize"), {"params": {"client_id": agent_identity.client_id}}),
        ("GET", a.url("/authorize"), {"params": {"client_id": "not a url"}}),
        (
            "POST",
            a.url("/authorize"),
            {"data": {"client_id": agent_identity.client_id, "decision": "allow"}},
        ),
        ("POST", a.url("/device/verify"), {"data": {}}),
        (
            "POST",
            a.url("/mediated"),
            {"content": b"[]", "headers": {"content-type": "application/json"}},
        ),
        (
            "POST",
            a.url("/mediated"),
            {"content": b"{", "headers": {"content-type": "application/json"}},
        ),
        ("POST", a.url("/mediated"), {"json": {**assertion, "fields": "nope"}}),
        (
            "POST",
            a.url("/mediated/msi_unknown"),
            {"json": {**agent_identity.assertion_fields(shop.issuer), "code": "1"}},
        ),
    ]
    for method, url, kwargs in cases:
        response = browser.request(method, url, **kwargs)
        assert 400 <= response.status_code < 500, (
            url,
            kwargs,
            response.status_code,
            response.text[:300],
        )
        assert "Traceback" not in response.text
    # An unknown code on the verification page: the form again, the code shown harmless.
    page = browser.get(a.url("/device/verify"), params={"user_code": "\u202e<b>x</b>"})
    assert page.status_code == 200 and "\u202e" not in page.text and "<b>" not in page.text


# ----- RFC conformance details: metadata, 401 challenges, device codes -------------------------


def test_metadata_lists_the_signing_algorithms_of_every_private_key_jwt_endpoint(shop, browser):
    meta = browser.get("/.well-known/oauth-authorization-server/auth").json()
    # RFC 8414 2: REQUIRED wherever private_key_jwt is an endpoint's authentication method.
    assert meta["revocation_endpoint_auth_methods_supported"] == ["private_key_jwt"]
    assert meta["revocation_endpoint_auth_signing_alg_values_supported"] == ["ES256"]
    assert meta["token_endpoint_auth_signing_alg_values_supported"] == ["ES256"]
    assert "none" not in meta["revocation_endpoint_auth_signing_alg_values_supported"]


def _challenge_of(response) -> str:
    assert response.status_code == 401, response.text
    value = response.headers.get("www-authenticate", "")
    assert value.startswith("private_key_jwt ") and 'error="invalid_client"' in value, value
    return value


@pytest.mark.parametrize("endpoint", ["/token", "/revoke", "/device"])
def test_a_401_invalid_client_carries_www_authenticate(shop, browser, agent_identity, endpoint):
    missing = browser.post(
        shop.accounts.url(endpoint), data={"grant_type": "refresh_token", "token": "x"}
    )
    assert missing.json()["error"] == "invalid_client"
    assert f'realm="{shop.issuer}"' in _challenge_of(missing)
    form = {
        "client_assertion_type": c.CLIENT_ASSERTION_TYPE,
        "grant_type": "refresh_token",
        "token": "x",
        "client_assertion": agent_identity.client_assertion(shop.issuer, kid="key_unknown"),
    }  # no such key
    answer = browser.post(shop.accounts.url(endpoint), data=form)
    assert answer.json()["error"] == "invalid_client"
    _challenge_of(answer)


def test_a_401_from_the_mediated_endpoint_carries_www_authenticate(shop, browser, agent_identity):
    other = TestAgentIdentity()
    mismatched = browser.post(
        shop.accounts.url("/mediated"),
        json={
            "client_id": other.client_id,
            **agent_identity.assertion_fields(shop.issuer),
            "fields": {"username": DEMO_USERNAME, "password": DEMO_PASSWORD},
        },
    )
    _challenge_of(mismatched)
    unauthenticated = browser.post(
        shop.accounts.url("/mediated"),
        json={
            "client_id": agent_identity.client_id,
            "fields": {"username": DEMO_USERNAME, "password": DEMO_PASSWORD},
        },
    )
    _challenge_of(unauthenticated)
    # Hostile text never reaches the header raw: quotes, backslashes and line breaks are dropped.
    from poppy_tui.demo.accounts.oauth import client_challenge

    value = client_challenge("https://x.example/auth", 'bad "quote" \\ and\r\nX-Injected: 1 é')
    assert "\r" not in value and "\n" not in value and "é" not in value and value.count('"') == 6


@pytest.mark.parametrize("device_code", ["never-issued", "", "x" * 500])
def test_an_unknown_device_code_is_invalid_grant(shop, browser, agent_identity, device_code):
    response = device_poll(browser, shop, agent_identity, device_code)
    assert response.status_code == 400
    expected = (
        "invalid_request" if device_code == "" else "invalid_grant"
    )  # missing is malformed, RFC 6749 5.2
    assert response.json()["error"] == expected, response.text


def test_a_used_device_code_is_invalid_grant(shop, browser, agent_identity):
    started = device_start(browser, shop, agent_identity)
    assert device_approve(browser, shop, started["user_code"]).status_code == 200
    first = device_poll(
        browser, shop, agent_identity, started["device_code"]
    )  # approved: no slow_down
    assert first.status_code == 200, first.text
    again = device_poll(browser, shop, agent_identity, started["device_code"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
