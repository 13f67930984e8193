"""Session JWTs signed while the request before them waits for its answer (sessions.py, "spares"),
over real loopback HTTP: each is used at most once, only by the signer and Session it was made
for, and only while fresh; a Company that verifies signatures and refuses replayed jtis accepts
them; a spare that can't be signed never hurts a request."""

from __future__ import annotations

import base64
import dataclasses
import json
import time

import pytest

from poppy_tui.agent import sessions as sessions_module
from poppy_tui.agent.sessions import SPARE_JWT_MAX_AGE_SECONDS
from poppy_tui.agent.store import Status
from tests.companies.strict_company import StrictCompany

from .test_api_approvals import ask


def claims_of(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def jwts_received(strict: StrictCompany) -> list[str]:
    """The Session JWT of every booking action the Company received, in order."""
    return [h["poppy-session"] for _, _, h, _ in strict.state.received if "poppy-session" in h]


async def cancel(agent, company) -> None:
    """A booking action the strict Company records (with its headers); it answers with an operation."""
    result = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    assert result.outcome == "operation", result


async def after_one_request(make_agent, strict):
    """An agent that made one request to the strict Company: (agent, company, the spare's key, the spare)."""
    agent = make_agent()
    company = await agent.add_company(strict.base_url)
    await cancel(agent, company)
    [(key, spare)] = agent.sessions._spares.items()
    return agent, company, key, spare


@pytest.fixture
def signed_at(monkeypatch) -> dict[str, float]:
    """jti -> when its claims were made (perf_counter), for every Session JWT signed."""
    made: dict[str, float] = {}
    real = sessions_module.session_claims

    def recording(*args, **kwargs):
        claims = real(*args, **kwargs)
        made[claims["jti"]] = time.perf_counter()
        return claims

    monkeypatch.setattr(sessions_module, "session_claims", recording)
    return made


async def test_a_request_after_another_carries_a_jwt_signed_while_that_one_waited(
    make_agent, strict, signed_at
):
    agent = make_agent()
    company = await agent.add_company(strict.base_url)
    await cancel(agent, company)
    began = []
    for _ in range(3):
        began.append(time.perf_counter())
        await cancel(agent, company)
    received = [claims_of(token)["jti"] for token in jwts_received(strict)]
    assert len(received) == 4 and len(set(received)) == 4  # never one jti twice
    for jti, started in zip(received[-3:], began, strict=True):
        assert signed_at[jti] < started  # signed before its request was asked for: a spare


async def test_a_company_that_refuses_replays_accepts_the_spare_an_approval_carries(
    make_agent, shop, signed_at
):
    agent = make_agent(grace_seconds=0)
    _, op = await ask(agent, shop)
    used: list[str] = []
    real_jwt = agent.sessions.session_jwt

    def recording_jwt(*args, **kwargs):
        token = real_jwt(*args, **kwargs)
        used.append(claims_of(token)["jti"])
        return token

    agent.sessions.session_jwt = recording_jwt
    approved_at = time.perf_counter()
    agent.approve(op.id, op.current.id)
    await agent.dispatch_once()
    done = agent.store.get_operation(op.id)
    assert done.status == Status.PERFORMED, done.outcome_detail
    [approval_jti] = used
    assert signed_at[approval_jti] < approved_at  # signed while the first request waited


@pytest.mark.parametrize(
    "signed_at",
    [
        lambda spare: spare.signed_at - SPARE_JWT_MAX_AGE_SECONDS - 1,  # nobody came for it in time
        lambda spare: time.time() + 60,  # "signed in the future": the clock moved back since
    ],
    ids=["stale", "clock-moved-back"],
)
async def test_a_spare_out_of_its_time_is_dropped_and_never_sent(make_agent, strict, signed_at):
    agent, company, key, spare = await after_one_request(make_agent, strict)
    moved = dataclasses.replace(spare, signed_at=signed_at(spare))
    agent.sessions._spares[key] = moved
    await cancel(agent, company)
    assert len(jwts_received(strict)) == 2 and moved.token not in jwts_received(strict)


async def test_a_spare_signed_by_an_identity_no_longer_loaded_is_not_used(make_agent, strict):
    agent, company, _, spare = await after_one_request(make_agent, strict)
    # Loaded again on next use: another signer (as a new identity or key would be).
    agent._identity = agent.sessions._identity = None
    await cancel(agent, company)
    assert len(jwts_received(strict)) == 2 and spare.token not in jwts_received(strict)


async def test_a_spare_is_used_once_and_only_for_its_own_session(make_agent, strict):
    agent, company, _, spare = await after_one_request(make_agent, strict)
    assert agent.sessions.session_jwt(company, "sess_another") != spare.token
    assert agent.sessions.session_jwt(company) == spare.token
    assert agent.sessions.session_jwt(company) != spare.token
    assert not agent.sessions._spares


async def test_a_spare_that_cannot_be_signed_leaves_requests_alone(make_agent, strict):
    class BrokenSigner:
        def sign(self, claims, typ):
            raise RuntimeError("the key went away")

    agent, company, key, _ = await after_one_request(make_agent, strict)
    agent.sessions._spares.clear()
    agent.sessions._spares_wanted[key] = BrokenSigner()
    agent.sessions.sign_spares()  # does not raise
    assert not agent.sessions._spares
    await cancel(agent, company)


async def test_the_requests_of_an_mcp_call_carry_spares_the_company_accepts(
    make_agent, shop, signed_at
):
    agent = make_agent()
    company = await agent.add_company(shop.base_url)
    asked: list[tuple[str, float]] = []  # (jti, when the request asked for its JWT)
    real_jwt = agent.sessions.session_jwt

    def recording_jwt(*args, **kwargs):
        at = time.perf_counter()
        token = real_jwt(*args, **kwargs)
        asked.append((claims_of(token)["jti"], at))
        return token

    agent.sessions.session_jwt = recording_jwt
    result = await agent.call_tool(company, "search_products", {"query": "jacket"})
    assert result.outcome == "performed", result
    assert len(asked) >= 2 and len({jti for jti, _ in asked}) == len(asked)
    # The SDK sends some of a call's requests at once; only one of those finds the spare, the
    # others sign their own. Those that follow one awaiting its answer get a spare.
    spares = [jti for jti, at in asked if signed_at[jti] < at]
    assert spares and asked[0][0] not in spares
