"""History with 100,000 records: one page in the table, queries off the event loop."""

from __future__ import annotations

import sqlite3

import pytest
from textual.widgets import DataTable

from poppy_tui.agent.store import Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.history import PAGE_SIZE
from tests.ui.ui_sample import add_company, add_operation, open_agent, wait_for

RECORDS = 100_000


@pytest.fixture
def big_store(tmp_path):
    path = tmp_path / "poppy.db"
    with Store.open(path) as store:
        add_company(store, "Manzanita Outfitters", 8401)
        add_company(store, "Larkspur Air", 8402)
        add_operation(
            store, store.find_company("Manzanita Outfitters"), "seed", "The first operation"
        )
    # 100,000 operations through record_operation would take minutes of fsyncs; the rows written
    # here are shaped exactly like the store's own (same tables, same stamp format).
    db = sqlite3.connect(path)
    with db:
        request_id = db.execute("SELECT request_id FROM revisions").fetchone()[0]
        statuses = ("performed", "declined", "expired", "not_performed", "performed")
        operations, revisions = [], []
        for i in range(2, RECORDS + 2):
            at = f"2029-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i % 60:02d}.{i:06d}Z"
            operations.append((i, 1 + i % 2, f"op_{i}", "api", "ses_x", statuses[i % 5], i, at, at))
            revisions.append(
                (
                    i,
                    i,
                    "r1",
                    request_id,
                    f"Exchange item number {i} for ${i % 100}.00 more",
                    "2099-01-01T00:00:00.000000Z",
                    "2099-01-01T00:00:00Z",
                    "{}",
                    at,
                )
            )
        db.executemany(
            "INSERT INTO operations (id, company_id, operation_id, interface, session_id, status,"
            " current_revision_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
            operations,
        )
        db.executemany(
            "INSERT INTO revisions (id, operation_row, revision, request_id, summary, expires_at,"
            " expires_at_text, raw_json, received_at) VALUES (?,?,?,?,?,?,?,?,?)",
            revisions,
        )
    db.close()
    with Store.open(path) as store:
        yield store


@pytest.fixture
def big_agent(big_store):
    """The real Agent on the big store's file."""
    agent = open_agent(big_store.path)
    yield agent
    agent.store.close()


@pytest.mark.slow
async def test_history_with_100k_records_pages_and_never_blocks(big_agent):
    app = PoppyApp(big_agent, initial_screen="history")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        table = screen.query_one("#history-table", DataTable)

        async def loaded() -> None:
            await pilot.pause()  # a key's fetch starts once the key is handled
            await wait_for(pilot, lambda: not screen.fetching, 20, describe=lambda: "the page")

        await loaded()
        assert screen.total == RECORDS + 1 and table.row_count == PAGE_SIZE
        for search in ("number 4242", "Larkspur"):
            screen.query_one("#history-search").value = search
            screen.refresh_data()
            # The query runs in a worker thread: refresh_data returns before the page is shown,
            # so the event loop never waits on SQLite (speed itself is in tests/benchmarks).
            assert screen.fetching
            # Not finished (its thread may not have started yet: pending counts, as it is not
            # the event loop's work either); it can't finish before this test yields, because
            # it hands its page over with call_from_thread, which waits for the loop.
            assert any(w.group == "history-page" and not w.is_finished for w in app.workers)
            await loaded()
        assert screen.total == RECORDS // 2 and table.row_count == PAGE_SIZE
        await pilot.press("right_square_bracket")
        await loaded()
        assert screen.page == 1 and table.row_count == PAGE_SIZE
