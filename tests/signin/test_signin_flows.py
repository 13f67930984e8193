"""The three sign-in kinds end to end against the spec-written authorization server, plus issuer
binding, refresh, revocation, and secrets kept out of the database file and the logs."""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from poppy_tui.agent.keys import KEYRING_SERVICE
from poppy_tui.agent.signin.errors import SignInError
from poppy_tui.agent.signin.flows import CodeRequired
from poppy_tui.agent.signin.vault import REFRESH_TOKEN_USERNAME

from spec_auth_server import USER


def _form(seen) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(seen.body.decode()).items()}


def _refresh_in_keyring(memory_keyring, issuer: str) -> str | None:
    return memory_keyring.secrets.get(
        (KEYRING_SERVICE, REFRESH_TOKEN_USERNAME.format(issuer=issuer))
    )


class Sleeps:
    """Stands in for asyncio.sleep in the device poll: records each wait, waits for nothing."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


async def _approve_device(link: str, auth) -> None:
    async with httpx.AsyncClient(trust_env=False) as browser:
        page = await browser.get(link)
        assert page.status_code == 200
        user_code = parse_qs(urlsplit(link).query)["user_code"][0]
        done = await browser.post(link.split("?")[0], data=auth.approve_device_form(user_code))
        assert done.status_code == 200


async def _mediated_sign_in(setup):
    flow = await setup.signins.begin(setup.company, "mediated")
    return await flow.submit({"email": USER["email"], "password": USER["password"]})


# ---- Device Sign-In ---------------------------------------------------------------------------------


async def test_device_sign_in_waits_through_pending_and_slow_down(setup, memory_keyring):
    setup.auth.device_script = ["authorization_pending", "slow_down", "authorization_pending"]
    sleeps = Sleeps()
    flow = await setup.signins.begin(setup.company, "device", sleep=sleeps)
    authorization = await flow.start()
    assert flow.company_name == "Juniper Outfitters" and flow.company_domain == setup.auth.domain
    assert flow.link == authorization.verification_uri_complete
    assert flow.user_code == authorization.user_code
    await _approve_device(flow.link, setup.auth)

    grant = await flow.wait()

    # interval 1; slow_down adds 5 s to every later wait (RFC 8628 3.5).
    assert sleeps.waits == [1, 1, 6, 6]
    assert grant.kind == "device" and grant.scopes == ("poppy:read", "poppy:write")
    device_request = next(s for s in setup.auth.received if s.path == "/oauth/device")
    assert _form(device_request)["scope"] == "poppy:read poppy:write"
    polls = [_form(s) for s in setup.auth.received if s.path == "/oauth/token"]
    assert len(polls) == 4 and all(
        p["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code" for p in polls
    )
    refresh = _refresh_in_keyring(memory_keyring, setup.auth.issuer)
    assert refresh in setup.auth.grants
    record = setup.signins.status(setup.company)
    assert record.scopes == ("poppy:read", "poppy:write") and record.kind == "device"
    token = await setup.agent.access_token_source(setup.company)
    assert setup.auth.valid_access(token)


async def test_opening_the_device_link_approves_nothing(setup):
    sleeps = Sleeps()
    flow = await setup.signins.begin(setup.company, "device", sleep=sleeps)
    await flow.start()
    async with httpx.AsyncClient(trust_env=False) as browser:
        assert (await browser.get(flow.link)).status_code == 200
    setup.auth.device_script = ["authorization_pending", "access_denied"]
    with pytest.raises(SignInError, match="refused"):
        await flow.wait()
    assert setup.signins.status(setup.company) is None


async def test_device_link_on_another_host_is_not_shown(setup):
    setup.auth.verification_host = "https://juniper-login.example"
    flow = await setup.signins.begin(setup.company, "device", sleep=Sleeps())
    authorization = await flow.start()
    assert flow.link is None
    assert authorization.user_code  # the code is still shown, with the Company's name and domain


async def test_device_code_that_expires_says_so(setup):
    setup.auth.device_script = ["authorization_pending", "expired_token"]
    flow = await setup.signins.begin(setup.company, "device", sleep=Sleeps())
    await flow.start()
    with pytest.raises(SignInError, match="expired"):
        await flow.wait()


# ---- Direct Sign-In -----------------------------------------------------------------------------------


async def _consent(authorize_url: str) -> str:
    """Drive the Company's authorize page as a browser would; returns the redirect's Location."""
    async with httpx.AsyncClient(trust_env=False, follow_redirects=False) as browser:
        page = await browser.get(authorize_url)
        assert page.status_code == 200 and "Juniper Outfitters" in page.text
        params = dict(parse_qs(urlsplit(authorize_url).query))
        form = {k: v[0] for k, v in params.items()} | {
            "email": USER["email"],
            "password": USER["password"],
            "decision": "allow",
        }
        answer = await browser.post(authorize_url.split("?")[0], data=form)
        assert answer.status_code == 302
        return answer.headers["location"]


async def test_direct_sign_in_with_pkce_state_and_the_loopback_redirect(setup):
    opened: list[str] = []
    flow = await setup.signins.begin(
        setup.company, "direct", scopes=["poppy:read", "orders"], open_browser=opened.append
    )
    url = await flow.start()
    assert opened == [url]
    query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert url.startswith(f"{setup.auth.base_url}/oauth/authorize?")
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["client_id"] == "https://agent.signin-tests.example/agent.json"
    assert query["redirect_uri"].startswith("http://127.0.0.1:") and query["redirect_uri"].endswith(
        "/callback"
    )
    assert len(query["state"]) >= 32 and query["scope"] == "poppy:read orders"

    location = await _consent(url)
    async with httpx.AsyncClient(trust_env=False) as browser:
        landed = await browser.get(location)  # the browser follows the redirect to our listener
    assert landed.status_code == 200 and "code" not in landed.text
    grant = await flow.wait()

    assert grant.kind == "direct" and grant.scopes == ("poppy:read", "orders")
    exchange = _form(next(s for s in setup.auth.received if s.path == "/oauth/token"))
    assert exchange["grant_type"] == "authorization_code" and "code_verifier" in exchange
    assert (
        exchange["client_assertion_type"]
        == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    )


async def test_direct_redirect_with_another_iss_is_refused(setup):
    setup.auth.redirect_iss = setup.auth.base_url + "/tenants/other"
    flow = await setup.signins.begin(setup.company, "direct", open_browser=lambda url: None)
    location = await _consent(await flow.start())
    with pytest.raises(SignInError, match="iss"):
        await flow.complete(location)
    assert not any(s.path == "/oauth/token" for s in setup.auth.received)
    assert setup.signins.status(setup.company) is None
    await flow.aclose()


async def test_direct_redirect_with_another_state_is_refused_by_listener_and_paste(setup):
    flow = await setup.signins.begin(setup.company, "direct", open_browser=lambda url: None)
    location = await _consent(await flow.start())
    forged = location.replace("state=", "state=x")
    async with httpx.AsyncClient(trust_env=False) as browser:
        assert (await browser.get(forged)).status_code == 400  # the listener ignores it
    with pytest.raises(SignInError, match="state"):
        await flow.complete(forged)
    grant = await flow.complete(location)  # the real one still works
    assert grant.kind == "direct"


async def test_direct_sign_in_by_pasting_the_redirect(setup):
    flow = await setup.signins.begin(setup.company, "direct", open_browser=lambda url: None)
    location = await _consent(await flow.start(open_browser=False))
    grant = await flow.complete(location)
    assert grant.scopes == ("poppy:read", "poppy:write", "orders")
    with pytest.raises(SignInError, match="already"):
        await flow.complete(location)


# ---- Mediated Sign-In ----------------------------------------------------------------------------------


async def test_mediated_sign_in_sends_exactly_the_fields_once_to_the_endpoint(setup):
    grant = await _mediated_sign_in(setup)
    assert (
        grant.kind == "mediated"
        and grant.scopes == ("poppy:read",)
        and grant.account == USER["email"]
    )
    carrying = [s for s in setup.auth.received if USER["password"].encode() in s.body]
    assert [s.path for s in carrying] == ["/poppy/sign-in"]
    import json

    body = json.loads(carrying[0].body)
    assert body["fields"] == {"email": USER["email"], "password": USER["password"]}
    assert set(body) == {
        "client_id",
        "client_assertion_type",
        "client_assertion",
        "scope",
        "fields",
    }


async def test_mediated_code_step_posts_only_the_code(setup):
    setup.auth.mediated_needs_code = True
    flow = await setup.signins.begin(setup.company, "mediated")
    step = await flow.submit({"email": USER["email"], "password": USER["password"]})
    assert isinstance(step, CodeRequired) and step.message == "Enter the code we sent"
    with pytest.raises(SignInError, match="already"):
        await flow.submit({"email": USER["email"], "password": USER["password"]})
    grant = await flow.submit_code(USER["code"])
    # The account named with the credentials is the sign-in's, though the code step completed it.
    assert grant.kind == "mediated" and grant.account == USER["email"]
    code_request = setup.auth.received[-1]
    assert code_request.path == f"/poppy/sign-in/{step.sign_in_id}"
    import json

    body = json.loads(code_request.body)
    assert (
        body["code"] == USER["code"]
        and "fields" not in body
        and USER["password"] not in code_request.body.decode()
    )


async def test_mediated_takes_exactly_the_declared_fields(setup):
    flow = await setup.signins.begin(setup.company, "mediated")
    with pytest.raises(SignInError, match="exactly"):
        await flow.submit({"email": USER["email"], "password": USER["password"], "otp": "1"})
    with pytest.raises(SignInError, match="Password"):
        await flow.submit({"email": USER["email"], "password": ""})
    assert not any(s.path.startswith("/poppy/sign-in") for s in setup.auth.received)


async def test_mediated_wrong_password_is_a_clear_failure(setup):
    flow = await setup.signins.begin(setup.company, "mediated")
    with pytest.raises(SignInError, match="wrong email or password"):
        await flow.submit({"email": USER["email"], "password": "nope"})
    assert setup.signins.status(setup.company) is None


# ---- issuer binding -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda auth: setattr(auth, "metadata_issuer", auth.issuer + "/"), "issuer"),
        (lambda auth: setattr(auth, "metadata_domains", ["juniper.example"]), "poppy_domains"),
    ],
)
async def test_issuer_binding_failures_stop_every_sign_in(setup, change, reason):
    change(setup.auth)
    for kind in ("device", "direct", "mediated"):
        with pytest.raises(SignInError, match=f"issuer binding.*{reason}"):
            await setup.signins.begin(setup.company, kind)
    assert {s.path for s in setup.auth.received} <= {
        "/.well-known/poppy.json",
        "/.well-known/oauth-authorization-server/tenants/juniper",
    }


async def test_scopes_the_kind_does_not_grant_are_refused(setup):
    with pytest.raises(SignInError, match="does not grant orders"):
        await setup.signins.begin(setup.company, "device", scopes=["orders"])


# ---- tokens: refresh, covering grants, revocation -------------------------------------------------------


async def test_access_token_is_refreshed_before_it_expires(setup, memory_keyring):
    setup.auth.access_lifetime = 30  # inside the 60 s refresh margin: due for refresh at once
    await _mediated_sign_in(setup)
    first_refresh = _refresh_in_keyring(memory_keyring, setup.auth.issuer)
    first_access = setup.signins.vault.access(setup.auth.issuer).token

    token = await setup.signins.access_token(setup.company)

    assert token != first_access and setup.auth.valid_access(token)
    refresh_call = _form([s for s in setup.auth.received if s.path == "/oauth/token"][-1])
    assert (
        refresh_call["grant_type"] == "refresh_token"
        and refresh_call["refresh_token"] == first_refresh
    )
    assert refresh_call["client_assertion_type"].endswith("jwt-bearer")
    rotated = _refresh_in_keyring(memory_keyring, setup.auth.issuer)
    assert rotated != first_refresh and rotated in setup.auth.grants


async def test_a_fresh_access_token_is_used_as_is(setup):
    await _mediated_sign_in(setup)
    calls = len(setup.auth.received)
    first = await setup.signins.access_token(setup.company)
    assert await setup.signins.access_token(setup.company) == first
    assert len(setup.auth.received) == calls


async def test_a_revoked_grant_means_signed_out(setup, memory_keyring):
    setup.auth.access_lifetime = 30
    await _mediated_sign_in(setup)
    for grant in setup.auth.grants.values():
        grant.revoked = True  # the person disconnected the agent on the Company's site
    assert await setup.signins.access_token(setup.company) is None
    assert setup.signins.status(setup.company) is None
    assert _refresh_in_keyring(memory_keyring, setup.auth.issuer) is None


async def test_an_existing_grant_covers_the_scopes_it_holds(setup):
    assert not setup.signins.covers(setup.company, ["poppy:read"])
    await _mediated_sign_in(setup)
    assert setup.signins.covers(setup.company, ["poppy:read"])
    assert not setup.signins.covers(setup.company, ["poppy:read", "orders"])


async def test_sign_out_revokes_the_refresh_token_and_forgets_it(setup, memory_keyring):
    await _mediated_sign_in(setup)
    refresh = _refresh_in_keyring(memory_keyring, setup.auth.issuer)

    result = await setup.signins.sign_out(setup.company)

    assert result.revoked and result.was_signed_in
    assert setup.auth.revoked_tokens == [(refresh, "refresh_token")]
    assert setup.auth.grants[refresh].revoked
    revoke_call = _form(next(s for s in setup.auth.received if s.path == "/oauth/revoke"))
    assert revoke_call["client_assertion_type"].endswith("jwt-bearer")
    assert _refresh_in_keyring(memory_keyring, setup.auth.issuer) is None
    assert setup.signins.status(setup.company) is None
    assert await setup.agent.access_token_source(setup.company) is None
    again = await setup.signins.sign_out(setup.company)
    assert not again.was_signed_in


def test_the_agent_plugs_its_sign_ins_into_signed_in_requests(tmp_path):
    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.config import Config
    from poppy_tui.agent.paths import Paths

    agent = Agent.open(Paths(tmp_path / "c", tmp_path / "d"), Config())
    try:
        assert agent.access_token_source == agent.signins.access_token
    finally:
        agent.store.close()


# ---- secrets stay out of the database and the logs ----------------------------------------------------


async def test_secrets_are_absent_from_the_database_file_and_the_logs(
    setup, memory_keyring, caplog
):
    caplog.set_level(logging.DEBUG)
    setup.auth.access_lifetime = 30
    await _mediated_sign_in(setup)
    access = await setup.signins.access_token(setup.company)  # a refresh too
    refresh = _refresh_in_keyring(memory_keyring, setup.auth.issuer)
    sleeps = Sleeps()
    device = await setup.signins.begin(setup.company, "device", sleep=sleeps)
    authorization = await device.start()
    await _approve_device(device.link, setup.auth)
    await device.wait()
    direct = await setup.signins.begin(setup.company, "direct", open_browser=lambda url: None)
    with caplog.at_level(
        logging.CRITICAL
    ):  # the test's own browser logs the redirect it got, not the agent
        location = await _consent(await direct.start())
    await direct.complete(location)
    code = parse_qs(urlsplit(location).query)["code"][0]
    setup.agent.store.flush(5)

    secrets = [
        USER["password"],
        access,
        refresh,
        authorization.device_code,
        code,
        direct._verifier,
        _refresh_in_keyring(memory_keyring, setup.auth.issuer),
    ]
    secrets += list(setup.auth.grants) + list(setup.auth.access_tokens)
    database = setup.agent.store.path
    stored = b"".join(
        p.read_bytes() for p in database.parent.iterdir() if p.name.startswith(database.name)
    )
    assert b"poppy:read" in stored  # the sign_ins row is there, so the bytes were read
    for secret in secrets:
        assert secret.encode() not in stored
        assert secret not in caplog.text


async def test_a_token_rotated_by_another_process_is_not_a_sign_out(setup, memory_keyring):
    from poppy_tui.agent.signin.service import SignIns

    setup.auth.access_lifetime = 30
    await _mediated_sign_in(setup)
    stale = _refresh_in_keyring(memory_keyring, setup.auth.issuer)
    # Another poppy-tui process refreshes first; the Company rotates the refresh token.
    other = SignIns(
        setup.agent.store, setup.agent.config, lambda: setup.identity, setup.agent._http
    )
    assert await other.access_token(setup.company)
    rotated = _refresh_in_keyring(memory_keyring, setup.auth.issuer)
    assert rotated != stale
    # This process read the keyring just before the other one wrote the rotated token.
    reads = iter([stale, rotated, rotated])
    setup.signins.vault.refresh_token = lambda issuer: next(reads)  # type: ignore[method-assign]

    token = await setup.signins.access_token(setup.company)

    assert token and setup.auth.valid_access(token)
    assert setup.signins.status(setup.company) is not None


async def test_a_new_issuer_in_poppy_json_signs_out(setup, memory_keyring):
    await _mediated_sign_in(setup)
    document = dict(setup.company.document)
    document["auth"] = dict(document["auth"], issuer=setup.auth.base_url + "/tenants/new")
    setup.agent.store._db.execute(
        "UPDATE companies SET document_json=? WHERE id=?",
        (__import__("json").dumps(document), setup.company.id),
    )
    assert await setup.signins.access_token(setup.company) is None
    assert setup.signins.status(setup.company) is None
    assert _refresh_in_keyring(memory_keyring, setup.auth.issuer) is None


async def test_a_token_endpoint_answering_5xx_text_is_one_clear_line(setup):
    setup.auth.token_status = 503
    flow = await setup.signins.begin(setup.company, "device", sleep=Sleeps())
    await flow.start()
    with pytest.raises(SignInError, match="token endpoint answered HTTP 503") as failure:
        await flow.wait()
    assert "\n" not in str(failure.value)
    assert setup.signins.status(setup.company) is None


async def test_a_failed_refresh_keeps_the_sign_in_and_the_unexpired_token(setup):
    setup.auth.access_lifetime = 30  # due for refresh, still usable
    await _mediated_sign_in(setup)
    first = setup.signins.vault.access(setup.auth.issuer).token
    setup.auth.token_status = 500
    assert await setup.signins.access_token(setup.company) == first
    assert setup.signins.status(setup.company) is not None


async def test_a_token_endpoint_that_trickles_is_abandoned_at_the_overall_deadline(setup):
    from dataclasses import replace

    from poppy_tui.agent.signin.service import SignIns

    signins = SignIns(
        setup.agent.store,
        replace(setup.agent.config, request_timeout_seconds=1.0),
        lambda: setup.identity,
        setup.agent._http,
    )
    setup.auth.trickle["token"] = 0.3  # inside every 1 s read timeout, never done
    flow = await signins.begin(setup.company, "device", sleep=Sleeps())
    await flow.start()
    with pytest.raises(
        SignInError, match=f"no complete answer within 2 s from {setup.auth.domain}"
    ):
        await flow.wait()


async def test_a_sign_in_for_more_access_asks_for_what_is_held_too(setup):
    """A new grant replaces the old one: asking only for the missing scope would lose the rest
    (walk B1: a sign-in for `bookings` left every read 403 `insufficient_scope`)."""
    await _mediated_sign_in(setup)  # Mediated grants poppy:read only
    assert setup.signins.status(setup.company).scopes == ("poppy:read",)
    assert setup.signins.scopes_to_ask(setup.company, ["poppy:write"]) == (
        "poppy:read",
        "poppy:write",
    )
    flow = await setup.signins.begin(
        setup.company, "device", scopes=["poppy:write"], sleep=Sleeps()
    )
    await flow.start()
    await _approve_device(flow.link, setup.auth)
    grant = await flow.wait()

    device_request = [s for s in setup.auth.received if s.path == "/oauth/device"][-1]
    assert _form(device_request)["scope"] == "poppy:read poppy:write"
    assert grant.scopes == ("poppy:read", "poppy:write")
    assert setup.signins.status(setup.company).scopes == ("poppy:read", "poppy:write")
    assert setup.signins.covers(setup.company, ["poppy:read"])


async def test_held_scopes_the_kind_cannot_grant_are_not_asked_for(setup):
    await _mediated_sign_in(setup)
    # Direct grants poppy:read poppy:write orders: the held poppy:read is asked again with orders.
    assert setup.signins.scopes_to_ask(
        setup.company, ["orders"], ("poppy:read", "poppy:write", "orders")
    ) == ("poppy:read", "orders")
    # A kind that can't grant a held scope isn't asked for it (it would refuse the whole sign-in).
    assert setup.signins.scopes_to_ask(setup.company, ["poppy:write"], ("poppy:write",)) == (
        "poppy:write",
    )
