"""Enter opens the highlighted operation in an inbox that had nothing to show when it opened.

The workflow docs/mcp.md recommends: keep the TUI open while agents make requests. The inbox then
starts empty, its tables are mounted after the first frame, and the operations come from another
process (another connection to the same SQLite file)."""

from __future__ import annotations

import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.review import ReviewScreen
from poppy_tui.ui.widgets.operation_list import OperationTable
from tests.ui.ui_sample import (
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    record_notifications,
    screen_up,
    ui_config,
    wait_for,
)

SIZES = [pytest.param((120, 36), id="120x36"), pytest.param((80, 24), id="80x24")]


@pytest.fixture
def agent(tmp_path):
    opened = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"), ui_config()
    )
    yield opened
    opened.store.close()


def _another_connection(agent: Agent) -> Store:
    """What an agent's request in another process does: its own connection to the same file."""
    return Store.open(agent.store.path)


def _rows(app: PoppyApp, table_id: str) -> int:
    tables = list(app.screen.query(f"#{table_id}").results(OperationTable))
    return tables[0].row_count if tables and tables[0].display else 0


def _shown(app: PoppyApp) -> str:
    return f"screen={type(app.screen).__name__} focused={app.screen.focused!r}"


@pytest.mark.parametrize("size", SIZES)
async def test_enter_opens_the_first_operation_of_an_inbox_that_started_empty(agent, size):
    app = PoppyApp(agent)
    async with app.run_test(size=size) as pilot:
        await wait_for(
            pilot, lambda: app.screen.query("#pending-table"), describe=lambda: _shown(app)
        )
        with _another_connection(agent) as other:
            company = add_company(other, "Manzanita Outfitters", 8401)
            row = add_operation(other, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
        await wait_for(
            pilot, lambda: _rows(app, "pending-table") == 1, describe=lambda: _shown(app)
        )
        await pilot.press("enter")
        await screen_up(pilot, ReviewScreen, describe=lambda: _shown(app))
        assert app.screen.operation_row == row


@pytest.mark.parametrize("size", SIZES)
async def test_enter_opens_a_new_operation_after_every_earlier_one_was_decided(agent, size):
    company = add_company(agent.store, "Manzanita Outfitters", 8401)
    first = add_operation(agent.store, company, "exc_1", JACKET_SUMMARY, terms=jacket_terms())
    app = PoppyApp(agent)
    async with app.run_test(size=size) as pilot:
        await wait_for(
            pilot, lambda: _rows(app, "pending-table") == 1, describe=lambda: _shown(app)
        )
        with _another_connection(
            agent
        ) as other:  # declined from the CLI: the table hides, focus goes
            other.decline(first, other.get_operation(first).current.id)
        await wait_for(
            pilot, lambda: _rows(app, "pending-table") == 0, describe=lambda: _shown(app)
        )
        with _another_connection(agent) as other:
            second = add_operation(other, company, "exc_2", JACKET_SUMMARY, terms=jacket_terms())
        await wait_for(
            pilot, lambda: _rows(app, "pending-table") == 1, describe=lambda: _shown(app)
        )
        await pilot.press("enter")
        await screen_up(pilot, ReviewScreen, describe=lambda: _shown(app))
        assert app.screen.operation_row == second


async def test_enter_opens_an_operation_on_its_way_when_nothing_waits(agent):
    # Approved from another terminal and in its grace period: only the "In progress" table has rows.
    app = PoppyApp(agent)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(
            pilot, lambda: app.screen.query("#progress-table"), describe=lambda: _shown(app)
        )
        with _another_connection(agent) as other:
            company = add_company(other, "Manzanita Outfitters", 8401)
            row = add_operation(other, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
            other.approve(row, other.get_operation(row).current.id, grace_seconds=600)
        await wait_for(
            pilot, lambda: _rows(app, "progress-table") == 1, describe=lambda: _shown(app)
        )
        await pilot.press("enter")
        await screen_up(pilot, ReviewScreen, describe=lambda: _shown(app))
        assert app.screen.operation_row == row


async def test_an_arriving_operation_does_not_take_the_keys_from_another_screen(agent):
    app = PoppyApp(agent)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(
            pilot, lambda: app.screen.query("#pending-table"), describe=lambda: _shown(app)
        )
        inbox = app.screen
        app.action_show_history()
        await wait_for(pilot, lambda: app.screen is not inbox, describe=lambda: _shown(app))
        history = app.screen
        await wait_for(pilot, lambda: history.focused is not None, describe=lambda: _shown(app))
        focused = history.focused
        said = record_notifications(app)
        with _another_connection(agent) as other:
            company = add_company(other, "Manzanita Outfitters", 8401)
            row = add_operation(other, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
        # The app's poll saw it (a toast says it arrived) while the history kept the keys.
        await wait_for(
            pilot, lambda: any("Manzanita" in m for m in said), describe=lambda: _shown(app)
        )
        assert app.screen is history and history.focused is focused
        app.action_show_inbox()
        await wait_for(pilot, lambda: app.screen is inbox, describe=lambda: _shown(app))
        await pilot.press("enter")
        await screen_up(pilot, ReviewScreen, describe=lambda: _shown(app))
        assert app.screen.operation_row == row
