"""Dialogs follow the state they describe (every confirmation: approve, decline, resolve; quit is
tests/ui/test_quit_follows_the_queue.py). While one is open the operation can move on behind it:
the approval is sent when its grace period ends, is performed, refused or ends unknown, the
Company sends new terms, the revision expires, another window decides. The dialog then says what
is true now, or closes with a line that says why; it never keeps saying what stopped being true.

The decline dialog opened in the grace period is the finding this began with: it stayed open after
the approval was sent and performed, still saying "your approval is withdrawn before it is sent,
nothing is sent", and `y` then answered "Not declined: the operation is performed".

Through the real Agent and its dispatcher, against the strict Company (tests/companies/, written
from the spec alone), at 80x24 and at the smallest size the TUI supports."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime, timedelta

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.agent.store.connection import StateError
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.confirm_approve import (
    ConfirmApproveScreen,
    ConfirmDeclineScreen,
    ResolveOutcomeScreen,
)
from poppy_tui.ui.sizes import SMALLEST
from tests.companies.strict_company import RawAnswer
from tests.ui.ui_sample import record_notifications, review_shown, screen_up, ui_config, wait_for

GRACE = 3600.0  # far longer than any test runs: only a send made elsewhere ends it
SIZES = [(80, 24), SMALLEST]


class Clock:
    """The app's clock, moved by hand (countdowns and expiry on screen; the agent keeps its own)."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


@contextlib.asynccontextmanager
async def reviewing(tmp_path, strict, size, *, approve: bool, clock=None, **config):
    """The strict Company's cancellation of bk_1 as an operation, approved with a long grace
    period when `approve`, its review open at `size`: (app, pilot, agent, row)."""
    agent = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(grace_seconds=GRACE, request_timeout_seconds=5.0, **config),
        key=ec.generate_private_key(ec.SECP256R1()),
    )
    try:
        company = await agent.add_company(strict.base_url)
        result = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
        assert result.outcome == "operation", result.detail
        row = result.operation_row
        if approve:
            agent.approve(row, agent.store.get_operation(row).current.id)
        app = PoppyApp(agent, initial_screen=f"review:{row}", clock=clock)
        async with app.run_test(size=size) as pilot:
            await review_shown(pilot)
            yield app, pilot, agent, row
    finally:
        await agent.aclose()


def text(app, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


def send_now(agent, row: int) -> None:
    """Another window ends the grace period (`poppy-tui send`, the quit dialog's `s`)."""
    with Store.open(agent.store.path) as elsewhere:
        elsewhere.send_now([row])


async def open_decline(app, pilot) -> ConfirmDeclineScreen:
    await pilot.press("d")
    await screen_up(pilot, ConfirmDeclineScreen)
    return app.screen


@pytest.mark.parametrize("size", SIZES)
async def test_a_decline_dialog_in_the_grace_period_closes_once_the_approval_is_performed(
    tmp_path, strict, size
):
    async with reviewing(tmp_path, strict, size, approve=True) as (app, pilot, agent, row):
        said = record_notifications(app)
        dialog = await open_decline(app, pilot)
        explain = text(app, "#decline-explain")
        assert "Your approval is sent in" in explain and "unless you decline now" in explain
        send_now(agent, row)
        await wait_for(
            pilot,
            lambda: (
                agent.store.get_operation(row).status == Status.PERFORMED
                and not isinstance(app.screen, ConfirmDeclineScreen)
            ),
            describe=lambda: f"{agent.store.get_operation(row).status}, {type(app.screen)}",
        )
        assert dialog.closed_why and "Not declined" in dialog.closed_why
        assert "performed it" in dialog.closed_why
        assert any("performed it" in line for line in said)
        # The y meant for the dialog finds no dialog: nothing declined, nothing contradicted.
        await pilot.press("y")
        await pilot.pause()
        assert not any(line.startswith("Not declined: the operation is performed") for line in said)
        assert agent.store.get_operation(row).status == Status.PERFORMED
    assert strict.state.perform_count["cxl_bk_1"] == 1


@pytest.mark.parametrize(
    ("answer", "status", "said"),
    [
        (
            RawAnswer(409, "application/json", b'{"error": "conflict"}', perform=False),
            Status.NOT_PERFORMED,
            "did not perform it",
        ),
        (
            RawAnswer(500, "text/html", b"<h1>Internal error</h1>"),
            Status.OUTCOME_UNKNOWN,
            "whether it was performed is not known",
        ),
    ],
    ids=["refused", "unknown"],
)
async def test_a_decline_dialog_closes_when_the_approval_is_refused_or_ends_unknown(
    tmp_path, strict, answer, status, said
):
    strict.state.approval_answers = [answer]
    async with reviewing(tmp_path, strict, (80, 24), approve=True, retry_window_seconds=0.0) as (
        app,
        pilot,
        agent,
        row,
    ):
        dialog = await open_decline(app, pilot)
        send_now(agent, row)
        await wait_for(
            pilot,
            lambda: not isinstance(app.screen, ConfirmDeclineScreen),
            describe=lambda: f"{agent.store.get_operation(row).status}",
        )
        assert agent.store.get_operation(row).status == status
        assert dialog.closed_why and said in dialog.closed_why


async def test_a_decline_dialog_closes_when_new_terms_arrive(tmp_path, strict):
    async with reviewing(tmp_path, strict, (80, 24), approve=True) as (app, pilot, agent, row):
        said = record_notifications(app)
        # The Company answers the approval with a new revision (its terms changed meanwhile).
        revision = strict.state.new_revision("cxl_bk_1", "bk_1", "cancel", "api")
        body = {"error": "approval_required", "operation": strict.state.operation_json(revision)}
        body["operation"]["summary"] = (
            "Cancel booking bk_1 (Lisbon, 3 nights). A $20.00 fee is charged."
        )
        strict.state.approval_answers = [
            RawAnswer(403, "application/json", json.dumps(body).encode(), perform=False)
        ]
        dialog = await open_decline(app, pilot)
        send_now(agent, row)
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmDeclineScreen))
        record = agent.store.get_operation(row)
        assert record.status == Status.PENDING and record.current.revision == revision.revision
        assert dialog.closed_why == ""  # the review says it, once
        await wait_for(pilot, lambda: any("new terms" in line for line in said))
        assert strict.state.perform_count.get("cxl_bk_1", 0) == 0


