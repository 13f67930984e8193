"""The review screen names the account an account-owned operation belongs to, and while poppy-tui
is signed in at its Company as another account, holds Approve with one line naming both (Ops §3,
"while signed in to the same account"). Against Birch Market (tests/companies/account_company.py,
written from the spec), with the real Agent, store and dispatcher."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from textual.widgets import Static

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status
from poppy_tui.safety.account_owner import (
    OTHER_ACCOUNT_CODE,
    UNCONFIRMED_CODE,
    UNCONFIRMED_WAIT_PREFIX,
)
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen
from poppy_tui.ui.screens.review import ReviewScreen
from poppy_tui.ui.screens.signin import SignInScreen
from tests.companies.account_company import NAME
from tests.signed_in import SignedIn
from tests.ui.ui_sample import record_notifications, review_shown, screen_up, wait_for

SIZE = (120, 36)
CONFIG = Config(
    grace_seconds=0.0, arm_delay_seconds=0.2, request_timeout_seconds=5.0, retry_window_seconds=20.0
)
ALICE, BOB = "alice@birch.test", "bob@birch.test"
# What a hostile Company could put in an account name: a screen-clearing escape and a bidi override.
HOSTILE = "mallory\x1b[2J\u202e@birch.test"


@pytest.fixture
def agent(tmp_path):
    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    made = Agent.open(
        paths, replace(CONFIG), key=ec.generate_private_key(ec.SECP256R1()), reply_wait_seconds=3.0
    )
    made.access_token_source = SignedIn(made)
    yield made
    made.store.close()


async def ordered_as(agent, birch, token: str, account: str):
    signed = agent.access_token_source
    signed.company = await agent.add_company(birch.base_url)
    signed.as_(token, account)
    result = await agent.call_api(signed.company, "POST", "/orders", {})
    return agent.store.get_operation(result.operation_row), signed


def operation_line(screen) -> str:
    return str(screen.query_one("#operation-line", Static).render())


async def _review(app, pilot, op_row: int) -> ReviewScreen:
    """The review of operation `op_row`, once its load is over (its record is set before the
    banner and the findings are drawn from it)."""
    app.open_review(op_row)
    await review_shown(pilot)
    return app.screen


async def test_review_names_the_account_and_holds_approve_while_signed_in_as_another(agent, birch):
    op, signed = await ordered_as(agent, birch, "tok_alice", ALICE)
    signed.as_("tok_bob", BOB)
    app = PoppyApp(agent)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        review = await _review(app, pilot, op.id)
        await wait_for(
            pilot, lambda: f"belongs to your account “{ALICE}”" in operation_line(review)
        )
        await wait_for(pilot, lambda: review.arming_left() == 0)
        why = review.approve_blocker()
        assert why is not None and f"“{ALICE}”" in why and f"signed in there as “{BOB}”" in why
        assert f"sign in to {NAME} as “{ALICE}” to approve it" in why
        assert (
            review.findings[0].code == OTHER_ACCOUNT_CODE
            and review.findings[0].severity == "danger"
        )
        await pilot.press("a")
        await wait_for(
            pilot, lambda: any(n.startswith("Not yet: this operation belongs") for n in notes)
        )
        assert not isinstance(app.screen, ConfirmApproveScreen)
        assert agent.store.get_operation(op.id).status == Status.PENDING
        assert review.check_action("sign_in", ()) is True  # `s` signs in, here as well
        await pilot.press("s")
        await screen_up(pilot, SignInScreen)
        signed.as_("tok_alice", ALICE)  # the person signs in as the owning account: the hold lifts
        app.screen.dismiss(True)
        await wait_for(pilot, lambda: app.screen is review)
        await wait_for(pilot, review.can_approve)
        assert not any(f.code == OTHER_ACCOUNT_CODE for f in review.findings)
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen)
        await pilot.press("y")
        await wait_for(
            pilot, lambda: agent.store.get_operation(op.id).status == Status.PERFORMED, timeout=20
        )
    assert birch.state.approval_users == ["alice"]


async def test_review_of_an_operation_whose_account_is_unknown_asks_whose_sign_in_it_is(
    agent, birch
):
    """Device Sign-In (walk C9, #33): the sign-in named no account. The header says so in one
    short line that tells the person what to do; once signed in again (a sign-in poppy-tui can't
    show to be that account), approving works but nothing goes until the person says, with `u`,
    that this sign-in is the account; then it goes with its token. At 80x24, the real Agent."""
    op, signed = await ordered_as(agent, birch, "tok_alice", None)
    signed.as_("tok_alice", None)  # signed out and in again, a sign-in that names no account
    app = PoppyApp(agent)
    notes = record_notifications(app)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        review = await _review(app, pilot, op.id)
        line = "belongs to your account (name unknown: approve only while signed in as it)"
        await wait_for(pilot, lambda: line in operation_line(review))
        header = review.query_one("#operation-line", Static)
        assert header.size.height == operation_line(review).count("\n") + 1  # one line each
        assert "which account is not known" not in operation_line(review)
        await wait_for(pilot, review.can_approve)
        [held] = [f for f in review.findings if f.code == UNCONFIRMED_CODE]
        assert held.severity == "warning" and "can't tell whether it is the same account" in (
            held.message
        )
        assert review.check_action("confirm_account", ()) is True
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen)
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: (agent.store.get_operation(op.id).waiting_sign_in or "").startswith(
                UNCONFIRMED_WAIT_PREFIX
            ),
            timeout=15,
        )
        await wait_for(
            pilot, lambda: "HELD — is this sign-in the account" in str(banner_of(review))
        )
        assert birch.state.approval_users == []  # nothing went
        await pilot.press("u")
        await wait_for(pilot, lambda: any(n.startswith("Recorded: this sign-in") for n in notes))
        await wait_for(
            pilot, lambda: agent.store.get_operation(op.id).status == Status.PERFORMED, timeout=20
        )
        assert review.check_action("confirm_account", ()) is False
    assert birch.state.approval_users == ["alice"]
    assert "account_confirmed" in [e.kind for e in agent.store.events(op.id)]


def banner_of(review) -> str:
    return str(review.query_one("#outcome").render())


async def test_the_banner_names_both_accounts_when_signed_in_as_another_after_a_sign_in_challenge(
    agent, birch
):
    """#37 item 7: an approval waiting for the Company's sign-in challenge, then signed in as
    another account: the banner says so, naming both, not "sign in to continue"."""
    op, signed = await ordered_as(agent, birch, "tok_alice", ALICE)
    signed.token = None  # signed out (the sign-in row stays as it was: the Company asks)
    from poppy_tui.agent.store.sign_ins import delete_sign_in

    delete_sign_in(agent.store, signed.company.id)
    agent.approve(op.id, op.current.id)
    waiting = await agent.wait_for_outcome(op.id, timeout=10)
    assert "to continue" in (waiting.waiting_sign_in or "")
    signed.as_("tok_bob", BOB)
    app = PoppyApp(agent)
    async with app.run_test(size=(80, 24)) as pilot:
        review = await _review(app, pilot, op.id)
        await wait_for(pilot, lambda: "WAITING FOR SIGN-IN" in banner_of(review))
        shown = banner_of(review).replace("\n", " ")
        assert f"as “{ALICE}”" in shown and f"as “{BOB}”" in shown
        assert "to continue" not in shown
    assert birch.state.approval_users == []


async def test_a_hostile_account_name_is_shown_neutralised(agent, birch):
    op, signed = await ordered_as(agent, birch, "tok_alice", HOSTILE)
    signed.as_("tok_bob", BOB)
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        review = await _review(app, pilot, op.id)
        await wait_for(pilot, lambda: "belongs to your account" in operation_line(review))
        shown = (
            operation_line(review) + (review.approve_blocker() or "") + review.findings[0].message
        )
        assert "\x1b" not in shown and "\u202e" not in shown
        assert "mallory\\x1b[2J⟨U+202E⟩@birch.test" in operation_line(review)
    from poppy_tui.cli.output import show_text

    text = show_text(agent.store, agent.store.get_operation(op.id))
    assert (
        "\x1b" not in text and "\u202e" not in text and "mallory\\x1b[2J⟨U+202E⟩@birch.test" in text
    )


async def test_an_approval_held_for_its_account_is_announced_as_held_not_as_asked_by_the_company(
    agent, birch
):
    from tests.ui.test_sign_in_prompts import RecordingApp

    op, signed = await ordered_as(agent, birch, "tok_alice", ALICE)
    app = RecordingApp(agent, initial_screen="inbox")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: app.screen.query("#progress-table"))
        agent.approve(op.id, op.current.id)  # as the review does, signed in as its account
        signed.as_(
            "tok_bob", BOB
        )  # then signed in as another, before the app's dispatcher sends it
        await wait_for(
            pilot,
            lambda: any(m.startswith("Not sent, waiting for sign-in as") for m, _ in app.toasts),
            timeout=15,
        )
        ((message, severity),) = [t for t in app.toasts if t[0].startswith("Not sent")]
        assert f"“{ALICE}”" in message and f"“{BOB}”" in message and severity == "warning"
        assert "asked you to sign in" not in message
        app.open_review(op.id)
        await review_shown(pilot)
        banner = str(app.screen.query_one("#outcome").render())
        assert (
            f"WAITING FOR SIGN-IN as “{ALICE}”" in banner
            and "Your approval is being sent" not in banner
        )
        assert "waiting for sign-in" not in banner  # said once, in the head
    assert birch.state.approval_users == []


def test_a_held_approval_for_the_persons_word_is_announced_as_such():
    """The toast for an approval held because the sign-in can't be shown to be its account says
    what to press, not that the Company asked for sign-in."""
    from types import SimpleNamespace

    from poppy_tui.safety.account_owner import UNCONFIRMED_WAIT_PREFIX
    from poppy_tui.ui.outcome_toasts import waiting_toast

    row = SimpleNamespace(
        id=7,
        company_name=NAME,
        summary="Order 2 kg of oats",
        waiting_sign_in=f"{UNCONFIRMED_WAIT_PREFIX}: this operation belongs to …",
    )
    toast = waiting_toast(row)
    assert toast.message.startswith(f"Not sent: {NAME} — is this sign-in the account")
    assert "press u" in toast.message and "asked you to sign in" not in toast.message
