"""The inbox updates its rows in place (a store change never clears and rebuilds the tables), so
the cursor and the scroll are the person's: a key pressed while a refresh runs is never undone,
and a wheel scroll that doesn't move the cursor is never scrolled back by the periodic refresh.
A new revision of a row checked before is checked again, like the first (walk B2). Through the
real Agent, at 80x24 and at the smallest size the TUI supports."""

from __future__ import annotations

from datetime import timedelta

import pytest

from poppy_tui.agent.store import Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.sizes import SMALLEST
from poppy_tui.ui.widgets.operation_list import OperationTable
from tests.ui.ui_sample import (
    FIXED_NOW,
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    poll_seen,
    started,
    wait_for,
)

SIZES = [(80, 24), SMALLEST]


def _fill(store: Store, count: int) -> list[int]:
    company = add_company(store, "Manzanita Outfitters", 8401)
    return [
        add_operation(
            store,
            company,
            f"exc_{n}Rt2",
            JACKET_SUMMARY,
            terms=jacket_terms(),
            expires_at=FIXED_NOW + timedelta(days=3650, minutes=n),
        )
        for n in range(count)
    ]


def _row_text(table: OperationTable, row: int) -> str:
    return " | ".join(str(c) for c in table.get_row(str(row)))


async def _inbox_ready(pilot, app) -> OperationTable:
    await started(pilot)
    table = app.screen.query_one("#pending-table", OperationTable)
    inbox = app.screen
    await wait_for(
        pilot,
        lambda: (
            table.complete and not inbox.partial and not inbox.checking and app.focused is table
        ),
        describe=lambda: f"partial {inbox.partial}, checking {inbox.checking}, focus {app.focused}",
    )
    return table


@pytest.mark.parametrize("size", SIZES)
async def test_a_refresh_keeps_the_rows_and_the_cursor_the_person_moved(agent, store, size):
    rows = _fill(store, 6)
    app = PoppyApp(agent, clock=lambda: FIXED_NOW)
    async with app.run_test(size=size) as pilot:
        table = await _inbox_ready(pilot, app)
        first_rows = {key: table.rows[key] for key in table.rows}
        await pilot.press("down", "down")
        await wait_for(pilot, lambda: table.cursor_row == 2)
        # A refresh in the middle of the person's keys: rows are updated, never rebuilt, and the
        # cursor stays where the keys put it (a rebuild put it back where it was when it began).
        app.screen.refresh_data()
        await pilot.press("down")
        app.screen.refresh_data()
        await wait_for(pilot, lambda: table.cursor_row == 3)
        await pilot.pause()
        assert table.cursor_row == 3
        assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == str(rows[3])
        assert {key: table.rows[key] for key in table.rows} == first_rows  # the same Row objects


@pytest.mark.parametrize("size", SIZES)
async def test_a_row_arriving_above_keeps_the_cursor_on_its_row(agent, store, tmp_path, size):
    rows = _fill(store, 4)
    app = PoppyApp(agent, clock=lambda: FIXED_NOW)
    async with app.run_test(size=size) as pilot:
        table = await _inbox_ready(pilot, app)
        await pilot.press("down", "down")
        await wait_for(pilot, lambda: table.cursor_row == 2)
        # Another process: an operation that expires sooner than all of them goes first.
        with Store.open(store.path) as other:
            company = other.list_companies()[0]
            sooner = add_operation(
                other,
                company,
                "exc_soon",
                "Return the beanie.",
                expires_at=FIXED_NOW + timedelta(days=1),
            )
        await poll_seen(pilot)
        await wait_for(pilot, lambda: str(sooner) in table.rows and table.complete)
        assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == str(rows[2])


async def test_a_wheel_scroll_is_not_scrolled_back_by_the_refresh(agent, store):
    _fill(store, 8)
    app = PoppyApp(agent, clock=lambda: FIXED_NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _inbox_ready(pilot, app)
        await wait_for(pilot, lambda: table.max_scroll_y > 0)
        table.scroll_to(y=table.max_scroll_y, animate=False)  # as the wheel does: cursor stays
        await wait_for(pilot, lambda: table.scroll_y == table.max_scroll_y)
        assert table.cursor_row == 0
        scrolled = table.scroll_y
        app.screen.refresh_data()
        app.notify_store_changed()
        await pilot.pause()
        await pilot.pause()
        assert table.scroll_y == scrolled and table.cursor_row == 0


@pytest.mark.parametrize("size", SIZES)
async def test_a_new_revision_is_checked_like_the_first(agent, store, size):
    """B2: checks were remembered by row, so a row checked once showed "checking…" and "…" for
    ever on its new revision, and its DANGER never appeared."""
    company = add_company(store, "Manzanita Outfitters", 8401)
    row = add_operation(
        store,
        company,
        "exc_5Rt2",
        JACKET_SUMMARY,
        terms=jacket_terms(),
        expires_at=FIXED_NOW + timedelta(days=3650),
        revision="r1",
    )
    app = PoppyApp(agent, clock=lambda: FIXED_NOW)
    async with app.run_test(size=size) as pilot:
        table = await _inbox_ready(pilot, app)
        first = _row_text(table, row)
        assert "checking" not in first and "DANGER" not in first
        assert "USD 70.00" in first or size[0] < 80  # narrower, the review says the amount
        # The Company answers again with a new revision whose summary says another amount.
        with Store.open(store.path) as other:
            add_operation(
                other,
                other.get_company(company.id),
                "exc_5Rt2",
                JACKET_SUMMARY.replace("$70.00", "$90.00"),
                terms=jacket_terms(),
                expires_at=FIXED_NOW + timedelta(days=3650),
                revision="r2",
            )
        await poll_seen(pilot)
        await wait_for(
            pilot,
            lambda: "DANGER" in _row_text(table, row),
            describe=lambda: _row_text(table, row),
        )
        assert "checking" not in _row_text(table, row)


@pytest.mark.parametrize("size", SIZES)
async def test_the_columns_fit_the_screen(agent, store, size):
    """Walk K10: at 60 columns the Summary column ran off the right edge."""
    _fill(store, 2)
    app = PoppyApp(agent, clock=lambda: FIXED_NOW)
    async with app.run_test(size=size) as pilot:
        table = await _inbox_ready(pilot, app)
        await pilot.pause()
        widths = sum(column.get_render_width(table) for column in table.columns.values())
        assert widths <= table.content_region.width, (widths, table.content_region)
        assert "summary" in [str(key.value) for key in table.columns]
