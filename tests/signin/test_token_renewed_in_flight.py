"""The agent's own sign-in when a Company refuses an access token with 401 invalid_token
(RFC 6750 3.1): the token the request carried is dropped, and only if it is still the one held.
A token renewed while the request was out (another task's request refreshed it at its margin)
is kept: the person is not signed out, nor asked to sign in again, and a held approval goes again
at once with it (Ops 3).

Against the spec-written Company with an authorization server (spec_auth_server.py): it rotates
refresh tokens, and a rotated grant's access tokens are no longer taken, so the renewal itself is
what makes the held request's token invalid. It holds the /orders request before it checks the
token until the test has renewed it (tests/companies/hold.py): no timing involved."""

from __future__ import annotations

import asyncio

import pytest

from poppy_tui.agent.store import Status
from poppy_tui.agent.store.sign_ins import get_sign_in, list_sign_ins
from poppy_tui.cli.output import sign_in_text

from spec_auth_server import USER
from tests.companies.hold import Hold


async def _signed_in(setup) -> str:
    flow = await setup.signins.begin(setup.company, "mediated")
    await flow.submit({"email": USER["email"], "password": USER["password"]})
    token = await setup.signins.access_token(setup.company)
    assert token is not None and setup.auth.valid_access(token)
    return token


async def _renew_now(setup, held: str) -> str:
    """What another task's request does once the token reaches its refresh margin: renew it."""
    record = setup.signins.status(setup.company)
    setup.signins.vault.keep_access(
        record.issuer, held, 0, record.signed_in_at
    )  # at its margin now
    renewed = await setup.agent.sessions.access_token(setup.company)
    assert renewed is not None and renewed != held
    assert not setup.auth.valid_access(
        held
    )  # the Company rotated the grant: the held request's token is dead
    return renewed


def _refreshes(setup) -> int:
    return sum(
        1
        for s in setup.auth.received
        if s.path == "/oauth/token" and b"grant_type=refresh_token" in s.body
    )


def _says_signed_in(setup) -> bool:
    """What `companies list` prints for this Company."""
    return sign_in_text(list_sign_ins(setup.agent.store).get(setup.company.id)).startswith(
        "signed in as"
    )


async def _an_approved_order(setup) -> int:
    result = await setup.agent.call_api(setup.company, "POST", "/orders", {"item": "rain jacket"})
    assert result.outcome == "operation", result.detail
    op = setup.agent.store.get_operation(result.operation_row)
    assert op.account_owned
    setup.agent.approve(op.id, op.current.id)
    return op.id


@pytest.mark.parametrize("token_endpoint", ["up", "down"])
async def test_a_token_renewed_while_the_approval_was_out_survives_and_the_approval_goes_with_it(
    setup, token_endpoint
):
    held = await _signed_in(setup)
    row = await _an_approved_order(setup)
    hold = setup.auth.hold_next_order = Hold()
    sending = asyncio.create_task(setup.agent.dispatch_once())
    await hold.arrived()
    renewed = await _renew_now(setup, held)
    if token_endpoint == "down":
        setup.auth.token_status = (
            503  # nothing more can be renewed: dropping the new token would sign out
        )
    refreshes = _refreshes(setup)
    hold.release.set()
    await sending
    assert setup.auth.order_answers[-1] == "invalid_token"
    # The refused token was the old one: the renewed one is kept, and nothing was renewed again.
    assert get_sign_in(setup.agent.store, setup.company.id) is not None and _says_signed_in(setup)
    assert await setup.signins.access_token(setup.company) == renewed
    assert _refreshes(setup) == refreshes
    # No sign-in to wait for: the approval is due again at once, and goes with the renewed token.
    assert setup.agent.store.get_operation(row).waiting_sign_in is None
    assert "waiting_sign_in" not in [
        e.kind for e in setup.agent.store.events(row)
    ]  # never shown waiting
    done = await setup.agent.wait_for_outcome(row, timeout=20)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert [a.outcome for a in setup.agent.store.attempts(row)] == ["sign_in_required", "performed"]
    orders = [s for s in setup.auth.received if s.path == "/orders"]
    assert orders[-1].headers["authorization"] == f"Bearer {renewed}"
    assert setup.auth.orders_performed == 1


@pytest.mark.parametrize("token_endpoint", ["up", "down"])
async def test_a_first_request_refused_with_a_token_renewed_meanwhile_keeps_the_new_one(
    setup, token_endpoint
):
    """The same race for a request the person or a script makes (Agent._notice_refused_token)."""
    held = await _signed_in(setup)
    hold = setup.auth.hold_next_order = Hold()
    calling = asyncio.create_task(
        setup.agent.call_api(setup.company, "POST", "/orders", {"item": "rain jacket"})
    )
    await hold.arrived()
    renewed = await _renew_now(setup, held)
    if token_endpoint == "down":
        setup.auth.token_status = 503
    refreshes = _refreshes(setup)
    hold.release.set()
    result = await calling
    assert result.challenge is not None and result.challenge.error == "invalid_token"
    assert get_sign_in(setup.agent.store, setup.company.id) is not None and _says_signed_in(setup)
    assert await setup.signins.access_token(setup.company) == renewed
    assert _refreshes(setup) == refreshes
    again = await setup.agent.call_api(setup.company, "POST", "/orders", {"item": "rain jacket"})
    assert again.outcome == "operation"  # the renewed token is taken
    assert [s for s in setup.auth.received if s.path == "/orders"][-1].headers[
        "authorization"
    ] == f"Bearer {renewed}"


async def test_a_token_still_held_when_it_is_refused_is_dropped_and_renewed(setup):
    """The neighbour: nothing renewed the token while the request was out, so the refused token
    is the one held. It is dropped and renewed once; the approval goes with the renewed token.
    (Without a way to renew, the sign-in ends: test_sign_in_across_processes.py,
    test_a_revoked_token_is_cleared_and_a_sign_in_in_another_process_sends_the_approval.)"""
    held = await _signed_in(setup)
    row = await _an_approved_order(setup)
    hold = setup.auth.hold_next_order = Hold()
    sending = asyncio.create_task(setup.agent.dispatch_once())
    await hold.arrived()
    setup.auth.access_tokens.pop(held)  # the Company dropped it (expired early), not the grant
    refreshes = _refreshes(setup)
    hold.release.set()
    await sending
    assert setup.auth.order_answers[-1] == "invalid_token"
    assert _refreshes(setup) == refreshes + 1
    renewed = await setup.signins.access_token(setup.company)
    assert renewed is not None and renewed != held and setup.auth.valid_access(renewed)
    assert _says_signed_in(setup)
    done = await setup.agent.wait_for_outcome(row, timeout=20)
    assert done.status == Status.PERFORMED, done.outcome_detail
    orders = [s for s in setup.auth.received if s.path == "/orders"]
    assert orders[-1].headers["authorization"] == f"Bearer {renewed}"
    assert setup.auth.orders_performed == 1
