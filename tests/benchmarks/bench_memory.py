"""Memory at 100,000 records against an empty store, each in its own fresh process."""

from __future__ import annotations

import json
from pathlib import Path

from common import Figure, run_child


def run(homes: dict[str, Path]) -> list[Figure]:
    reports = {
        label: json.loads(run_child("memory_child.py", str(home)).stdout)
        for label, home in homes.items()
    }
    figures: list[Figure] = []
    for label, r in reports.items():
        figures.append(
            Figure(
                "Memory",
                f"RSS, store + history screen, {label}",
                r["rss_history_shown"],
                "MB",
                f"after imports {r['rss_after_imports']:.1f} MB, store open {r['rss_store_open']:.1f} MB; "
                f"{r['records']:,} records, {r['rows_in_table']} rows in the table",
            )
        )
        figures.append(
            Figure(
                "Memory",
                f"Python heap peak (tracemalloc), {label}",
                r["py_heap_peak"],
                "MB",
                f"now {r['py_heap_now']:.1f} MB, from opening the store to 5 page turns",
            )
        )
    if len(reports) == 2:
        (big_label, big), (small_label, small) = sorted(
            reports.items(), key=lambda kv: -kv[1]["records"]
        )
        figures.append(
            Figure(
                "Memory",
                f"RSS cost of the records ({big_label} minus {small_label})",
                big["rss_history_shown"] - small["rss_history_shown"],
                "MB",
                "one page of 50 rows is held at a time; the rest is SQLite's page cache",
            )
        )
    return figures
