"""A sign-in the Company asked for in a conversation, after the call that met it has returned: the
demo's Mediated path, where the fitting move needs `bookings` (Mediated Sign-In doesn't grant it).
The inbox says a message waits for more access and Ctrl+G signs in and says it again; Talk offers
Ctrl+G on the conversation already on screen, not only after the message is typed again. With the
real Agent, the demo Company with accounts, and Device Sign-In confirmed as a browser would."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from textual.widgets import Static

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status
from poppy_tui.cli.demo import demo_config
from poppy_tui.demo.accounts.service import AccountsOptions
from poppy_tui.demo.accounts.users import DEMO_ONE_TIME_CODE, DEMO_PASSWORD, DEMO_USERNAME
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.conversation import ConversationScreen
from poppy_tui.ui.screens.signin import SignInScreen
from tests.ui.ui_sample import screen_up, wait_for

FITTING = "Could you move my fitting appointment to tomorrow at 2pm?"
SIZES = [(80, 24), (160, 48)]


@pytest.fixture
def shop(start):
    """The demo Company with accounts."""
    return start(accounts=AccountsOptions())


@pytest.fixture
async def mediated(tmp_path, shop):
    """The demo's no-browser path: signed in with Mediated Sign-In, then the fitting move asked."""
    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    agent = Agent.open(
        paths, replace(demo_config(Config()), grace_seconds=0.0, arm_delay_seconds=0.0)
    )
    company = await agent.add_company(shop.base_url)
    flow = await agent.signins.begin(company, "mediated")
    try:
        await flow.submit({"username": DEMO_USERNAME, "password": DEMO_PASSWORD})
        await flow.submit_code(DEMO_ONE_TIME_CODE)
    finally:
        await flow.aclose()
    said = await agent.say(company, FITTING, origin="demo")
    assert said.challenge is not None and "bookings" in said.challenge.scopes
    assert not said.operation_rows
    yield agent, company
    await agent.aclose()


def _footer_keys(app) -> set[str]:
    return {
        binding.key
        for (_, binding, enabled, _) in app.screen.active_bindings.values()
        if binding.show and enabled
    }


async def _confirm_device_in_a_browser(pilot, app) -> None:
    """Device Sign-In in the dialog, confirmed on the demo Company's page as the demo user."""
    dialog = await screen_up(pilot, SignInScreen)
    await wait_for(pilot, lambda: bool(dialog.offered))
    if not dialog.query("#sign-in-code"):
        await pilot.press("d")
    await wait_for(
        pilot,
        lambda: (
            bool(dialog.query("#sign-in-code"))
            and dialog.flow is not None
            and bool(getattr(dialog.flow, "user_code", ""))
        ),
        timeout=15,
    )
    link = dialog.flow.link
    code = parse_qs(urlsplit(link).query)["user_code"][0]
    async with httpx.AsyncClient(trust_env=False) as browser:
        answer = await browser.post(
            link.split("?")[0],
            data={
                "user_code": code,
                "username": DEMO_USERNAME,
                "password": DEMO_PASSWORD,
                "decision": "allow",
            },
        )
        assert answer.status_code == 200
    await wait_for(pilot, lambda: not isinstance(app.screen, SignInScreen), timeout=20)


@pytest.mark.parametrize("size", SIZES)
async def test_the_inbox_says_a_message_waits_for_more_access_and_ctrl_g_asks_again(mediated, size):
    agent, company = mediated
    app = PoppyApp(agent)
    async with app.run_test(size=size) as pilot:
        notice = app.screen.query_one("#inbox-notice", Static)
        await wait_for(pilot, lambda: notice.display, describe=lambda: str(notice.render()))
        text = str(notice.render())
        assert "bookings" in text and FITTING[:30] in text and "Ctrl+G" in text
        assert notice.region.bottom <= size[1] and notice.region.height > 0
        assert "ctrl+g" in _footer_keys(app)
        await pilot.press("ctrl+g")
        await _confirm_device_in_a_browser(pilot, app)
        # Said again once signed in: the fitting move is an operation waiting for the person.
        await wait_for(
            pilot,
            lambda: any(
                r.interface == "conversation" for r in agent.store.list_operations([Status.PENDING])
            ),
            timeout=20,
        )
        await wait_for(pilot, lambda: not notice.display, describe=lambda: str(notice.render()))
    assert agent.signins.covers(company, ["bookings"])


