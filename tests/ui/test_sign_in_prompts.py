"""The TUI turns a sign-in challenge into "Sign in to <Company> to continue (scopes ...)" and one
key that signs in, then sends again; against Birch Market (a spec-only Company with accounts)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from textual.widgets import Static

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.composer import ComposerScreen
from poppy_tui.ui.screens.review import ReviewScreen
from poppy_tui.ui.screens.signin import SignInScreen
from tests.companies.account_company import NAME
from tests.signed_in import Tokens
from tests.ui.test_company_flows import pick_action
from tests.ui.ui_sample import record_notifications, review_shown, screen_up, started, wait_for

SIZE = (120, 36)
CONFIG = Config(
    grace_seconds=0.0, arm_delay_seconds=0.2, request_timeout_seconds=5.0, retry_window_seconds=20.0
)


@pytest.fixture
def agent(tmp_path):
    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    made = Agent.open(
        paths, replace(CONFIG), key=ec.generate_private_key(ec.SECP256R1()), reply_wait_seconds=3.0
    )
    made.access_token_source = Tokens()
    yield made
    made.store.close()


async def test_composer_challenge_then_one_key_signs_in_and_sends_again(agent, birch):
    await agent.add_company(birch.base_url)
    app = PoppyApp(agent, initial_screen="compose")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ComposerScreen)
        await wait_for(pilot, lambda: bool(screen.actions))
        label = next(a.label for a in screen.actions if "/orders" in a.label)
        await pick_action(pilot, screen, label)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: screen.awaiting_sign_in is not None)
        shown = str(screen.query_one("#composer-result", Static).render())
        assert f"Sign in to {NAME} to continue (scopes orders)" in shown and "Ctrl+G" in shown
        await pilot.press("ctrl+g")
        await screen_up(pilot, SignInScreen)
        agent.access_token_source.token = "tok_alice"  # the person completes the sign-in
        app.screen.dismiss(True)
        await screen_up(pilot, ReviewScreen)
        op = agent.store.get_operation(app.screen.operation_row)
        assert op.account_owned and op.status == Status.PENDING
        sent = [r for r in birch.state.received if r["path"] == "/orders"]
        assert "authorization" not in sent[0] and sent[-1]["authorization"] == "Bearer tok_alice"


async def test_review_offers_sign_in_for_an_approval_waiting_for_it(agent, birch):
    company = await agent.add_company(birch.base_url)
    agent.access_token_source.token = "tok_alice"
    result = await agent.call_api(company, "POST", "/orders", {})
    op = agent.store.get_operation(result.operation_row)
    agent.access_token_source.token = None  # signed out since
    agent.approve(op.id, op.current.id)
    waiting = await agent.wait_for_outcome(op.id, timeout=5)
    assert waiting.waiting_sign_in
    app = PoppyApp(agent, initial_screen="inbox")
    async with app.run_test(size=SIZE) as pilot:
        # The inbox says it waits for the person, not that it is on its way.
        progress = app.screen.query_one("#progress-table")
        await wait_for(pilot, lambda: str(op.id) in progress.items)
        status = progress.get_cell(str(op.id), "status").plain
        assert status == "waiting for sign-in", status
        from poppy_tui.cli.output import row_json, row_line, show_text

        row = next(r for r in agent.store.list_operations([Status.SENDING]) if r.id == op.id)
        assert row_json(row)["waiting_sign_in"] and row_json(row)["status"] == "sending"
        # `pending` and `show` say what it waits for, and never that it is on its way.
        assert "waiting for sign-in" in row_line(row) and "sending" not in row_line(row)
        shown = show_text(agent.store, agent.store.get_operation(op.id))
        assert "Status: waiting for sign-in: approved; waiting for you to sign in" in shown
        assert "being sent" not in shown and "not_performed" not in shown
        assert (
            "1: started" in shown
            and "the Company asked for sign-in first; nothing was performed, HTTP 401" in shown
        )
        app.open_review(op.id)
        await review_shown(pilot)  # the load over: the banner is drawn after the record is set
        review = app.screen
        assert review.check_action("sign_in", ()) is True
        banner = str(review.query_one("#outcome").render())
        assert (
            "WAITING FOR SIGN-IN" in banner
            and f"Sign in to {NAME} to continue (scopes orders)" in banner
        )
        assert "Your approval is being sent" not in banner
        assert "kept until the terms expire" in banner
        assert banner.count(f"Sign in to {NAME} to continue") == 1  # said once (walk K7)
        assert len(banner.splitlines()) == 2
        attempts = str(review.query_one("#progress").render())
        assert "asked for sign-in" in attempts and "not_performed" not in attempts
        await pilot.press("s")
        await screen_up(pilot, SignInScreen)
        agent.access_token_source.token = "tok_alice"
        app.screen.dismiss(True)
        await wait_for(
            pilot, lambda: agent.store.get_operation(op.id).status == Status.PERFORMED, timeout=20
        )
        assert birch.state.performed["ord_birch_1"] == 1


async def test_talk_shows_an_authorization_event_and_offers_sign_in(agent, birch):
    from textual.widgets import Select

    from poppy_tui.ui.screens.conversation import ConversationScreen

    company = await agent.add_company(birch.base_url)
    app = PoppyApp(agent, initial_screen="talk")
    notes = record_notifications(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationScreen)
        await started(pilot)
        screen.query_one("#talk-company", Select).value = company.id
        await wait_for(
            pilot, lambda: screen.company is not None and screen.company.id == company.id
        )
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "talk-input")
        await pilot.press(*"order oats", "enter")
        await wait_for(pilot, lambda: screen.awaiting_sign_in is not None, timeout=15)
        messages = list(notes)
        assert any(
            f"Sign in to {NAME} to continue (scopes orders)" in m and "Ctrl+G" in m
            for m in messages
        )
        assert screen.check_action("sign_in_and_resend", ()) is True
        await pilot.press("ctrl+g")
        await screen_up(pilot, SignInScreen)


class RecordingApp(PoppyApp):
    """PoppyApp keeping every toast it shows (through notify, Textual's public API)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.toasts: list[tuple[str, str]] = []

    def notify(self, message, *args, **kwargs):  # type: ignore[override]
        self.toasts.append((str(message), str(kwargs.get("severity", "information"))))
        return super().notify(message, *args, **kwargs)


async def test_an_approval_that_starts_waiting_for_sign_in_is_announced(agent, birch):
    """The person is told where they are that the Company wants them signed in before anything is
    sent: the approval is not on its way until they act."""
    company = await agent.add_company(birch.base_url)
    agent.access_token_source.token = "tok_alice"
    result = await agent.call_api(company, "POST", "/orders", {})
    op = agent.store.get_operation(result.operation_row)
    agent.access_token_source.token = None  # signed out since
    app = RecordingApp(agent, initial_screen="inbox")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: app.screen.query("#progress-table"))
        agent.approve(op.id, op.current.id)  # as the review does; the app's dispatcher sends it
        await wait_for(
            pilot, lambda: any("Waiting for sign-in" in m for m, _ in app.toasts), timeout=15
        )
        ((message, severity),) = [t for t in app.toasts if "Waiting for sign-in" in t[0]]
        assert f"{NAME} asked you to sign in before it does this" in message
        assert "kept until the terms expire" in message and severity == "warning"
        assert not any(m.startswith(("Not performed", "Outcome unknown")) for m, _ in app.toasts)
