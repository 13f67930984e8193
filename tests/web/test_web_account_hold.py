"""The page's review says what the TUI's says of the sign-in's account (Ops 3): an approval held
because the sign-in can't be shown to be the operation's account reads HELD with the hold's own
line and a warning among the findings; signed in as another named account, the wait names both
accounts and, while it waits for a decision, a DANGER says so. Against the Birch test Company
(written from the spec), through the real Agent and the page's own review (web/views.py)."""

from __future__ import annotations

from poppy_tui.agent import clock
from poppy_tui.agent.store import Status
from poppy_tui.safety.account_owner import UNCONFIRMED_WAIT_PREFIX
from poppy_tui.web.views import review
from tests.agent.conftest import make_agent, paths  # noqa: F401 (fixtures)
from tests.keyring_support import memory_keyring  # noqa: F401 (the autouse in-memory keyring)
from tests.companies.account_company import NAME
from tests.signed_in import SignedIn

ALICE, BOB = "alice@birch.test", "bob@birch.test"


async def signed_in(make_agent, birch, token, account):  # noqa: F811
    agent = make_agent()
    company = await agent.add_company(birch.base_url)
    signed = SignedIn(agent, company)
    agent.access_token_source = signed
    signed.as_(token, account)
    return agent, company, signed


async def ordered(agent, company):
    result = await agent.call_api(company, "POST", "/orders", {"oats": 2})
    assert result.outcome == "operation"
    return agent.store.get_operation(result.operation_row)


def page_review(agent, row):
    return review(agent, row, clock.now_utc(), shown_revision_id=None, arming_left=0.0)


async def test_a_sign_in_not_shown_to_be_its_account_reads_held_on_the_page(make_agent, birch):  # noqa: F811
    agent, company, signed = await signed_in(make_agent, birch, "tok_alice", None)
    op = await ordered(agent, company)
    agent.approve(op.id, op.current.id)
    signed.as_(None, None)
    signed.as_("tok_bob", None)  # someone else's sign-in, naming no account
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert waiting.status == Status.SENDING and waiting.waiting_sign_in
    page = page_review(agent, op.id)
    assert page.banner_head.startswith("HELD — is this sign-in the account it belongs to?")
    assert "u: it is" not in page.banner_head  # the TUI's keys are not the page's controls
    assert page.banner_meaning and "whose sign-in this is" in page.banner_meaning
    assert UNCONFIRMED_WAIT_PREFIX in agent.explain(op.id).sentence()
    assert any(f.severity == "warning" and NAME in str(f.message) for f in page.findings), [
        str(f.message) for f in page.findings
    ]
    assert list(birch.state.approval_users) == []  # nothing went with bob's token


async def test_signed_in_as_another_account_the_page_names_both(make_agent, birch):  # noqa: F811
    agent, company, signed = await signed_in(make_agent, birch, "tok_alice", ALICE)
    op = await ordered(agent, company)
    signed.as_("tok_bob", BOB)
    page = page_review(agent, op.id)  # waiting for a decision: a DANGER, naming both
    dangers = [str(f.message) for f in page.findings if f.severity == "danger"]
    assert any(ALICE in said and BOB in said for said in dangers), dangers
    assert page.blocked is not None and ALICE in page.blocked[0] and BOB in page.blocked[0]
