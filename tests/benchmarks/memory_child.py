"""Memory of a process holding the store and the history screen.

usage: memory_child.py HOME -> prints one JSON line
RSS is read from /proc/self/status; the Python heap from tracemalloc (started after imports).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import tracemalloc


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def main(home: str) -> dict[str, float]:
    from textual.widgets import DataTable

    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.config import load_config
    from poppy_tui.agent.paths import resolve_paths
    from poppy_tui.ui.app import PoppyApp

    report = {"rss_after_imports": rss_mb()}
    tracemalloc.start()
    paths = resolve_paths(home)
    agent = Agent.open(paths, load_config(paths))
    report["rss_store_open"] = rss_mb()
    app = PoppyApp(agent, initial_screen="history")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        table = screen.query_one("#history-table", DataTable)
        deadline = time.monotonic() + 60
        while screen.fetching or not str(
            screen.query_one("#history-pager").render()
        ):  # the pager text = page shown
            assert time.monotonic() < deadline, "the history page never arrived"
            await asyncio.sleep(0.01)
        for _ in range(5):
            await pilot.press("right_square_bracket")
            while screen.fetching:
                await asyncio.sleep(0.01)
        report["rss_history_shown"] = rss_mb()
        current, peak = tracemalloc.get_traced_memory()
        report["py_heap_now"] = current / 2**20
        report["py_heap_peak"] = peak / 2**20
        report["records"] = screen.total
        report["rows_in_table"] = table.row_count
    await agent.aclose()
    return report


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1]))), flush=True)