async def test_a_decline_dialog_follows_a_withdrawal_and_closes_at_expiry(tmp_path, strict):
    clock = Clock()
    async with reviewing(tmp_path, strict, (80, 24), approve=True, clock=clock) as (
        app,
        pilot,
        agent,
        row,
    ):
        dialog = await open_decline(app, pilot)
        with Store.open(agent.store.path) as elsewhere:  # withdrawn in another window
            elsewhere.withdraw(row)
        await wait_for(
            pilot,
            lambda: (
                "nothing is sent and the action is not performed" in text(app, "#decline-explain")
            ),
            describe=lambda: text(app, "#decline-explain"),
        )
        assert "Your approval is sent" not in text(app, "#decline-explain")
        clock.now = agent.store.get_operation(row).current.expires_at + timedelta(seconds=1)
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmDeclineScreen))
        assert dialog.closed_why and "it expired" in dialog.closed_why


@pytest.mark.parametrize("size", SIZES)
async def test_a_confirmation_open_past_the_expiry_says_expired_and_approves_nothing(
    tmp_path, strict, size
):
    clock = Clock()
    async with reviewing(tmp_path, strict, size, approve=False, clock=clock) as (
        app,
        pilot,
        agent,
        row,
    ):
        review = app.screen
        await wait_for(pilot, lambda: review.can_approve())
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen)
        assert "sent in" in text(app, "#confirm-help")
        clock.now = agent.store.get_operation(row).current.expires_at + timedelta(seconds=1)
        await wait_for(
            pilot,
            lambda: text(app, "#confirm-title").startswith("EXPIRED"),
            describe=lambda: text(app, "#confirm-title"),
        )
        help_text = text(app, "#confirm-help")
        assert "sent in" not in help_text and "withdraw" not in help_text
        assert "nothing is sent" in help_text
        assert "EXPIRED" in text(app, "#confirm-expiry")
        assert not app.screen.query_one("#confirm-yes").display
        keys = {
            b.key
            for (_, b, enabled, _) in app.screen.active_bindings.values()
            if enabled and b.show
        }
        assert "y" not in keys
        await pilot.press("y")
        await pilot.pause()
        assert agent.store.get_operation(row).status == Status.PENDING  # nothing approved
        assert agent.store.decisions(row) == []


async def test_a_confirmation_closes_when_another_window_declines(tmp_path, strict):
    async with reviewing(tmp_path, strict, (80, 24), approve=False) as (app, pilot, agent, row):
        review = app.screen
        await wait_for(pilot, lambda: review.can_approve())
        await pilot.press("a")
        dialog = await screen_up(pilot, ConfirmApproveScreen)
        with Store.open(agent.store.path) as elsewhere:
            elsewhere.decline(row, elsewhere.get_operation(row).current.id)
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmApproveScreen))
        assert dialog.closed_why and dialog.closed_why.startswith("Nothing was approved")
        assert "declined" in dialog.closed_why


async def test_the_outcome_dialog_closes_when_the_outcome_is_found_out(tmp_path, strict):
    # Performed, then a 500 to the approval and to poppy-tui's own probe (a resend of the same
    # approval, a second after): the outcome stays unknown until the other window records it.
    # One 500 only let the probe find it out before `r` was pressed, under load.
    strict.state.approval_answers = [RawAnswer(500, "text/html", b"<h1>oops</h1>")] * 4
    async with reviewing(tmp_path, strict, (80, 24), approve=True, retry_window_seconds=0.0) as (
        app,
        pilot,
        agent,
        row,
    ):
        send_now(agent, row)
        await wait_for(
            pilot, lambda: agent.store.get_operation(row).status == Status.OUTCOME_UNKNOWN
        )
        await wait_for(pilot, lambda: app.screen.record.status == Status.OUTCOME_UNKNOWN)
        await pilot.press("r")
        dialog = await screen_up(pilot, ResolveOutcomeScreen)
        # Recorded in another window.
        with Store.open(agent.store.path) as elsewhere, contextlib.suppress(StateError):
            elsewhere.resolve_unknown(row, True)
        await wait_for(pilot, lambda: not isinstance(app.screen, ResolveOutcomeScreen))
        assert dialog.closed_why and dialog.closed_why.startswith("Nothing to record")
        assert "performed" in dialog.closed_why
