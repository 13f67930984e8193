"""Small windows say what they can't show (walk C7): at 60x15 the review's fixed header and
banner left two lines for the summary and terms, yet approving was offered as usual and the
confirmation's keys were cut off. Now, while the summary and terms have not all been on screen,
a line says how many more lines are below; the confirmation says part of them was not on
screen (approving stays possible) and keeps its keys on screen. Through the real Agent, at 80x24
and at the smallest size the TUI supports."""

from __future__ import annotations

import pytest

from poppy_tui.agent.store import Status
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen
from poppy_tui.ui.sizes import SMALLEST
from tests.ui.ui_sample import (
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    review_shown,
    screen_up,
    wait_for,
)


def _jacket(store) -> int:
    company = add_company(store, "Manzanita Outfitters", 8401)
    return add_operation(store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())


async def _review(app, pilot, row):
    app.open_review(row)
    review = await review_shown(pilot)
    await wait_for(pilot, lambda: review.can_approve())
    # The review's own look at what fits, after the layout of the revision it shows (a look
    # made here at once could read the layout from before the terms were filled in).
    await pilot.pause()
    await wait_for(pilot, lambda: not review.fit_pending)
    return review


def _on_screen(app, widget) -> bool:
    return widget.region.height > 0 and widget.region.bottom <= app.size.height


async def test_at_the_smallest_size_the_review_says_what_is_below_and_the_confirmation_too(
    make_agent, store
):
    row = _jacket(store)
    app = PoppyApp(make_agent(grace_seconds=60))
    async with app.run_test(size=SMALLEST) as pilot:
        review = await _review(app, pilot, row)
        more = review.query_one("#review-more")
        await wait_for(pilot, lambda: more.display, describe=lambda: str(more.render()))
        assert "more lines below" in str(more.render()) and _on_screen(app, more)
        assert not review.summary_seen
        await pilot.press("a")
        dialog = await screen_up(pilot, ConfirmApproveScreen)
        await pilot.pause()
        unseen = dialog.query_one("#confirm-unseen")
        assert "part of the summary and terms was not on screen" in str(unseen.render())
        for selector in ("#confirm-help", "#confirm-unseen"):  # its keys and the note show
            assert _on_screen(app, dialog.query_one(selector)), selector
        assert not dialog.query_one("#confirm-buttons").display
        await pilot.press("y")  # approving stays possible
        await wait_for(pilot, lambda: store.get_operation(row).status == Status.APPROVED)


@pytest.mark.parametrize("size", [SMALLEST, (80, 24)])
async def test_once_the_summary_and_terms_were_on_screen_nothing_more_is_said(
    make_agent, store, size
):
    row = _jacket(store)
    app = PoppyApp(make_agent(grace_seconds=60))
    async with app.run_test(size=size) as pilot:
        review = await _review(app, pilot, row)
        more = review.query_one("#review-more")
        for _ in range(30):  # PgDn until the end of the terms has been on screen
            if review.summary_seen:
                break
            await pilot.press("pagedown")
            review.check_fit()
            await pilot.pause()
        assert review.summary_seen
        await wait_for(pilot, lambda: not more.display)
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen)
        assert not app.screen.query("#confirm-unseen")
        assert _on_screen(app, app.screen.query_one("#confirm-help"))


async def test_at_80x24_the_review_keeps_its_lines_for_the_body(make_agent, store):
    """At 80x24 the body shows the findings and the start of the summary: no line is spent
    saying more is below (the scrollbar says it), and the confirmation adds no note."""
    row = _jacket(store)
    app = PoppyApp(make_agent(grace_seconds=60))
    async with app.run_test(size=(80, 24)) as pilot:
        review = await _review(app, pilot, row)
        await wait_for(pilot, lambda: not review.fit_pending)
        assert not review.summary_seen  # the terms are below: only the line is not said
        assert not review.query_one("#review-more").display
        await pilot.press("a")
        await screen_up(pilot, ConfirmApproveScreen)
        assert not app.screen.query("#confirm-unseen")
