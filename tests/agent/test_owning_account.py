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


async def test_the_same_account_with_its_domain_in_capitals_may_approve(make_agent, birch):
    agent, company, signed = await setup(make_agent, birch)
    op = await order(agent, company)
    signed.as_("tok_alice", "alice@Birch.TEST")  # a domain is compared without ASCII case
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and approvals_by(birch) == ["alice"]


@pytest.mark.parametrize(
    ("owner", "other"),
    [
        ("alice@birch.test", "Alice@birch.test"),  # a local part's case is the mailbox's own
        ("alice@birch.test", " alice@birch.test"),  # a blank is a character like any other
        ("straße@birch.test", "STRASSE@birch.test"),  # one under Unicode case folding
        ("kelvin@birch.test", "\u212aelvin@birch.test"),  # KELVIN SIGN: "k" once folded
        ("alice@birch.test", "alice@birch.\u212aest"),  # not in a domain either: ASCII only
        ("caf\u00e9@birch.test", "cafe\u0301@birch.test"),  # NFC and NFD: no normalisation
        ("ａlice@birch.test", "alice@birch.test"),  # FULLWIDTH a: one under NFKC
        ("alice", "ALICE"),  # not an email address: compared exactly, case and all
    ],
    ids=["local-case", "blank", "sharp-s", "kelvin", "kelvin-domain", "nfd", "fullwidth", "name"],
)
async def test_two_different_names_are_two_accounts_and_one_is_refused_and_never_carries_the_other(
    make_agent, birch, owner, other
):
    """Compared as the Company wrote them (#34 item 6): two strings that differ are two accounts,
    whatever Unicode folding or normalisation would make of them; the approval is refused, naming
    both, and once approved as its own it is never carried by the other's token."""
    agent, company, signed = await setup(make_agent, birch, account=owner)
    op = await order(agent, company)
    signed.as_("tok_bob", other)
    with pytest.raises(StateError, match="signed in there as"):
        agent.approve(op.id, op.current.id)
    signed.as_("tok_alice", owner)
    agent.approve(op.id, op.current.id)
    signed.as_("tok_bob", other)  # before it is sent
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.status == Status.SENDING and waiting.waiting_sign_in
    assert approvals_by(birch) == []


def test_account_names_compare_exactly_but_for_an_email_domains_ascii_case():
    from poppy_tui.safety.account_owner import compare_accounts, same_account

    assert same_account("alice@birch.test", "alice@BIRCH.test")
    assert not same_account("alice@birch.test", "ALICE@birch.test")
    assert not same_account("straße@x.test", "STRASSE@x.test")
    assert not same_account("k@x.test", "\u212a@x.test")
    assert not same_account("a@x.test", "a@x.\u212aest") and not same_account(
        "a@xk.test", "a@x\u212a.test"
    )
    assert same_account("a@b@x.test", "a@b@X.TEST")  # the domain follows the last @
    assert not same_account("A@b@x.test", "a@b@x.test")
    assert compare_accounts("alice@birch.test", "user-8842") == "unknown"  # two kinds of name
    assert compare_accounts(None, "alice@birch.test") == "unknown"
    assert compare_accounts("alice@birch.test", "bob@birch.test") == "other"
    assert compare_accounts("user-1", "user-2") == "other"


