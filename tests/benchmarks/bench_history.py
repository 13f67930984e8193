"""History with 100,000 records: the Store's first page and count, and the TUI's history
screen (mount to first page, cursor moves, page turns), driven by Textual's Pilot."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from common import Figure, Samples, timed

TARGET_MS = 1000.0


def store_figures(database: Path, count: int, repeat: int) -> list[Figure]:
    from poppy_tui.agent.store import Status, Store

    figures: list[Figure] = []
    opened = Samples()
    for _ in range(3):
        started = time.perf_counter()
        store = Store.open(database)
        opened.values.append((time.perf_counter() - started) * 1000)
        store.close()
    store = Store.open(database)
    try:
        first_page, rows = timed(
            lambda: (store.count_operations(), store.list_operations(limit=50)), repeat
        )
        total, page = rows  # type: ignore[misc]
        assert total == count and len(page) == 50, (total, len(page))
        open_and_page = opened.median + first_page.median
        figures.append(
            Figure(
                "History, 100k",
                "Store.open (schema version check)",
                opened.median,
                "ms",
                opened.text(),
            )
        )
        figures.append(
            Figure(
                "History, 100k",
                "count + first page of 50",
                first_page.median,
                "ms",
                first_page.text(),
            )
        )
        figures.append(
            Figure(
                "History, 100k",
                "history open: Store.open + count + first page",
                open_and_page,
                "ms",
                "what opening history costs from nothing",
                TARGET_MS,
                "< 1 s",
            )
        )
        searched, found = timed(
            lambda: (
                store.count_operations(text="Coffee"),
                store.list_operations(text="Coffee", limit=50),
            ),
            repeat,
        )
        figures.append(
            Figure(
                "History, 100k",
                "text search ('Coffee') count + page",
                searched.median,
                "ms",
                f"{searched.text()}; {found[0]:,} matches",
            )
        )  # type: ignore[index]
        waiting, found = timed(
            lambda: (
                store.count_operations([Status.PENDING, Status.WITHDRAWN]),
                store.list_operations([Status.PENDING, Status.WITHDRAWN], limit=50),
            ),
            repeat,
        )
        figures.append(
            Figure(
                "History, 100k",
                "status filter (inbox: pending) count + page",
                waiting.median,
                "ms",
                f"{waiting.text()}; {found[0]:,} matches",
            )
        )  # type: ignore[index]
        deep, _ = timed(lambda: store.list_operations(limit=50, offset=count - 50), repeat)
        figures.append(
            Figure("History, 100k", "last page (OFFSET 99,950)", deep.median, "ms", deep.text())
        )
        detail, _ = timed(lambda: store.get_operation(page[0].id), repeat)
        figures.append(
            Figure(
                "History, 100k",
                "one record in full (get_operation)",
                detail.median,
                "ms",
                detail.text(),
            )
        )
    finally:
        store.close()
    return figures


async def _pilot_floor() -> float:
    """What one Pilot key press costs on a bare 50-row DataTable: Pilot waits for idle between
    keys, so this floor is in every per-key figure below."""
    from textual.app import App
    from textual.widgets import DataTable

    class Bare(App[None]):
        def compose(self):
            yield DataTable(cursor_type="row")

        def on_mount(self) -> None:
            table = self.query_one(DataTable)
            table.add_columns(*"abcdefgh")
            for i in range(50):
                table.add_row(*(f"{c}{i} " * 3 for c in "abcdefgh"))

    app = Bare()
    async with app.run_test(size=(120, 36)) as pilot:
        app.query_one(DataTable).focus()
        await pilot.pause()
        started = time.perf_counter()
        for _ in range(49):
            await pilot.press("down")
        return (time.perf_counter() - started) * 1000 / 49


async def _tui(home: Path, count: int) -> dict[str, float]:
    from textual.widgets import DataTable

    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.config import load_config
    from poppy_tui.agent.paths import resolve_paths
    from poppy_tui.ui.app import PoppyApp
    from poppy_tui.ui.screens.history import PAGE_SIZE

    figures: dict[str, float] = {"floor": await _pilot_floor()}
    started = time.perf_counter()
    paths = resolve_paths(home)
    agent = Agent.open(paths, load_config(paths))
    app = PoppyApp(agent, initial_screen="history")
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            screen = app.screen
            table = screen.query_one("#history-table", DataTable)

            async def loaded(timeout: float = 30.0) -> None:
                deadline = time.perf_counter() + timeout
                while screen.fetching or table.row_count == 0:
                    if time.perf_counter() > deadline:
                        raise RuntimeError("the history page never arrived")
                    await asyncio.sleep(0.002)

            await loaded()
            figures["mount"] = (time.perf_counter() - started) * 1000
            assert screen.total == count and table.row_count == PAGE_SIZE, (
                screen.total,
                table.row_count,
            )
            table.focus()
            await pilot.pause()
            moves = PAGE_SIZE - 1
            started = time.perf_counter()
            for _ in range(moves):
                await pilot.press("down")
            figures["cursor"] = (time.perf_counter() - started) * 1000 / moves
            assert table.cursor_row == PAGE_SIZE - 1
            turns = Samples()
            for _ in range(20):
                started = time.perf_counter()
                await pilot.press("right_square_bracket")
                await loaded()
                turns.values.append((time.perf_counter() - started) * 1000)
            figures["page"] = turns.median
            figures["page_best"] = turns.best
            assert screen.page == 20
            started = time.perf_counter()
            screen.page = screen.pages - 1
            screen.refresh_data()
            await loaded()
            figures["last_page"] = (time.perf_counter() - started) * 1000
    finally:
        await agent.aclose()
    return figures


def tui_figures(home: Path, count: int) -> list[Figure]:
    got = asyncio.run(_tui(home, count))
    return [
        Figure(
            "History, 100k",
            "TUI: Agent.open + history screen mounted, first page shown",
            got["mount"],
            "ms",
            "PoppyApp(initial_screen='history') under Pilot, 120x36, imports already warm",
            TARGET_MS,
            "< 1 s",
        ),
        Figure(
            "History, 100k",
            "TUI: cursor down, per key",
            got["cursor"],
            "ms",
            f"49 presses through one page; Pilot's own floor per key (bare 50-row DataTable) is {got['floor']:.1f} ms, "
            f"so the history screen adds {got['cursor'] - got['floor']:.1f} ms",
        ),
        Figure(
            "History, 100k",
            "TUI: next page ( ] ), per page (median)",
            got["page"],
            "ms",
            f"20 page turns, best {got['page_best']:.1f} ms, including the {got['floor']:.0f} ms Pilot floor; "
            "each is count + page in a worker thread, then 50 rows drawn",
        ),
        Figure(
            "History, 100k",
            "TUI: jump to the last page",
            got["last_page"],
            "ms",
            "page 2,000 of 2,000",
        ),
    ]
