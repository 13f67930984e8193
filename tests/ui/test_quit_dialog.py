"""The quit dialog's "send now and wait" sends at once, through the real Agent and its dispatcher
worker, to a Company written from the spec alone (tests/companies/strict_company.py) on
loopback: the grace period is ended in the store (committed like the decision), not waited out."""

from __future__ import annotations

from datetime import datetime, UTC

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status, Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.quit_dialog import QuitScreen
from tests.ui.ui_sample import (
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    screen_up,
    started,
    ui_config,
    wait_for,
)

SIZE = (120, 36)
GRACE = 3600.0  # far longer than any test runs: only "send now" can make it go


async def test_send_now_sends_at_once_instead_of_waiting_out_the_grace_period(tmp_path, strict):
    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    agent = Agent.open(
        paths,
        ui_config(grace_seconds=GRACE, request_timeout_seconds=5.0),
        key=ec.generate_private_key(ec.SECP256R1()),
        reply_wait_seconds=3.0,
    )
    try:
        company = await agent.add_company(strict.base_url)
        result = await agent.call_api(company, "POST", "/bookings/bk_1/cancel", {})
        assert result.outcome == "operation"
        op = agent.store.get_operation(result.operation_row)
        agent.approve(op.id, op.current.id)
        app = PoppyApp(agent)
        async with app.run_test(size=SIZE) as pilot:
            await started(pilot)
            await pilot.press("q")
            await screen_up(pilot, QuitScreen)
            await pilot.press("s")
            # The app quits by itself once the Company has answered the approval.
            await wait_for(
                pilot,
                lambda: not app.is_running,
                describe=lambda: str(app.screen.query_one("#quit-progress").render()),
            )
        done = agent.store.get_operation(op.id)
        assert done.status == Status.PERFORMED, done.outcome_detail
        assert strict.state.perform_count["cxl_bk_1"] == 1
        assert strict.state.bookings["bk_1"]["status"] == "cancelled"
    finally:
        agent.store.close()


async def test_send_now_is_recorded_and_leaves_withdrawn_approvals_alone(store, make_agent):
    company = add_company(store, "Manzanita Outfitters", 8401)
    kept = add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
    taken_back = add_operation(store, company, "exc_8Lm3", JACKET_SUMMARY, terms=jacket_terms())
    for row in (kept, taken_back):
        store.approve(row, store.get_operation(row).current.id, grace_seconds=GRACE)
    agent = make_agent()
    # The real Agent with its dispatcher switched off: the test is about what "s" itself records,
    # which a running dispatcher would act on at once (tests/ui/test_notifications.py has the
    # quit-and-send with the dispatcher sending to a Company).
    agent.run_dispatcher = None
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("q")
        await screen_up(pilot, QuitScreen)
        store.withdraw(taken_back)  # in another window, while the dialog is open
        await pilot.press("s")
        # "s" recorded "send now" (the positive sign), and nothing sends here: the dialog waits.
        await wait_for(
            pilot,
            lambda: (
                store.get_operation(kept).send_after is not None
                and datetime.fromisoformat(store.get_operation(kept).send_after)
                <= datetime.now(UTC)
            ),
        )
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, QuitScreen)
    # A fresh connection sees it: committed, not only in this process's memory.
    with Store.open(store.path) as again:
        sent_now = again.get_operation(kept)
        assert sent_now.status == Status.APPROVED
        assert sent_now.send_after is not None
        assert datetime.fromisoformat(sent_now.send_after) <= datetime.now(UTC)  # not in an hour
        assert again.get_operation(taken_back).status == Status.WITHDRAWN
        assert again.get_operation(taken_back).send_after is None
        assert again.claim_due("another-process", 30) is not None  # due now, for any dispatcher


