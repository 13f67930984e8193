"""The inbox at 80x24 shows every waiting row there is room for (a fixed 60% of the screen hid a
fourth row above five empty lines), and says how many more wait below the table's edge when they
don't all fit, down to zero as the cursor reaches them. Through the real Agent on temporary
paths, with the demo's kind of summaries (four lines a row at 80 columns)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.ui.app import PoppyApp
from tests.ui.ui_sample import (
    FIXED_NOW,
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    ui_config,
    wait_for,
)


@pytest.fixture
def agent(tmp_path):
    opened = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(),
        key=ec.generate_private_key(ec.SECP256R1()),
    )
    yield opened
    opened.store.close()


def fill(agent, count: int) -> None:
    company = add_company(agent.store, "Manzanita Outfitters", 8401)
    for n in range(count):
        add_operation(
            agent.store,
            company,
            f"exc_{n}Rt2",
            JACKET_SUMMARY + " " + "More words. " * 6,
            terms=jacket_terms(),
            expires_at=FIXED_NOW + timedelta(days=3650, minutes=n),
        )


def visible_rows(app) -> int:
    table = app.screen.query_one("#pending-table")
    top, shown = 0, 0
    bottom = (
        int(table.scroll_y) + table.size.height - (table.header_height if table.show_header else 0)
    )
    for row in table.ordered_rows:
        top += row.height
        if top <= bottom:
            shown += 1
    return shown


async def test_four_waiting_rows_all_show_at_80x24(agent):
    fill(agent, 4)
    app = PoppyApp(agent)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(
            pilot, lambda: app.painted and app.screen.query_one("#pending-table").row_count == 4
        )
        await wait_for(
            pilot, lambda: visible_rows(app) == 4, describe=lambda: f"{visible_rows(app)} rows show"
        )
        assert not app.screen.query_one("#pending-more").display
        hint, footer = app.screen.query_one("#inbox-hint"), app.screen.query_one("PoppyFooter")
        await wait_for(
            pilot,
            lambda: 0 < hint.region.bottom <= footer.region.y,  # nothing pushed off
            describe=lambda: f"hint {hint.region}, footer {footer.region}",
        )


async def test_rows_that_do_not_fit_are_counted_below_until_the_cursor_reaches_them(agent):
    fill(agent, 7)
    app = PoppyApp(agent)
    async with app.run_test(size=(80, 24)) as pilot:
        more = app.screen.query_one("#pending-more")
        await wait_for(
            pilot, lambda: app.painted and more.display, describe=lambda: "no 'more below'"
        )
        # The count agrees with the rows the table shows whole, once the layout has settled.
        await wait_for(
            pilot,
            lambda: str(more.render()).startswith(f"↓ {7 - visible_rows(app)} more below"),
            describe=lambda: f"{more.render()} with {visible_rows(app)} shown",
        )
        assert 0 < visible_rows(app) < 7
        hint, footer = app.screen.query_one("#inbox-hint"), app.screen.query_one("PoppyFooter")
        await wait_for(
            pilot,
            lambda: 0 < hint.region.bottom <= footer.region.y,
            describe=lambda: f"hint {hint.region}, footer {footer.region}",
        )
        table = app.screen.query_one("#pending-table")
        # The whole list read and every row's checks in: rows shown again then may move the cursor.
        inbox = app.screen
        await wait_for(
            pilot,
            lambda: not inbox.partial and not inbox.checking and app.focused is table,
            describe=lambda: (
                f"partial {inbox.partial}, checking {inbox.checking}, focus on {app.focused}"
            ),
        )
        for row in range(1, 7):  # one key at a time, each seen by the table before the next
            await pilot.press("down")
            await wait_for(
                pilot,
                lambda row=row: table.cursor_row == row,
                describe=lambda: f"cursor on row {table.cursor_row}",
            )
        await wait_for(
            pilot,
            lambda: not more.display,
            describe=lambda: (
                f"{more.render()}; cursor {table.cursor_row}, scroll {table.scroll_y}/{table.max_scroll_y}, "
                f"size {table.size}, virtual {table.virtual_size}, max_height {table.styles.max_height}, "
                f"rows {[r.height for r in table.ordered_rows]}"
            ),
        )
