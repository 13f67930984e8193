"""A 401 invalid_token refuses the token the request carried (RFC 6750 3.1), not the one the agent
holds when the answer arrives: a token renewed while the request was out is a sign-in that
already happened, and the approval goes again with it at once (Ops 3), over the API, MCP and a conversation (in a new message, spec 8.3).

Against Birch Market (tests/companies/account_company.py, written from the spec alone), which
holds the approval's request before it checks its token until the test has renewed the token.
The token source is the test's own (`Tokens`), as an embedding program's would be: what is
tested here is which sign-in the approval waits for; tests/signin/test_token_renewed_in_flight.py
has the agent's own sign-in, whose refused token is dropped."""

from __future__ import annotations

import asyncio

import pytest

from poppy_tui.agent.store import Status
from tests.signed_in import Tokens
from tests.companies.hold import Hold


ORDERS = ("poppy:read", "orders")


async def _an_order(agent, company, interface: str) -> int:
    if interface == "conversation":
        said = await agent.say(company, "Please order 2 kg of oats")
        (row,) = said.operation_rows
        return row
    if interface == "api":
        result = await agent.call_api(company, "POST", "/orders", {"kg": 2})
    else:
        result = await agent.call_tool(company, "place_order", {"kg": 2})
    assert result.outcome == "operation", result.detail
    return result.operation_row


def _approvals(birch, interface: str) -> list[dict]:
    """The headers of every request that could carry the approval (API header, MCP, a message)."""
    seen = birch.state.received
    if interface == "api":
        return [r for r in seen if r.get("poppy-approval")]
    return [r for r in seen if r["path"] == "/mcp" or r["path"].endswith("/messages")]


@pytest.mark.parametrize("interface", ["api", "mcp", "conversation"])
async def test_an_approval_refused_with_a_token_renewed_meanwhile_goes_again_with_the_new_one(
    make_agent, birch, interface
):
    agent = make_agent()
    tokens = Tokens("tok_alice")
    agent.access_token_source = tokens
    company = await agent.add_company(birch.base_url)
    row = await _an_order(agent, company, interface)
    op = agent.store.get_operation(row)
    assert op.account_owned
    hold = birch.state.hold_next_approval = Hold()
    agent.approve(op.id, op.current.id)
    sending = asyncio.create_task(agent.dispatch_once())
    await hold.arrived()
    # While the approval is out, the token is renewed: the Company takes the new one only.
    birch.state.tokens["tok_alice_2"] = ("alice", ORDERS)
    del birch.state.tokens["tok_alice"]
    tokens.token = "tok_alice_2"
    hold.release.set()
    await sending
    first = agent.store.attempts(op.id)
    assert [a.outcome for a in first] == ["sign_in_required"]
    # Not waiting for a sign-in that already happened, never shown waiting: due again at once.
    assert agent.store.get_operation(op.id).waiting_sign_in is None
    assert "waiting_sign_in" not in [e.kind for e in agent.store.events(op.id)]
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED, done.outcome_detail
    assert [a.outcome for a in agent.store.attempts(op.id)] == ["sign_in_required", "performed"]
    assert birch.state.performed["ord_birch_1"] == 1
    assert _approvals(birch, interface)[-1]["authorization"] == "Bearer tok_alice_2"


@pytest.mark.parametrize("interface", ["api", "mcp", "conversation"])
async def test_an_approval_refused_with_the_token_still_held_waits_for_sign_in(
    make_agent, birch, interface
):
    """The neighbour: nothing renewed the token while the request was out. The approval waits
    for a new sign-in, and is not resent with the token the Company refused."""
    agent = make_agent()
    tokens = Tokens("tok_alice")
    agent.access_token_source = tokens
    company = await agent.add_company(birch.base_url)
    row = await _an_order(agent, company, interface)
    op = agent.store.get_operation(row)
    hold = birch.state.hold_next_approval = Hold()
    agent.approve(op.id, op.current.id)
    sending = asyncio.create_task(agent.dispatch_once())
    await hold.arrived()
    del birch.state.tokens["tok_alice"]  # the Company no longer takes it (revoked)
    hold.release.set()
    await sending
    for _ in range(3):
        await agent.dispatch_once()
    waiting = agent.store.get_operation(op.id)
    assert waiting.status == Status.SENDING and waiting.waiting_sign_in
    assert len(agent.store.attempts(op.id)) == 1
    birch.state.tokens["tok_alice_2"] = ("alice", ORDERS)
    tokens.token = "tok_alice_2"  # signed in again
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and birch.state.performed["ord_birch_1"] == 1


async def test_send_without_watch_delivers_an_approval_refused_with_a_token_renewed_meanwhile(
    make_agent, birch
):
    """`poppy-tui send` (headless.send_approved) stops at approvals waiting for sign-in; one whose
    refused token was already renewed is not one of them: it is delivered in the same run."""
    from poppy_tui.agent.headless import send_approved, waiting_for_sign_in

    agent = make_agent()
    tokens = Tokens("tok_alice")
    agent.access_token_source = tokens
    company = await agent.add_company(birch.base_url)
    op = agent.store.get_operation(await _an_order(agent, company, "api"))
    hold = birch.state.hold_next_approval = Hold()
    agent.approve(op.id, op.current.id)
    sending = asyncio.create_task(send_approved(agent))
    await hold.arrived()
    birch.state.tokens["tok_alice_2"] = ("alice", ORDERS)
    del birch.state.tokens["tok_alice"]
    tokens.token = "tok_alice_2"
    hold.release.set()
    settled = await asyncio.wait_for(sending, 30)
    assert [(r.id, r.status) for r in settled] == [(op.id, Status.PERFORMED)]
    assert waiting_for_sign_in(agent.store) == [] and birch.state.performed["ord_birch_1"] == 1