async def test_a_sign_in_that_names_no_account_sends_as_before_while_it_is_the_same_sign_in(
    make_agent, birch
):
    """No new sign-in since the request: the very sign-in it came with is its account, named or
    not, so nothing is asked."""
    agent, company, _ = await setup(make_agent, birch, account=None)
    op = await order(agent, company)
    agent.approve(op.id, op.current.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and approvals_by(birch) == ["alice"]


@pytest.mark.parametrize(
    ("recorded", "now"),
    [(None, BOB), (ALICE, None), (None, None), (ALICE, "user-8842")],
    ids=[
        "operation-account-unknown",
        "signed-in-account-unknown",
        "neither-named",
        "names-of-two-kinds",
    ],
)
async def test_a_sign_in_not_shown_to_be_its_account_holds_the_approval_until_the_person_says(
    make_agent, birch, recorded, now
):
    """Signed in again since, and the names don't settle it: approving is allowed, nothing is sent
    (the Company never sees the approval), the one line says why and what to do, and once the
    person says this sign-in is its account (kept in the store) it goes with it."""
    from poppy_tui.safety.account_owner import UNCONFIRMED_WAIT_PREFIX

    agent, company, signed = await setup(make_agent, birch, account=recorded)
    op = await order(agent, company)
    signed.as_("tok_alice", now)  # Alice signs in again; the sign-in names her as `now`
    assert agent.approve(op.id, op.current.id).status == Status.APPROVED
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.status == Status.SENDING and waiting.waiting_sign_in
    assert waiting.waiting_sign_in.startswith(UNCONFIRMED_WAIT_PREFIX)
    assert "can't tell whether it is the same account" in waiting.waiting_sign_in
    if now is not None:
        assert f"“{now}”" in waiting.waiting_sign_in
    if recorded is not None:
        assert f"“{recorded}”" in waiting.waiting_sign_in
    for _ in range(3):
        await agent.dispatch_once()
    assert approvals_by(birch) == [] and not any(
        "poppy-approval" in r for r in birch.state.received
    )
    agent.confirm_account(op.id)
    assert [e.kind for e in agent.store.events(op.id)].count("account_confirmed") == 1
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED
    assert approvals_by(birch) == ["alice"]  # the person's word: this sign-in is its account


async def test_another_person_signed_in_unnamed_never_carries_it_and_the_owner_is_asked_again(
    make_agent, birch
):
    """The Device Sign-In case (#33): the owner's sign-in named no account; they sign out and
    someone else signs in (named neither): the owner's approval is held, not spent on the other
    person's token; the owner signs in again (a new sign-in, so asked again), says it is theirs,
    and it goes with their token."""
    agent, company, signed = await setup(make_agent, birch, account=None)
    op = await order(agent, company)
    agent.approve(op.id, op.current.id)
    signed.as_(None, None)
    signed.as_("tok_bob", None)
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.status == Status.SENDING and waiting.waiting_sign_in
    assert approvals_by(birch) == []
    signed.as_("tok_alice", None)
    for _ in range(2):
        await agent.dispatch_once()
    assert approvals_by(birch) == []  # a new sign-in: not shown to be hers either
    agent.confirm_account(op.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and approvals_by(birch) == ["alice"]


async def test_a_held_approval_is_explained_as_held_not_as_on_its_way(make_agent, birch):
    """Through the lifecycle's sending path (agent/sending/), the hold takes effect and
    Agent.explain (the words of `show`'s "Where it stands:") says the approval is not on its way,
    with the hold's own line; once the person vouches for the sign-in it goes."""
    from poppy_tui.agent.lifecycle import Why
    from poppy_tui.safety.account_owner import UNCONFIRMED_WAIT_PREFIX

    agent, company, signed = await setup(make_agent, birch, account=None)
    op = await order(agent, company)
    agent.approve(op.id, op.current.id)
    signed.as_(None, None)
    signed.as_("tok_bob", None)  # someone else's sign-in, that names no account
    before = agent.explain(op.id)  # before any pass: not "being sent now"
    assert not before.on_its_way and before.why == Why.SIGN_IN
    assert UNCONFIRMED_WAIT_PREFIX in before.sentence()
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.status == Status.SENDING and waiting.waiting_sign_in
    await agent.dispatch_once()
    said = agent.explain(op.id)
    assert not said.on_its_way and said.why == Why.SIGN_IN
    assert UNCONFIRMED_WAIT_PREFIX in said.sentence()
    assert approvals_by(birch) == []
    signed.as_("tok_alice", None)  # the owner signs in again (named neither): asked again
    await agent.dispatch_once()
    assert not agent.explain(op.id).on_its_way and approvals_by(birch) == []
    agent.confirm_account(op.id)
    done = await agent.wait_for_outcome(op.id, timeout=20)
    assert done.status == Status.PERFORMED and approvals_by(birch) == ["alice"]
    assert agent.explain(op.id).why == Why.PERFORMED


async def test_the_persons_word_is_for_that_sign_in_only_and_survives_a_restart(
    make_agent, birch, tmp_path
):
    agent, company, signed = await setup(make_agent, birch, account=None)
    op = await order(agent, company)
    signed.as_("tok_bob", None)
    agent.confirm_account(op.id)
    again = make_agent()  # another Agent on the same store on disk (as after a restart)
    assert again.store.account_standing(again.store.get_operation(op.id)).standing == "same"
    signed.as_("tok_bob", None)  # a new sign-in: the word was for the one before
    assert agent.store.account_standing(agent.store.get_operation(op.id)).standing == "unconfirmed"
    with pytest.raises(KeyError):
        agent.store.confirm_account(99999)
    # A named account can't be vouched for as another named one: it stays another.
    agent2, company2, signed2 = await setup(make_agent, birch)
    op2 = await order(agent2, company2)
    signed2.as_("tok_bob", BOB)
    with pytest.raises(StateError, match="another account"):
        agent2.confirm_account(op2.id)


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
