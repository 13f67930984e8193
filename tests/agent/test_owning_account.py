"""Which account an account-owned operation belongs to (Ops §3, "Who can approve it": one returned
in a signed-in Session belongs to the account, and may be approved by any Session of the same
agent and User *while signed in to the same account*), against Birch Market, a Company with
accounts written from the spec alone (tests/companies/account_company.py), over real HTTP, with
the agent's real store on disk.

The account the agent is signed in as is what its sign-in named (sign_ins.account, kept by
`save_sign_in` as a finished sign-in keeps it); the access token is the one the test hands the
agent, as its sign-in service would. Birch Market records whose token carried every approval
(`approval_users`), so the tests can say the wrong account's token never carried one."""

from __future__ import annotations

import pytest

from poppy_tui.agent.store import Status
from poppy_tui.agent.store.connection import StateError
from tests.companies.account_company import NAME
from tests.signed_in import SignedIn

ALICE, BOB = "alice@birch.test", "bob@birch.test"


async def setup(make_agent, birch, token: str | None = "tok_alice", account: str | None = ALICE):
    agent = make_agent()
    company = await agent.add_company(birch.base_url)
    signed = SignedIn(agent, company)
    agent.access_token_source = signed
    signed.as_(token, account)
    return agent, company, signed


async def order(agent, company):
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    assert result.outcome == "operation"
    return agent.store.get_operation(result.operation_row)


def approvals_by(birch) -> list[str | None]:
    return list(birch.state.approval_users)


async def test_the_account_signed_in_as_when_the_request_went_is_recorded(make_agent, birch):
    agent, company, _ = await setup(make_agent, birch)
    op = await order(agent, company)
    assert op.account_owned and op.account == ALICE


async def test_an_operation_returned_signed_out_has_no_account(make_agent, birch):
    agent, company, _ = await setup(make_agent, birch, token=None)
    result = await agent.call_api(company, "POST", "/wishlist/share", {})
    op = agent.store.get_operation(result.operation_row)
    assert not op.account_owned and op.account is None


async def test_a_sign_in_that_named_no_account_records_none(make_agent, birch):
    agent, company, _ = await setup(make_agent, birch, account=None)
    op = await order(agent, company)
    assert op.account_owned and op.account is None


async def test_approve_is_refused_while_signed_in_as_another_account(make_agent, birch):
    agent, company, signed = await setup(make_agent, birch)
    op = await order(agent, company)
    signed.as_("tok_bob", BOB)  # signed out, then in again as another account at Birch Market
    with pytest.raises(StateError) as refused:
        agent.approve(op.id, op.current.id)
    line = str(refused.value)
    assert "\n" not in line
    assert f"belongs to your account “{ALICE}” at {NAME}" in line
    assert (
        f"signed in there as “{BOB}”" in line
        and f"sign in to {NAME} as “{ALICE}” to approve it" in line
    )
    assert agent.store.get_operation(op.id).status == Status.PENDING  # nothing recorded
    signed.as_("tok_alice", ALICE)  # back as the owning account: approvable, and it goes
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and approvals_by(birch) == ["alice"]


async def test_the_same_account_spelt_in_another_case_may_approve(make_agent, birch):
    agent, company, signed = await setup(make_agent, birch)
    op = await order(agent, company)
    signed.as_("tok_alice", "  Alice@Birch.TEST ")  # what the person typed this time
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and approvals_by(birch) == ["alice"]


@pytest.mark.parametrize(
    ("recorded", "now"),
    [(None, BOB), (ALICE, None)],
    ids=["operation-account-unknown", "signed-in-account-unknown"],
)
async def test_an_unknown_account_on_either_side_approves_as_before(
    make_agent, birch, recorded, now
):
    agent, company, signed = await setup(make_agent, birch, account=recorded)
    op = await order(agent, company)
    signed.as_("tok_bob", now)
    approved = agent.approve(
        op.id, op.current.id
    )  # not refused: poppy-tui can't tell the accounts apart
    assert approved.status == Status.APPROVED
    await agent.wait_for_outcome(op.id, timeout=20)
    assert approvals_by(birch) == ["bob"]  # sent as today; the Company's own check answers it


