"""History shows its first page before counting the records (issue #15 target 6): the page
costs the same at any size, the count grows with the records."""

from __future__ import annotations

import threading

from textual.widgets import DataTable

from poppy_tui.agent.store import Store
from poppy_tui.ui.app import PoppyApp
from tests.ui.ui_sample import StoreAgent, build_sample, ui_config


async def test_the_first_page_shows_while_the_records_are_still_being_counted(store, monkeypatch):
    build_sample(store)
    release = threading.Event()
    real = Store.count_operations

    def slow_count(self, *args, **kwargs):
        assert release.wait(30)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Store, "count_operations", slow_count)
    app = PoppyApp(StoreAgent(store, ui_config()), initial_screen="history")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        table = screen.query_one("#history-table", DataTable)
        for _ in range(100):
            await pilot.pause(0.05)
            if table.row_count:
                break
        assert table.row_count > 0 and screen.fetching
        assert "of …" in str(screen.query_one("#history-pager").render())
        release.set()
        for _ in range(100):
            await pilot.pause(0.05)
            if not screen.fetching:
                break
        total = real(store)
        assert screen.total == total and f"of {total}" in str(screen.query_one("#history-pager").render())
