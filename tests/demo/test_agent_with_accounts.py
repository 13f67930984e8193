"""poppy-tui's own agent against the demo Company with accounts, end to end over loopback:
the agent's Device and Mediated Sign-In with the person approving on the demo's page,
signed-in requests, an account operation approved and performed once, sign-out (revocation);
and its Direct Sign-In through the consent page, redirected to its loopback listener."""

from __future__ import annotations

from dataclasses import replace
from collections.abc import Iterator

import httpx
import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status
from poppy_tui.demo.accounts.service import AccountsOptions
from poppy_tui.demo.accounts.users import DEMO_PASSWORD, DEMO_USERNAME
from tests.keyring_support import MemoryKeyring, memory_keyring  # noqa: F401 (shared autouse fixture)
from tests.waiting import wait_until

EXCHANGE_BODY = {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"}


@pytest.fixture
def agent(tmp_path) -> Iterator[Agent]:
    config = replace(Config(), allow_loopback=True, grace_seconds=0.0, request_timeout_seconds=5.0)
    made = Agent.open(Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"), config)
    yield made
    made.store.close()


class NoWait:
    async def __call__(self, seconds: float) -> None:
        return None


async def test_agent_device_sign_in_then_an_account_operation(start, agent, memory_keyring):  # noqa: F811
    shop = start(accounts=AccountsOptions(device_interval=1))
    company = await agent.add_company(shop.base_url)
    try:
        signed_out = await agent.call_api(
            company, "POST", "/api/orders/ord_7Hk2/exchanges", EXCHANGE_BODY
        )
        assert signed_out.status == 401 and signed_out.challenge is not None
        assert signed_out.challenge.scopes == ("poppy:write",)

        flow = await agent.signins.begin(company, "device", sleep=NoWait())
        authorization = await flow.start()
        assert (
            flow.link == authorization.verification_uri_complete
        )  # on the issuer's host, so shown
        async with httpx.AsyncClient() as browser:  # the person, in a browser
            page = await browser.get(flow.link)
            assert "poppy:write" in page.text
            answer = await browser.post(
                shop.accounts.url("/device/verify"),
                data={
                    "user_code": flow.user_code,
                    "username": DEMO_USERNAME,
                    "password": DEMO_PASSWORD,
                    "decision": "allow",
                },
            )
            assert answer.status_code == 200
        grant = await flow.wait()
        assert set(grant.scopes) == {"poppy:read", "poppy:write", "bookings"}
        kept = [
            v
            for (service, user), v in memory_keyring.secrets.items()
            if user.startswith("refresh-token")
        ]
        assert kept  # the refresh token is in the keyring...

        result = await agent.call_api(
            company, "POST", "/api/orders/ord_7Hk2/exchanges", EXCHANGE_BODY
        )
        assert result.outcome == "operation"
        op = agent.store.get_operation(result.operation_row)
        assert op.account_owned
        agent.approve(op.id, op.current.id)
        done = await agent.wait_for_outcome(op.id, timeout=20)
        assert done.status == Status.PERFORMED
        assert shop.state.performed(op.operation_id) == 1

        signed_out_again = await agent.signins.sign_out(company)
        assert signed_out_again is not None
        assert all(g.revoked for g in shop.accounts.tokens.grants())
        after = await agent.call_api(company, "GET", "/api/orders")
        assert after.status == 401  # signed out: the Session carries on without a token
        database = b"".join(
            p.read_bytes()
            for p in agent.paths.database.parent.glob(agent.paths.database.name + "*")
        )
        assert DEMO_PASSWORD.encode() not in database
        for refresh_token in kept:  # ...and never in the database (or its WAL)
            assert refresh_token.encode() not in database
    finally:
        await agent.aclose()


async def test_agent_mediated_sign_in_with_the_code_step(start, agent):
    from poppy_tui.agent.signin.flows import CodeRequired
    from poppy_tui.demo.accounts.users import DEMO_ONE_TIME_CODE

    shop = start(accounts=AccountsOptions())
    company = await agent.add_company(shop.base_url)
    try:
        flow = await agent.signins.begin(company, "mediated")
        assert [f.name for f in flow.fields] == ["username", "password"]
        step = await flow.submit({"username": DEMO_USERNAME, "password": DEMO_PASSWORD})
        assert isinstance(step, CodeRequired)
        grant = await flow.submit_code(DEMO_ONE_TIME_CODE)
        assert set(grant.scopes) == {"poppy:read", "poppy:write"}
        orders = await agent.call_api(company, "GET", "/api/orders")
        assert orders.status == 200
        # bookings is not granted by Mediated Sign-In: the Company says which scope is missing.
        moved = await agent.call_api(
            company,
            "POST",
            "/api/bookings/bkg_2Fm8/change",
            {"starts_at": "2030-01-07T10:00:00-08:00"},
        )
        assert (
            moved.status == 403 and moved.challenge is not None and moved.challenge.kind == "scope"
        )
        assert DEMO_PASSWORD.encode() not in agent.paths.database.read_bytes()
    finally:
        await agent.aclose()


async def test_agent_direct_sign_in_through_the_consent_page(start, agent):
    from tests.demo.signin_helpers import hidden_fields

    shop = start(accounts=AccountsOptions())
    company = await agent.add_company(shop.base_url)
    opened: list[str] = []
    try:
        flow = await agent.signins.begin(company, "direct", open_browser=opened.append)
        url = await flow.start()
        async with httpx.AsyncClient(follow_redirects=False) as browser:  # the person's browser
            page = await browser.get(url)
            assert page.status_code == 200, page.text
            form = {
                **hidden_fields(page.text),
                "username": DEMO_USERNAME,
                "password": DEMO_PASSWORD,
                "decision": "allow",
            }
            redirect = await browser.post(shop.accounts.url("/authorize"), data=form)
            assert redirect.status_code == 302
            # RFC 8252 7.3: the CIMD lists http://127.0.0.1/callback; the listener has its own port.
            assert redirect.headers["location"].startswith("http://127.0.0.1:")
            await browser.get(redirect.headers["location"])  # reaches the agent's loopback listener
        grant = await flow.wait()
        assert set(grant.scopes) == {"poppy:read", "poppy:write", "bookings"}
        assert (await agent.call_api(company, "GET", "/api/bookings")).status == 200
    finally:
        await agent.aclose()


async def _mediated_sign_in(agent, company) -> None:
    from poppy_tui.agent.signin.flows import CodeRequired
    from poppy_tui.demo.accounts.users import DEMO_ONE_TIME_CODE

    flow = await agent.signins.begin(company, "mediated")
    step = await flow.submit({"username": DEMO_USERNAME, "password": DEMO_PASSWORD})
    if isinstance(step, CodeRequired):
        await flow.submit_code(DEMO_ONE_TIME_CODE)


async def test_demo_conversation_approval_waits_for_sign_in_past_the_window_then_is_performed(
    start, tmp_path
):
    """Probe P11b and P16 on the demo: an account's exchange from a conversation, approved after
    signing out, with a retry window much shorter than the time until the person signs in again."""
    from datetime import timedelta

    from poppy_tui.agent.store.connection import now_utc, parse_stamp

    config = replace(
        Config(),
        allow_loopback=True,
        grace_seconds=0.0,
        request_timeout_seconds=5.0,
        retry_window_seconds=0.3,
    )
    agent = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        config,
        reply_wait_seconds=3.0,
    )
    shop = start(accounts=AccountsOptions())
    try:
        company = await agent.add_company(shop.base_url)
        await _mediated_sign_in(agent, company)
        said = await agent.say(company, "exchange my Stormline jacket for the insulated one")
        (row,) = said.operation_rows
        op = agent.store.get_operation(row)
        assert op.account_owned and op.interface == "conversation"
        await agent.signins.sign_out(company)
        agent.approve(op.id, op.current.id)
        waiting = await agent.wait_for_outcome(op.id, timeout=15)
        assert waiting.status == Status.SENDING and waiting.waiting_sign_in, waiting.outcome_detail
        first = parse_stamp(agent.store.attempts(op.id)[0].started_at)
        past = first + timedelta(seconds=0.6)

        async def dispatched_past_it() -> bool:
            await agent.dispatch_once()
            return now_utc() > past

        await wait_until(dispatched_past_it, timeout=30, describe=f"the clock past {past}")
        assert shop.state.performed(op.operation_id) == 0
        await _mediated_sign_in(agent, company)
        done = await agent.wait_for_outcome(op.id, timeout=20)
        assert done.status == Status.PERFORMED, done.outcome_detail
        assert shop.state.performed(op.operation_id) == 1
        assert [a.outcome for a in agent.store.attempts(op.id)][0] == "sign_in_required"
    finally:
        await agent.aclose()
        agent.store.close()
