"""The review of an operation for the same action as an earlier approval whose outcome is unknown
(Ops 7): a DANGER finding names the earlier operation and `a` says why it can't approve, until the
earlier outcome is known; then both lift, read afresh. The real Agent against the strict Company
(written from the spec alone), minting a new operation_id for the same request."""

from __future__ import annotations


import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from textual.widgets import Static

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen
from poppy_tui.ui.screens.review import ReviewScreen
from tests.companies.strict_company import RawAnswer, StrictCompany
from tests.ui.ui_sample import screen_up, ui_config, wait_for

SIZE = (120, 40)


@pytest.fixture
def strict(strict: StrictCompany) -> StrictCompany:
    """tests/conftest.py's strict Company, minting a new operation_id for every request and answering
    approvals with an HTML 500."""
    strict.state.mint_operation_ids = True
    strict.state.approval_answers = [
        RawAnswer(500, "text/html", b"<h1>oops</h1>") for _ in range(200)
    ]
    return strict


def panel_text(screen: ReviewScreen) -> str:
    return "\n".join(str(s.render()) for s in screen.query("#discrepancies Static").results(Static))


async def test_a_held_operation_shows_the_danger_refuses_a_and_lifts_once_the_earlier_is_known(
    tmp_path, strict
):
    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    agent = Agent.open(
        paths,
        ui_config(
            grace_seconds=0,
            arm_delay_seconds=0,
            request_timeout_seconds=5.0,
            retry_window_seconds=1.0,
        ),
        key=ec.generate_private_key(ec.SECP256R1()),
        reply_wait_seconds=3.0,
    )
    try:
        company = await agent.add_company(strict.base_url)
        first = (await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})).operation_row
        agent.approve(first, agent.store.get_operation(first).current.id)
        assert (await agent.wait_for_outcome(first, timeout=30)).status == Status.OUTCOME_UNKNOWN
        second = (await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})).operation_row
        app = PoppyApp(agent)
        async with app.run_test(size=SIZE) as pilot:
            app.open_review(second)
            await wait_for(
                pilot,
                lambda: isinstance(app.screen, ReviewScreen) and app.screen.checked is not None,
            )
            screen = app.screen
            await wait_for(
                pilot,
                lambda: "Can't be approved yet" in panel_text(screen),
                describe=lambda: panel_text(screen),
            )
            assert f"operation {first} (" in panel_text(screen)
            why = screen.approve_blocker()
            assert why is not None and f"operation {first}" in why and "unknown" in why
            await pilot.press("a")
            await pilot.pause()  # the key handled: it opened nothing
            assert not isinstance(app.screen, ConfirmApproveScreen)
            assert agent.store.get_operation(second).status == Status.PENDING
            # The person finds out and records it in the earlier operation's review (here, directly).
            agent.resolve_unknown(first, performed=True)
            # The hold lifts before the panel is drawn again (the review's load sets what holds it
            # back, then awaits the panel's new lines), so each is waited for on its own.
            await wait_for(
                pilot,
                lambda: "Can't be approved yet" not in panel_text(screen),
                describe=lambda: panel_text(screen),
            )
            await wait_for(
                pilot, lambda: screen.approve_blocker() is None, describe=screen.approve_blocker
            )
            # Performed: approving the new one does it again, which the review says (a warning).
            await wait_for(
                pilot,
                lambda: "was performed before" in panel_text(screen),
                describe=lambda: panel_text(screen),
            )
            assert f"operation {first} (" in panel_text(screen)
            await pilot.press("a")
            await screen_up(pilot, ConfirmApproveScreen)
    finally:
        await agent.aclose()
