"""A Company may answer a later request for an action the person declined with a new revision of
the same operation (one operation_id per action): the inbox row and the review say "you declined
an earlier revision on <date>", not a plain "waiting for you" (walk C5). Through the real Agent, at
80x24 and at the smallest size the TUI supports."""

from __future__ import annotations

from datetime import timedelta

import pytest

from poppy_tui.agent.store import Status, Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.sizes import SMALLEST
from poppy_tui.ui.widgets.operation_list import OperationTable
from tests.ui.ui_sample import (
    FIXED_NOW,
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    review_shown,
    started,
    wait_for,
)


def _declined_then_revised(store: Store) -> tuple[int, int]:
    company = add_company(store, "Manzanita Outfitters", 8401)
    expires = FIXED_NOW + timedelta(days=3650)
    row = add_operation(
        store, company, "bkc_3", JACKET_SUMMARY, terms=jacket_terms(), expires_at=expires
    )
    store.decline(row, store.get_operation(row).current.id)
    other = add_operation(
        store, company, "exc_other", "Return the beanie.", expires_at=expires + timedelta(days=1)
    )
    add_operation(
        store,
        company,
        "bkc_3",
        JACKET_SUMMARY.replace("$70.00", "$75.00"),
        terms=jacket_terms("75.00"),
        expires_at=expires,
        revision="r2",
    )
    assert store.get_operation(row).status == Status.PENDING
    return row, other


@pytest.mark.parametrize("size", [(80, 24), SMALLEST])
async def test_the_inbox_row_and_the_review_say_it_was_declined_before(agent, store, size):
    row, other = _declined_then_revised(store)
    day = store.decisions(row)[0].decided_at[:10]
    app = PoppyApp(agent, clock=lambda: FIXED_NOW)
    async with app.run_test(size=size) as pilot:
        await started(pilot)
        table = app.screen.query_one("#pending-table", OperationTable)
        await wait_for(pilot, lambda: table.complete and str(row) in table.rows)

        def text(key: int) -> str:
            return " ".join(str(c) for c in table.get_row(str(key))).replace("\n", " ")

        await wait_for(pilot, lambda: "declined" in text(row), describe=lambda: text(row))
        assert f"(you declined an earlier revision on {day})" in text(row)
        assert "declined" not in text(other)  # never declined: a plain row

        app.open_review(row)
        review = await review_shown(pilot)
        banner = str(review.query_one("#outcome").render())
        assert banner.startswith("WAITING FOR YOUR DECISION")
        assert f"You declined an earlier revision on {day}" in banner
        assert review.query_one("#outcome").region.bottom <= size[1]  # on screen
