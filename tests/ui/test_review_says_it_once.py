"""The review says a send's outcome once: the attempt line and the banner, not also a toast on
that same review, nor a "Performed" and "Detail: performed" under the line; and a withdrawn
approval leaves no "Approved. It is sent when the countdown ends" toast behind. Through the real
Agent and its dispatcher, against a Company written from the spec alone."""

from __future__ import annotations


from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen
from poppy_tui.ui.screens.review import ReviewScreen
from tests.ui.ui_sample import screen_up, ui_config, wait_for


async def open_agent(tmp_path, strict, grace: float) -> tuple[Agent, int]:
    agent = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(grace_seconds=grace, request_timeout_seconds=5.0, min_read_seconds=0),
        key=ec.generate_private_key(ec.SECP256R1()),
        reply_wait_seconds=3.0,
    )
    company = await agent.add_company(strict.base_url)
    result = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
    return agent, result.operation_row


def toasts(app) -> list[str]:
    """The toasts on screen, as a person reads them."""
    return [str(toast.render()) for toast in app.screen.query("Toast")]


async def test_a_performed_send_is_said_once_on_its_own_review(tmp_path, strict):
    agent, row = await open_agent(tmp_path, strict, grace=3600.0)
    try:
        op = agent.store.get_operation(row)
        agent.approve(op.id, op.current.id)
        app = PoppyApp(agent, initial_screen=f"review:{row}")
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await wait_for(pilot, lambda: app.painted and isinstance(app.screen, ReviewScreen))
            with Store.open(agent.store.path) as elsewhere:
                elsewhere.send_now([row])
            await wait_for(pilot, lambda: agent.store.get_operation(row).status == Status.PERFORMED)
            progress = app.screen.query_one("ProgressView")
            await wait_for(pilot, lambda: "→ performed" in str(progress.render()))
            # A later event's toast shows that the poll announcing the settle has run.
            await agent.call_api(
                agent.find_company("Strict Travel"), "POST", "/bookings/bk_2/cancel", {}
            )
            await wait_for(
                pilot,
                lambda: any("asks for your approval" in t for t in toasts(app)),
                describe=lambda: repr(toasts(app)),
            )
            text = str(progress.render())
            assert text.lower().count("performed") == 1, text
            assert not any("performed" in toast for toast in toasts(app)), toasts(app)
    finally:
        agent.store.close()


async def test_withdrawing_clears_the_approved_toast(tmp_path, strict):
    agent, row = await open_agent(tmp_path, strict, grace=3600.0)
    try:
        app = PoppyApp(agent, initial_screen=f"review:{row}")
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await wait_for(pilot, lambda: app.painted and isinstance(app.screen, ReviewScreen))
            review = app.screen
            await wait_for(pilot, lambda: review.approve_blocker() is None)  # loaded and armed
            await pilot.press("a")
            await screen_up(pilot, ConfirmApproveScreen)
            await pilot.press("y")
            await wait_for(
                pilot,
                lambda: any(t.startswith("Approved.") for t in toasts(app)),
                describe=lambda: repr(toasts(app)),
            )
            await pilot.press("w")
            await wait_for(pilot, lambda: "WITHDRAWN" in str(review.query_one("#outcome").render()))
            # Well before the toast's own timeout (5 s) would take it away.
            await wait_for(
                pilot,
                lambda: not any(t.startswith("Approved.") for t in toasts(app)),
                timeout=1.0,
                describe=lambda: repr(toasts(app)),
            )
    finally:
        agent.store.close()