@pytest.mark.parametrize("approved", [1, 2])
async def test_the_quit_choices_speak_of_one_approval_as_one_and_fit_80_columns(
    store, approved, make_agent
):
    # "send them now and wait until each has an answer" for a single approval, and a help line
    # that wrapped at 80 columns to begin the next with "or by".
    company = add_company(store, "Manzanita Outfitters", 8401)
    for n in range(approved):
        row = add_operation(store, company, f"exc_{n}Rt2", JACKET_SUMMARY, terms=jacket_terms())
        store.approve(row, store.get_operation(row).current.id, grace_seconds=GRACE)
    app = PoppyApp(make_agent())
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await pilot.press("q")
        await screen_up(pilot, QuitScreen)
        choices = app.screen.query_one("#quit-help")
        lines = str(choices.render()).splitlines()
        assert all(len(line) <= choices.content_region.width for line in lines), lines
        if approved == 1:
            assert lines[0] == "s  send it now and wait until it has an answer, then quit"
        else:
            assert lines[0] == "s  send them now and wait until each has an answer, then quit"
        await pilot.press("escape")


async def test_send_now_does_not_wait_on_an_approval_that_waits_for_sign_in(tmp_path):
    """Against Birch Market (a spec-only Company with accounts): the approval met a sign-in
    challenge, so "send now and wait" says it waits for the person to sign in instead of
    showing "Sending..." until its terms expire; l still leaves it queued."""
    from tests.companies.account_company import AccountCompany

    birch = AccountCompany()
    birch.state.tokens["tok_alice"] = ("alice", ("orders",))
    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    agent = Agent.open(
        paths,
        ui_config(grace_seconds=0.0, request_timeout_seconds=5.0),
        key=ec.generate_private_key(ec.SECP256R1()),
        reply_wait_seconds=3.0,
    )
    token: list[str | None] = ["tok_alice"]

    async def tokens(company) -> str | None:
        return token[0]

    agent.access_token_source = tokens
    try:
        company = await agent.add_company(birch.base_url)
        result = await agent.call_api(company, "POST", "/orders", {})
        op = agent.store.get_operation(result.operation_row)
        token[0] = None  # signed out since
        agent.approve(op.id, op.current.id)
        assert (await agent.wait_for_outcome(op.id, timeout=10)).waiting_sign_in
        app = PoppyApp(agent)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("q")
            await screen_up(pilot, QuitScreen)
            await pilot.press("s")
            progress = app.screen.query_one("#quit-progress")
            await wait_for(pilot, lambda: "sign in" in str(progress.render()))
            shown = str(progress.render())
            assert f"operation {op.id} waits for you to sign in" in shown and "Sending" not in shown
            await pilot.press("l")
            await wait_for(pilot, lambda: not app.is_running)
        kept = agent.store.get_operation(op.id)
        assert (
            kept.status == Status.SENDING and kept.waiting_sign_in
        )  # still kept for after sign-in
    finally:
        agent.store.close()
        birch.stop()


FITTING = (
    "Move your jacket fitting (bkg_2Fm8) at Manzanita Outfitters Portland from Thu, Dec 10 at "
    "10:00 AM to Tue, Dec 8 at 2:00 PM (Pacific time), for a $10.00 change fee charged to the "
    "Visa ending 4242."
)


@pytest.mark.parametrize("size", [(80, 24), (60, 15)])
async def test_the_quit_dialog_keeps_a_moves_new_time(make_agent, store, size):
    """Walk K4: the dialog cut the fitting move before its new time, which the inbox keeps."""
    from tests.ui.ui_sample import add_company, add_operation

    company = add_company(store, "Manzanita Outfitters", 8401)
    row = add_operation(store, company, "bkc_3", FITTING)
    store.approve(row, store.get_operation(row).current.id, grace_seconds=3600)
    app = PoppyApp(make_agent())
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.painted)
        await pilot.press("q")
        await screen_up(pilot, QuitScreen)
        line = app.screen.query_one(f"#quit-operation-{row}")
        shown = " ".join(str(line.render()).split())
        assert "to Tue, Dec 8 at 2:00 PM" in shown, shown
        assert line.region.right <= size[0]
