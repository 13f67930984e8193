"""The approval flow, driven with Pilot against a real Store."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, UTC

import pytest

from poppy_tui.agent.store import Status, Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen, ResolveOutcomeScreen
from poppy_tui.ui.screens.review import ReviewScreen
from poppy_tui.ui.widgets.summary_view import SummaryText, SummaryView
from tests.ui.ui_sample import (
    HOSTILE_SUMMARY,
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    screen_up,
    send_through,
    wait_for,
    workers_done,
)

SIZE = (120, 36)


def jacket(store: Store, **kwargs) -> int:
    company = add_company(store, "Manzanita Outfitters", 8401)
    return add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms(), **kwargs)


async def open_review(app: PoppyApp, pilot, row: int) -> ReviewScreen:
    app.open_review(row)
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, ReviewScreen) and app.screen.shown_revision_id is not None,
    )
    await workers_done(pilot)
    screen = app.screen
    assert isinstance(screen, ReviewScreen)
    return screen


async def wait_armed(pilot, screen: ReviewScreen, timeout: float = 10.0) -> None:
    await wait_for(pilot, screen.can_approve, timeout, describe=lambda: "approve available")
    await pilot.pause()


def decisions(store: Store, row: int) -> list[str]:
    return [d.decision for d in store.decisions(row)]


async def test_focus_starts_on_the_scrollable_summary_not_a_button(store, agent):
    row = jacket(store)
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        assert isinstance(app.focused, SummaryView)
        assert screen.query_one(SummaryText) in app.focused.walk_children()
        assert not any(w.can_focus for w in screen.query("Button"))


async def test_enter_never_approves(store, agent):
    row = jacket(store)
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        await wait_armed(pilot, screen)
        await pilot.press("enter", "enter", "space")
        await pilot.pause()
        assert app.screen is screen
        # Not even inside the confirmation.
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmApproveScreen)
        assert app.focused is None
        await pilot.press("enter", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmApproveScreen)
        assert store.get_operation(row).status == Status.PENDING
        assert decisions(store, row) == []


async def test_approve_is_unavailable_during_the_arming_delay(store, make_agent):
    row = jacket(store)
    app = PoppyApp(make_agent(arm_delay_seconds=5))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        assert screen.check_action("approve", ()) is None  # shown dimmed in the footer
        await pilot.press("a")
        await pilot.pause()
        assert app.screen is screen
        assert store.get_operation(row).status == Status.PENDING


async def test_a_then_y_approves_and_records_the_decision(store, agent):
    row = jacket(store)
    revision_id = store.get_operation(row).current.id
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        await wait_armed(pilot, screen)
        assert screen.check_action("approve", ()) is True
        await pilot.press("a")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ConfirmApproveScreen)
        shown = " ".join(str(s.render()) for s in modal.query("Static"))
        assert "Manzanita Outfitters" in shown and "USD 70.00" in shown
        await pilot.press("y")
        await wait_for(pilot, lambda: "APPROVED" in str(screen.query_one("#outcome").render()))
        assert app.screen is screen
        record = store.get_operation(row)
        assert record.status == Status.APPROVED
        assert record.approved_revision_id == revision_id
        assert decisions(store, row) == ["approved"]
        # The grace period shows, with its withdraw key.
        banner = str(screen.query_one("#outcome").render())
        assert "APPROVED" in banner and "withdraw" in banner
        assert screen.check_action("withdraw", ()) is True


@pytest.mark.parametrize(
    ("grace", "said"),
    [
        (0, ["y approves this revision only; it is sent at once.", "Esc or n: cancel."]),
        (
            5,
            [
                "y approves this revision only; it is sent in 5 s.",
                "Until then, w withdraws it.   Esc or n: cancel.",
            ],
        ),
    ],
)
async def test_the_confirmation_says_when_the_approval_leaves_and_what_stops_it(
    store, grace, said, make_agent
):
    # It said "It is sent after 0 s, during which w withdraws it" with no grace period at all,
    # and at 80 columns wrapped "during which w" / "withdraws it", as if w were a word: the key
    # now starts a line of its own.
    row = jacket(store)
    app = PoppyApp(make_agent(arm_delay_seconds=0, grace_seconds=grace))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_review(app, pilot, row)
        await wait_armed(pilot, screen)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmApproveScreen)
        help_text = str(app.screen.query_one("#confirm-help").render())
        assert help_text.splitlines() == said
        assert ("withdraw" in help_text) == (grace > 0)


async def test_escape_or_n_in_the_confirmation_cancels(store, agent):
    row = jacket(store)
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        await wait_armed(pilot, screen)
        for key in ("escape", "n"):
            await pilot.press("a")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmApproveScreen)
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen
        assert store.get_operation(row).status == Status.PENDING
        assert decisions(store, row) == []


async def test_withdraw_within_the_grace_period(store, agent):
    row = jacket(store)
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        await wait_armed(pilot, screen)
        await pilot.press("a", "y")
        await wait_for(pilot, lambda: store.get_operation(row).status == Status.APPROVED)
        await pilot.press("w")
        await wait_for(pilot, lambda: "WITHDRAWN" in str(screen.query_one("#outcome").render()))
        assert store.get_operation(row).status == Status.WITHDRAWN
        assert decisions(store, row) == ["approved", "withdrawn"]
        assert "WITHDRAWN" in str(screen.query_one("#outcome").render())
        # Withdrawn is open again: it can be decided anew.
        assert screen.check_action("decline", ()) is True
        assert screen.check_action("withdraw", ()) is False


async def test_decline_asks_once_repeating_company_and_summary_then_records_it(store, agent):
    from poppy_tui.ui.screens.confirm_approve import ConfirmDeclineScreen

    row = jacket(store)
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        await pilot.press("d")
        dialog = await screen_up(pilot, ConfirmDeclineScreen)
        assert isinstance(dialog, ConfirmDeclineScreen)
        said = " ".join(str(w.render()) for w in dialog.query("Static"))
        assert "Manzanita Outfitters" in said and "Stormline Insulated Jacket" in said
        assert "Nothing will be done" in said
        assert store.get_operation(row).status == Status.PENDING  # nothing decided yet
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        assert store.get_operation(row).status == Status.PENDING
        await pilot.press("d")
        await screen_up(pilot, ConfirmDeclineScreen)
        await pilot.press("enter")  # Enter is not the confirming key
        await workers_done(pilot)  # the key was handled: the dialog is still up, nothing recorded
        assert isinstance(app.screen, ConfirmDeclineScreen)
        assert store.get_operation(row).status == Status.PENDING
        await pilot.press("y")
        await wait_for(pilot, lambda: "DECLINED" in str(screen.query_one("#outcome").render()))
        assert store.get_operation(row).status == Status.DECLINED
        assert decisions(store, row) == ["declined"]
        banner = str(screen.query_one("#outcome").render())
        assert "DECLINED" in banner and "not performed" in banner
        assert banner.count("not performed") == 1  # said once
        assert screen.check_action("approve", ()) is None


async def test_decline_during_the_grace_period_also_asks_first(store, make_agent):
    from poppy_tui.ui.screens.confirm_approve import ConfirmDeclineScreen

    row = jacket(store)
    app = PoppyApp(make_agent(arm_delay_seconds=0, grace_seconds=60))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        await wait_armed(pilot, screen)
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: "APPROVED" in str(screen.query_one("#outcome").render()))
        assert store.get_operation(row).status == Status.APPROVED
        await pilot.press("d")
        await screen_up(pilot, ConfirmDeclineScreen)
        said = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "withdrawn before it is sent" in said
        assert store.get_operation(row).status == Status.APPROVED
        await pilot.press("y")
        await wait_for(pilot, lambda: "DECLINED" in str(screen.query_one("#outcome").render()))
        assert store.get_operation(row).status == Status.DECLINED
        assert app.screen is screen


async def test_an_expired_operation_cannot_be_approved(store, agent):
    row = jacket(store, expires_at=datetime.now(UTC) - timedelta(seconds=5))
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        # Past the arming delay (its timer has fired): expiry alone keeps it off.
        await wait_for(pilot, lambda: screen.arming_left() == 0)
        await workers_done(pilot)
        # Expiry alone (the real dispatcher may have recorded it expired meanwhile).
        assert "expired" in screen.approve_blocker()
        assert screen.check_action("approve", ()) is None
        await pilot.press("a")
        await pilot.pause()
        assert app.screen is screen
        assert "EXPIRED" in str(screen.query_one("#review-expiry").render())
        assert store.get_operation(row).approved_revision_id is None


async def test_approve_goes_dim_when_the_revision_expires_on_screen(store, agent):
    # The app's clock is ours to move, so a loaded machine can't let the revision expire
    # before approve has armed.
    now = [datetime.now(UTC)]
    row = jacket(store, expires_at=now[0] + timedelta(minutes=10))
    app = PoppyApp(agent, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        await wait_armed(pilot, screen)
        assert screen.check_action("approve", ()) is True
        now[0] += timedelta(minutes=10, seconds=1)
        # The countdown's tick notices the expiry: the footer shows approve dimmed.
        await wait_for(
            pilot, lambda: screen._footer_state is not None and screen._footer_state[1] is False
        )
        assert screen.check_action("approve", ()) is None
        await pilot.press("a")
        await pilot.pause()
        assert app.screen is screen


async def test_hostile_summary_is_literal_and_clicking_it_does_nothing(store, agent):
    company = add_company(store, "Tidewater Telecom", 8403)
    row = add_operation(store, company, "can_77Z", HOSTILE_SUMMARY, terms={"plan": "fiber-500"})
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        summary = screen.query_one("#summary", SummaryText)
        visual = summary.render()  # what is on screen, not what we meant to put there
        shown = visual.plain
        assert "[@click=app.quit]" in shown
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
        assert "\\x1b" in shown and "[Docs](https://evil.example)" in shown and "<b>" in shown
        # No span may carry an action or a link.
        for span in visual.spans:
            assert "@click" not in str(span.style) and "link" not in str(span.style)
        for x in range(0, summary.size.width, 7):
            for y in range(summary.size.height):
                await pilot.click(summary, offset=(x, y))
        await pilot.pause()
        assert app.is_running and app.return_code is None
        assert store.get_operation(row).status == Status.PENDING
        assert "DANGER:" in " ".join(str(w.render()) for w in screen.query(".finding"))


async def test_a_new_revision_rearms_shows_changes_and_cancels_the_confirmation(
    store, tmp_path, make_agent
):
    row = jacket(store)
    # Long enough that a loaded machine can't finish re-arming before we look.
    app = PoppyApp(make_agent(arm_delay_seconds=2.0))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        await wait_armed(pilot, screen, timeout=6)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmApproveScreen)
        # Another process (a CLI agent) records new terms in the same file.
        with Store.open(tmp_path / "poppy.db") as other:
            company = other.find_company("Manzanita Outfitters")
            add_operation(
                other,
                company,
                "exc_5Rt2",
                JACKET_SUMMARY.replace("70.00", "95.00"),
                terms=jacket_terms("95.00"),
                revision="r2",
            )
        await wait_for(
            pilot,
            lambda: screen.shown_revision_id == store.get_operation(row).current.id,
            step=0.02,
            describe=lambda: "the new revision shown",
        )
        # The load goes on after the revision is shown (its resource read, then the confirmation
        # for r1 is cancelled), so one pause is not enough to see the dialog gone.
        await wait_for(pilot, lambda: app.screen is screen, describe="the confirmation for r1 gone")
        assert screen.check_action("approve", ()) is None  # armed again from zero
        changes = str(screen.query_one("#changes").render())
        assert "NEW TERMS" in changes and "95.00" in changes and "70.00" in changes
        await pilot.press("y")  # a stray y from the old dialog approves nothing
        await pilot.pause()
        assert store.get_operation(row).status == Status.PENDING
        assert decisions(store, row) == []


async def test_outcome_unknown_explains_and_takes_the_persons_answer(store, agent):
    row = jacket(store)
    send_through(
        store,
        row,
        datetime.now(UTC),
        Status.OUTCOME_UNKNOWN,
        "connection dropped",
        http_status=None,
    )
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        banner = str(screen.query_one("#outcome").render())
        assert "OUTCOME UNKNOWN" in banner and "does not know" in banner
        assert screen.check_action("approve", ()) is None
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, ResolveOutcomeScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert store.get_operation(row).status == Status.OUTCOME_UNKNOWN
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("p")
        await wait_for(pilot, lambda: store.get_operation(row).status == Status.PERFORMED)
        await workers_done(pilot)
        assert decisions(store, row)[-1] == "resolved_performed"


async def test_operation_json_toggles_as_sanitised_text(store, agent):
    company = add_company(store, "Tidewater Telecom", 8403)
    row = add_operation(store, company, "can_77Z", HOSTILE_SUMMARY)
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        raw = screen.query_one("#operation-json")
        assert not raw.display
        await pilot.press("j")
        await pilot.pause()
        assert raw.display
        text = str(raw.render())
        assert '"operation_id": "can_77Z"' in text and "\x1b" not in text
        await pilot.press("j")
        await pilot.pause()
        assert not raw.display


async def test_opening_a_revision_marks_it_seen(store, agent):
    row = jacket(store)
    assert store.get_operation(row).current.seen_at is None
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await open_review(app, pilot, row)
    assert store.get_operation(row).current.seen_at is not None


async def test_keymap_from_config_moves_approve(store, make_agent):
    row = jacket(store)
    app = PoppyApp(make_agent(keybindings={"approve": "A"}))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        await wait_armed(pilot, screen)
        await pilot.press("a")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmApproveScreen)


async def test_no_decision_is_a_command_palette_command(store, agent):
    row = jacket(store)
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_review(app, pilot, row)
        commands = list(app.get_system_commands(screen))
        names = " ".join(
            f"{c.title} {c.help} {getattr(c.callback, '__name__', '')}".lower() for c in commands
        )
        for word in ("approve", "decline", "withdraw", "resolve"):
            assert word not in names


async def test_a_record_that_no_longer_parses_is_a_danger_and_cannot_be_approved(
    store, agent, tmp_path
):
    row = jacket(store)
    db = sqlite3.connect(tmp_path / "poppy.db")
    with db:  # damage the stored revision behind the store's back
        db.execute("UPDATE revisions SET raw_json='{}' WHERE operation_row=?", (row,))
    db.close()
    app = PoppyApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        inbox = app.screen.query_one("#pending-table")
        # Checks fill in after the rows show (off the event loop); a loaded CI machine took
        # longer than a fixed 0.3 s pause.
        await wait_for(
            pilot, lambda: "DANGER 1" in " ".join(str(c) for c in inbox.get_row(str(row)))
        )
        screen = await open_review(app, pilot, row)
        assert "could not read this operation" in " ".join(
            str(w.render()) for w in screen.query(".finding")
        )
        assert screen.check_action("approve", ()) is None
