"""The inbox shows rows before their checks (the first-frame target, docs/benchmarks.md): checks
are computed in a thread, stored with the revision, and read back by the next start instead of
recomputed."""

from __future__ import annotations

import threading
from datetime import timedelta

import poppy_tui.ui.screens.inbox as inbox_module
from poppy_tui.safety.checker import CHECKER_VERSION
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.widgets.operation_list import OperationTable
from tests.ui.ui_sample import (
    FIXED_NOW,
    add_operation,
    build_sample,
    checks_shown,
    poll_seen,
    wait_for,
)

SIZE = (120, 36)


def _row_text(table: OperationTable, row: int) -> str:
    return " | ".join(str(c) for c in table.get_row(str(row)))


async def _wait_rows(pilot, table: OperationTable) -> None:
    await wait_for(pilot, lambda: table.row_count)


async def test_rows_show_while_their_checks_are_still_being_computed(
    store, monkeypatch, make_agent
):
    rows = build_sample(store)
    release = threading.Event()
    real = inbox_module.check_missing

    def held(*args, **kwargs):
        assert release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(inbox_module, "check_missing", held)
    app = PoppyApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        pending = app.screen.query_one("#pending-table", OperationTable)
        await _wait_rows(pilot, pending)
        # The checks' thread starts once the first frame is on screen, which may be a moment
        # after the rows are in the table.
        await wait_for(pilot, lambda: app.screen.checking, describe=lambda: "the checks started")
        # The rows are on screen while no check has finished: the badge says so.
        assert str(rows["flight"]) in pending.items and app.screen.checking
        assert "checking…" in _row_text(pending, rows["flight"])
        release.set()
        await checks_shown(pilot)
        flight = _row_text(pending, rows["flight"])
        assert "checking…" not in flight and "DANGER" in flight
    assert set(store.current_checks(list(rows.values()), CHECKER_VERSION)) >= {
        rows["flight"],
        rows["hostile"],
    }


async def test_a_second_start_reads_the_stored_checks_without_computing_them(
    store, tmp_path, monkeypatch, make_agent
):
    rows = build_sample(store)
    app = PoppyApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await _wait_rows(pilot, app.screen.query_one("#pending-table", OperationTable))
        await checks_shown(pilot)
    computed: list[list[int]] = []
    monkeypatch.setattr(
        inbox_module,
        "check_missing",
        lambda path, operation_rows, *a, **k: computed.append(operation_rows),
    )
    app = PoppyApp(make_agent(), clock=lambda: FIXED_NOW)  # a second start: its own connection
    async with app.run_test(size=SIZE) as pilot:
        pending = app.screen.query_one("#pending-table", OperationTable)
        await _wait_rows(pilot, pending)
        await checks_shown(pilot)
        assert "DANGER" in _row_text(pending, rows["flight"])
    assert computed == []


async def test_countdowns_tick_only_for_rows_on_screen(store, make_agent):
    build_sample(store)
    company = store.find_company("Manzanita Outfitters")
    for n in range(30):
        add_operation(
            store,
            company,
            f"exc_more_{n}",
            f"Exchange number {n}",
            expires_at=FIXED_NOW + timedelta(hours=2, minutes=n),
        )
    app = PoppyApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=(120, 12)) as pilot:
        pending = app.screen.query_one("#pending-table", OperationTable)
        await _wait_rows(pilot, pending)
        await checks_shown(pilot)
        visible = pending.visible_keys()
        # Far fewer rows fit than there are: only those are rewritten each second.
        assert (
            visible and set(visible) < set(pending.items) and len(visible) < len(pending.items) / 2
        )
        looked: list[str] = []
        original = pending._update_if_changed
        pending._update_if_changed = lambda key, *a, **k: (
            looked.append(key),
            original(key, *a, **k),
        )  # type: ignore[method-assign]
        pending.tick()
        assert set(looked) == set(visible)


async def test_a_countdown_that_reads_the_same_is_not_redrawn(store, make_agent):
    build_sample(store)
    now = [FIXED_NOW]
    app = PoppyApp(make_agent(), clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        pending = app.screen.query_one("#pending-table", OperationTable)
        await _wait_rows(pilot, pending)
        await checks_shown(pilot)
        written: list[str] = []
        original = pending.update_cell
        pending.update_cell = lambda key, *a, **k: (written.append(key), original(key, *a, **k))  # type: ignore[method-assign]
        pending.tick()  # the clock hasn't moved: every countdown reads as before
        assert written == []
        now[0] = FIXED_NOW + timedelta(seconds=1)
        pending.tick()  # the operation expiring in 40s now reads 39s: that one is rewritten
        assert written


async def test_a_resize_that_keeps_the_width_does_not_reread_the_store(store, make_agent):
    build_sample(store)
    app = PoppyApp(make_agent(), clock=lambda: FIXED_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await _wait_rows(pilot, app.screen.query_one("#pending-table", OperationTable))
        await checks_shown(pilot)
        await poll_seen(pilot)  # the poll has seen the stored checks' commit
        screen = app.screen
        calls: list[int] = []
        original = screen.refresh_data
        screen.refresh_data = lambda: (calls.append(1), original())  # type: ignore[method-assign]
        await pilot.resize_terminal(SIZE[0], SIZE[1] + 4)
        await wait_for(
            pilot, lambda: tuple(screen.size) == (SIZE[0], SIZE[1] + 4)
        )  # the resize reached it
        await pilot.pause()
        assert calls == []
        await pilot.resize_terminal(SIZE[0] + 20, SIZE[1] + 4)
        await wait_for(pilot, lambda: calls)
