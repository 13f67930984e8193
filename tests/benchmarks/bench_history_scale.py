"""The history-at-scale target (docs/benchmarks.md): the history screen opening at 1,000,000 records against 100,000.

Each round spawns tests/benchmarks/tui_child.py (the TUI as `poppy-tui` starts it, first screen
history) on a fresh 120x36 pty, once per store, interleaved; the clock stops when the first page
(its pager line "1–50 of") reaches the terminal. The count of all records follows in a thread and
is not waited for. Memory: the child's resident set (VmRSS) and its peak (VmHWM) once the count
has arrived too, i.e. with the page and SQLite's cache as they stay.
"""

from __future__ import annotations

import re
import statistics
import time
from pathlib import Path

import pty_harness
from common import BENCH_DIR, PYTHON, Figure, Samples

SECTION = "History at scale (pty)"
TARGET = 1.5


def _memory_mb(pid: int) -> tuple[float, float]:
    fields = dict(
        line.split(":", 1)
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if ":" in line
    )
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def open_history(home: Path, count: int) -> tuple[float, float, float]:
    """(ms to the first page on the pty, RSS MB, peak RSS MB once the count is shown)."""
    running = pty_harness.start(
        [PYTHON, str(BENCH_DIR / "tui_child.py"), str(home), "history"], ["1–50 of"]
    )
    try:
        deadline = time.perf_counter() + 120
        counted = re.compile(rf"of {count}\b")
        while (
            not counted.search(pty_harness.visible_text(bytes(running.output)))
            and time.perf_counter() < deadline
        ):
            running.drain(0.2)
        rss, peak = _memory_mb(running.proc.pid)
        return running.first_frame_ms, rss, peak
    finally:
        running.stop()


def run(homes: dict[int, Path], rounds: int) -> list[Figure]:
    small, big = sorted(homes)
    times = {n: Samples() for n in homes}
    memory: dict[int, list[tuple[float, float]]] = {n: [] for n in homes}
    ratios: list[float] = []
    for n, home in homes.items():  # warm the OS cache: "opens" means a new process, not a cold disk
        open_history(home, n)
    for _ in range(rounds):
        got = {}
        for n, home in homes.items():
            ms, rss, peak = open_history(home, n)
            times[n].values.append(ms)
            memory[n].append((rss, peak))
            got[n] = ms
        ratios.append(got[big] / got[small])
    figures = [
        Figure(
            SECTION,
            f"history opens, {big:,} / {small:,} records",
            statistics.median(ratios),
            "x",
            f"first page on the pty: {times[big].text()} at {big:,}, {times[small].text()} at {small:,}; "
            f"per-round ratios {min(ratios):.2f}x–{max(ratios):.2f}x over {rounds} interleaved rounds",
            TARGET,
            f"<= {TARGET}x",
        ),
    ]
    for n in (small, big):
        rss = statistics.median(m[0] for m in memory[n])
        peak = statistics.median(m[1] for m in memory[n])
        figures.append(
            Figure(
                SECTION,
                f"memory with history open, {n:,} records (RSS)",
                rss,
                "MB",
                f"peak RSS {peak:,.1f} MB; the count shown; one page of 50 rows held",
            )
        )
    return figures


def make_home(root: Path, count: int) -> Path:
    """A home with `count` records of every state (fill.py), kept under `root` once complete."""
    import shutil

    import fill
    from common import write_home
    from poppy_tui.agent.paths import resolve_paths

    home = root / f"history-{count}"
    if (home / "complete").exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    write_home(home)
    fill.build(resolve_paths(home).database, count)
    (home / "complete").touch()
    return home