async def test_talk_offers_ctrl_g_on_the_challenge_already_in_the_conversation(mediated):
    agent, company = mediated
    app = PoppyApp(agent, initial_screen="talk")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationScreen)
        await wait_for(
            pilot, lambda: screen.company is not None and screen.conversation_row is not None
        )
        await wait_for(pilot, lambda: bool(screen.query(".talk-sign-in")))
        note = str(screen.query_one(".talk-sign-in", Static).render())
        assert "bookings" in note and "Ctrl+G" in note
        assert screen.awaiting_sign_in is not None and screen.awaiting_sign_in[1] == FITTING
        assert screen.check_action("sign_in_and_resend", ()) is True
        await pilot.press("ctrl+g")
        await _confirm_device_in_a_browser(pilot, app)
        await wait_for(
            pilot,
            lambda: any(
                r.interface == "conversation" for r in agent.store.list_operations([Status.PENDING])
            ),
            timeout=20,
        )
        # The note is rebuilt when the conversation is shown again after sign-in: between the two
        # it may be missing for a moment, which is not yet what is waited for (query, not query_one).
        await wait_for(
            pilot,
            lambda: any(
                "Signed in since" in str(note.render())
                for note in screen.query(".talk-sign-in").results(Static)
            ),
        )
        assert screen.awaiting_sign_in is None


@pytest.fixture
async def signed_out(tmp_path, shop):
    """The demo after its sign-in failed: the Company added, nobody signed in."""
    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    agent = Agent.open(
        paths, replace(demo_config(Config()), grace_seconds=0.0, arm_delay_seconds=0.0)
    )
    company = await agent.add_company(shop.base_url)
    yield agent, company
    await agent.aclose()


@pytest.mark.parametrize("size", SIZES)
async def test_the_demos_failed_sign_in_is_said_in_the_inbox_with_the_key_that_signs_in(
    signed_out, size
):
    from poppy_tui.cli.demo import SeedReport, demo_notice

    agent, company = signed_out
    report = SeedReport(
        company.id, "the code for Manzanita Outfitters expired before sign-in was confirmed"
    )
    app = PoppyApp(agent, notice=demo_notice(report, 0), demo=True)
    async with app.run_test(size=size) as pilot:
        notice = app.screen.query_one("#inbox-notice", Static)
        await wait_for(pilot, lambda: notice.display)
        text = str(notice.render())
        assert "The demo's sign-in failed: the code for Manzanita Outfitters expired" in text
        assert "nothing waits here" in text and "Ctrl+G: sign in" in text and "x: dismiss" in text
        assert notice.region.bottom <= size[1] and {"ctrl+g", "x"} <= _footer_keys(app)
        await pilot.press("ctrl+g")
        await _confirm_device_in_a_browser(pilot, app)
        await wait_for(
            pilot, lambda: "Signed in. The demo's requests went out before" in str(notice.render())
        )
        assert "ctrl+g" not in _footer_keys(app)
        # Once an operation arrives the inbox speaks for itself: the notice goes.
        result = await agent.call_api(
            company,
            "POST",
            "/api/orders/ord_7Hk2/exchanges",
            {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
        )
        assert result.operation_row is not None
        await wait_for(pilot, lambda: not notice.display, describe=lambda: str(notice.render()))


async def test_x_dismisses_the_notice_of_operations_that_arrived_expired(signed_out):
    from poppy_tui.cli.demo import SeedReport, demo_notice

    agent, company = signed_out
    app = PoppyApp(agent, notice=demo_notice(SeedReport(company.id, None, [1, 2, 3]), 0), demo=True)
    async with app.run_test(size=(80, 24)) as pilot:
        notice = app.screen.query_one("#inbox-notice", Static)
        await wait_for(pilot, lambda: notice.display)
        text = str(notice.render())
        assert "3 demo operations arrived already expired" in text and "in History (h)" in text
        assert "Ctrl+G" not in text and "ctrl+g" not in _footer_keys(app)
        await pilot.press("x")
        await wait_for(pilot, lambda: not notice.display)
        assert app.notice is None


@pytest.mark.parametrize("size", [(80, 24), (60, 15)])
async def test_ctrl_g_after_the_demos_failed_sign_in_says_the_waiting_message_again(
    signed_out, size
):
    """Walk C4: with the demo's sign-in failed, the inbox has its notice and the Talk message
    that met a sign-in challenge; Ctrl+G signed in but never said the message again, though the
    notice says it waits for the sign-in."""
    from poppy_tui.cli.demo import SeedReport, demo_notice

    agent, company = signed_out
    said = await agent.say(company, FITTING, origin="demo")
    assert said.challenge is not None and not said.operation_rows
    report = SeedReport(company.id, "That email and password don't match an account")
    app = PoppyApp(agent, notice=demo_notice(report, 0), demo=True)
    async with app.run_test(size=size) as pilot:
        notice = app.screen.query_one("#inbox-notice", Static)
        await wait_for(pilot, lambda: notice.display)
        assert FITTING[:20] in str(notice.render()).replace("\n", " ")
        await pilot.press("ctrl+g")
        await _confirm_device_in_a_browser(pilot, app)
        await wait_for(
            pilot,
            lambda: any(
                r.interface == "conversation" for r in agent.store.list_operations([Status.PENDING])
            ),
            timeout=20,
        )
    # Signed in for everything the demo's sign-in would have given, not only what Talk needed.
    assert agent.signins.covers(company, ["poppy:read", "bookings"])