async def test_an_approval_waits_while_signed_in_as_another_account_and_goes_as_its_own(
    make_agent, birch
):
    agent, company, signed = await setup(make_agent, birch)
    op = await order(agent, company)
    agent.approve(op.id, op.current.id)  # signed in as its account: allowed
    signed.as_("tok_bob", BOB)  # then, before it is sent, signed in as another account
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.status == Status.SENDING
    assert waiting.waiting_sign_in is not None and waiting.waiting_sign_in.startswith(
        f"waiting for sign-in as “{ALICE}”: poppy-tui is signed in to {NAME} as “{BOB}”"
    )
    assert approvals_by(birch) == [] and "ord_birch_1" not in birch.state.performed
    for _ in range(3):
        assert await agent.dispatch_once() == 0  # still signed in as Bob: nothing goes
    assert approvals_by(birch) == []
    signed.as_("tok_alice", ALICE)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and done.waiting_sign_in is None
    assert approvals_by(birch) == ["alice"] and birch.state.performed["ord_birch_1"] == 1
    assert not any(
        r.get("authorization") == "Bearer tok_bob"
        for r in birch.state.received
        if "poppy-approval" in r
    )
    outcomes = [a.outcome for a in agent.store.attempts(op.id)]
    assert outcomes == ["not_sent", "performed"]


async def test_signed_out_it_waits_and_a_sign_in_as_another_account_does_not_send_it(
    make_agent, birch
):
    agent, company, signed = await setup(make_agent, birch)
    op = await order(agent, company)
    signed.as_(None, None)  # signed out: as today, the request goes, meets a challenge, and waits
    agent.approve(op.id, op.current.id)
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert (
        waiting.waiting_sign_in
        == f"waiting for sign-in: Sign in to {NAME} to continue (scopes orders)"
    )
    signed.as_("tok_bob", BOB)
    for _ in range(3):
        await agent.dispatch_once()
    still = agent.store.get_operation(op.id)
    assert still.status == Status.SENDING and still.waiting_sign_in
    assert "bob" not in approvals_by(birch)
    signed.as_("tok_alice", ALICE)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and approvals_by(birch) == [
        "alice"
    ]  # a 401 before it was read


async def _held_for_bob_then_sent_as_alice(agent, op, signed, birch) -> None:
    """Approved, then signed in as Bob: the approval waits, unsent; signed in as Alice again, it
    goes, carried by Alice's token only."""
    agent.approve(op.id, op.current.id)
    signed.as_("tok_bob", BOB)
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.waiting_sign_in and f"as “{ALICE}”" in waiting.waiting_sign_in
    assert approvals_by(birch) == []
    signed.as_("tok_alice", ALICE)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and approvals_by(birch) == ["alice"]


async def test_an_mcp_approval_waits_for_its_account_too(make_agent, birch):
    agent, company, signed = await setup(make_agent, birch)
    result = await agent.call_tool(company, "place_order", {"kg": 2})
    assert result.outcome == "operation"
    op = agent.store.get_operation(result.operation_row)
    assert op.account == ALICE
    await _held_for_bob_then_sent_as_alice(agent, op, signed, birch)


async def test_a_conversation_approval_waits_for_its_account_too(make_agent, birch):
    agent, company, signed = await setup(make_agent, birch)
    said = await agent.say(company, "order oats please")
    assert said.operation_rows
    op = agent.store.get_operation(said.operation_rows[0])
    assert op.account_owned and op.account == ALICE
    await _held_for_bob_then_sent_as_alice(agent, op, signed, birch)


async def test_a_sign_in_as_another_account_landing_as_the_token_is_read_does_not_carry_it(
    make_agent, birch
):
    """The check as the send starts passes (signed in as Alice); then, while the token is fetched,
    a sign-in as Bob lands (another poppy-tui process, say) and the token handed out is Bob's."""
    agent, company, signed = await setup(make_agent, birch)
    op = await order(agent, company)
    agent.approve(op.id, op.current.id)
    switched = False

    async def token_while_bob_signs_in(_company) -> str | None:
        nonlocal switched
        if not switched:
            switched = True
            signed.as_("tok_bob", BOB)
        return signed.token

    agent.access_token_source = token_while_bob_signs_in
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert switched and waiting.status == Status.SENDING
    assert waiting.waiting_sign_in and f"as “{ALICE}”" in waiting.waiting_sign_in
    assert approvals_by(birch) == [] and not any(
        "poppy-approval" in r for r in birch.state.received
    )
    agent.access_token_source = signed
    signed.as_("tok_alice", ALICE)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and approvals_by(birch) == ["alice"]
