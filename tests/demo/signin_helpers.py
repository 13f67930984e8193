"""Driving the demo Company's sign-in as an agent and a browser would: httpx over
loopback, the HTML forms posted as a browser posts them, no browser needed."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from poppy_tui.demo.accounts.users import DEMO_ONE_TIME_CODE, DEMO_PASSWORD, DEMO_USERNAME
from poppy_tui.demo.server import RunningCompany
from poppy_tui.demo.testing import TestAgentIdentity


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )
    return verifier, challenge


def hidden_fields(page: str) -> dict[str, str]:
    """The hidden inputs of a form, as a browser would submit them."""
    import html

    fields = {}
    for name, value in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', page):
        fields[html.unescape(name)] = html.unescape(value)
    return fields


def token(
    http: httpx.Client, company: RunningCompany, agent: TestAgentIdentity, **form: str
) -> httpx.Response:
    """A token endpoint request authenticated with a fresh private_key_jwt assertion."""
    return http.post(
        company.accounts.url("/token"), data={**agent.assertion_fields(company.issuer), **form}
    )


def authorize_params(
    agent: TestAgentIdentity,
    challenge: str,
    *,
    scope: str = "poppy:read poppy:write bookings",
    state: str = "st_1",
    redirect_uri: str | None = None,
    method: str = "S256",
) -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": agent.client_id,
        "redirect_uri": redirect_uri or agent.redirect_uris[0],
        "scope": scope,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": method,
    }


def redirect_query(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 302, response.text
    return {k: v[0] for k, v in parse_qs(urlsplit(response.headers["location"]).query).items()}


def direct_code(
    http: httpx.Client,
    company: RunningCompany,
    agent: TestAgentIdentity,
    challenge: str,
    **kwargs: Any,
) -> dict[str, str]:
    """Open the consent page, sign in and allow; the redirect's query parameters."""
    page = http.get(
        company.accounts.url("/authorize"), params=authorize_params(agent, challenge, **kwargs)
    )
    assert page.status_code == 200, page.text
    form = {
        **hidden_fields(page.text),
        "username": DEMO_USERNAME,
        "password": DEMO_PASSWORD,
        "decision": "allow",
    }
    return redirect_query(http.post(company.accounts.url("/authorize"), data=form))


def direct_sign_in(
    http: httpx.Client, company: RunningCompany, agent: TestAgentIdentity, **kwargs: Any
) -> dict[str, Any]:
    verifier, challenge = pkce()
    query = direct_code(http, company, agent, challenge, **kwargs)
    response = token(
        http,
        company,
        agent,
        grant_type="authorization_code",
        code=query["code"],
        redirect_uri=kwargs.get("redirect_uri") or agent.redirect_uris[0],
        code_verifier=verifier,
    )
    assert response.status_code == 200, response.text
    return response.json()


def device_start(
    http: httpx.Client, company: RunningCompany, agent: TestAgentIdentity, scope: str | None = None
) -> dict[str, Any]:
    form = agent.assertion_fields(company.issuer)
    if scope is not None:
        form["scope"] = scope
    response = http.post(company.accounts.url("/device"), data=form)
    assert response.status_code == 200, response.text
    return response.json()


def device_poll(
    http: httpx.Client, company: RunningCompany, agent: TestAgentIdentity, device_code: str
) -> httpx.Response:
    return token(
        http,
        company,
        agent,
        grant_type="urn:ietf:params:oauth:grant-type:device_code",
        device_code=device_code,
    )


def device_approve(
    http: httpx.Client,
    company: RunningCompany,
    user_code: str,
    decision: str = "allow",
    password: str = DEMO_PASSWORD,
) -> httpx.Response:
    return http.post(
        company.accounts.url("/device/verify"),
        data={
            "user_code": user_code,
            "username": DEMO_USERNAME,
            "password": password,
            "decision": decision,
        },
    )


def device_sign_in(
    http: httpx.Client, company: RunningCompany, agent: TestAgentIdentity, scope: str | None = None
) -> dict[str, Any]:
    started = device_start(http, company, agent, scope)
    assert device_approve(http, company, started["user_code"]).status_code == 200
    response = device_poll(http, company, agent, started["device_code"])
    assert response.status_code == 200, response.text
    return response.json()


def mediated(
    http: httpx.Client,
    company: RunningCompany,
    agent: TestAgentIdentity,
    fields: dict[str, Any],
    scope: str | None = None,
) -> httpx.Response:
    body: dict[str, Any] = {
        "client_id": agent.client_id,
        **agent.assertion_fields(company.issuer),
        "fields": fields,
    }
    if scope is not None:
        body["scope"] = scope
    return http.post(company.accounts.url("/mediated"), json=body)


def mediated_code(
    http: httpx.Client,
    company: RunningCompany,
    agent: TestAgentIdentity,
    sign_in_id: str,
    code: str,
) -> httpx.Response:
    body = {"client_id": agent.client_id, **agent.assertion_fields(company.issuer), "code": code}
    return http.post(company.accounts.url(f"/mediated/{sign_in_id}"), json=body)


def mediated_sign_in(
    http: httpx.Client, company: RunningCompany, agent: TestAgentIdentity
) -> dict[str, Any]:
    first = mediated(
        http, company, agent, {"username": DEMO_USERNAME, "password": DEMO_PASSWORD}
    ).json()
    assert first["status"] == "code_required", first
    done = mediated_code(http, company, agent, first["sign_in_id"], DEMO_ONE_TIME_CODE).json()
    assert done["status"] == "complete", done
    return done
