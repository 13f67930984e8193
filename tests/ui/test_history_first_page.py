"""History shows its first page before counting the records (docs/architecture.md, "Performance
at scale"; measured by the history-at-scale figures of docs/benchmarks.md): the page
costs the same at any size, the count grows with the records."""

from __future__ import annotations

import threading

from textual.widgets import DataTable

from poppy_tui.agent.store import Store
from poppy_tui.ui.app import PoppyApp
from tests.ui.ui_sample import build_sample, wait_for


def hold_in_worker_threads(monkeypatch, method: str) -> tuple[threading.Event, threading.Event]:
    """Store.<method>, when a worker thread calls it, waits until `release` is set; `entered`
    says a call is waiting. Returns (entered, release)."""
    entered, release = threading.Event(), threading.Event()
    real = getattr(Store, method)

    def held(self, *args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            entered.set()
            assert release.wait(30)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Store, method, held)
    return entered, release


async def test_the_first_page_shows_while_the_records_are_still_being_counted(
    store, monkeypatch, make_agent
):
    build_sample(store)
    total = Store.count_operations(store)
    _, release = hold_in_worker_threads(monkeypatch, "count_operations")
    app = PoppyApp(make_agent(), initial_screen="history")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        table = screen.query_one("#history-table", DataTable)
        await wait_for(pilot, lambda: table.row_count)
        assert table.row_count > 0 and screen.fetching
        assert "of …" in str(screen.query_one("#history-pager").render())
        release.set()
        await wait_for(pilot, lambda: not screen.fetching)
        assert screen.total == total and f"of {total}" in str(
            screen.query_one("#history-pager").render()
        )


async def test_the_page_loader_never_waits_for_the_event_loop_while_holding_the_reader(
    store, monkeypatch, make_agent
):
    """on_unmount takes the reader's lock on the event loop; a loader that held it while waiting
    for the loop (call_from_thread) would wait for on_unmount, and on_unmount for it, for good."""
    build_sample(store)
    held_while_waiting: list[bool] = []
    real = PoppyApp.call_from_thread

    def watching(self, callback, *args, **kwargs):
        screen = getattr(callback, "__self__", None)
        if screen is not None and hasattr(screen, "_reader_lock"):
            held_while_waiting.append(screen._reader_lock.locked())
        return real(self, callback, *args, **kwargs)

    monkeypatch.setattr(PoppyApp, "call_from_thread", watching)
    app = PoppyApp(make_agent(), initial_screen="history")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: not screen.fetching)
        assert screen.total == Store.count_operations(store) and screen.total > 0
    assert len(held_while_waiting) >= 2  # the page, then the count
    assert not any(held_while_waiting)


async def test_closing_while_a_page_is_being_read_waits_for_that_read_and_shows_nothing_after(
    store, monkeypatch, make_agent
):
    build_sample(store)
    entered, release = hold_in_worker_threads(monkeypatch, "list_operations")
    app = PoppyApp(make_agent(), initial_screen="history")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        await wait_for(pilot, entered.is_set)
        assert entered.is_set() and screen.fetching
        # The app closes (unmounting the screen) while the loader is inside its query; the
        # query ends a moment later.
        threading.Timer(0.3, release.set).start()
    # Before, the closing screen waited for the loader's lock while the loader, still holding
    # it, waited for the event loop to show its page: the app never finished closing.
    assert screen._closed and screen._reader is None  # closed once the read let go of it
    assert screen.rows == []  # the page that arrived after the close was not shown
