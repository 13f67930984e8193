"""The idle-CPU and keystroke targets (docs/benchmarks.md): idle CPU with 50,000 pending
operations, and keystroke latency at 50,000 pending against 10, both measured on the real
`python -m poppy_tui` in a pty.

Idle: after the first frame and a settling period (the first start checks the rows it shows, once,
and stores the results), the child's user+system CPU (/proc/PID/stat) over a wall-clock window.
Keystrokes: Down and Up alternate (so a 10-row inbox never runs out of rows) on both TUIs, the two
interleaved key by key; each latency is from writing the key to the pty to the first byte of the
redraw reaching it. The figure compares the slowest 10% (the 90th percentile).
"""

from __future__ import annotations

import os
import select
import statistics
import time
from pathlib import Path

import pty_harness
from bench_firstframe import expected_for
from common import PYTHON, Figure

SECTION = "Idle and keys (pty)"
CPU_TARGET = 0.5  # percent of one core
KEY_TARGET = 1.2
KEYS = (b"\x1b[B", b"\x1b[A")  # Down, Up


def _spawn(home: Path, pending: int) -> pty_harness.Running:
    return pty_harness.start(
        [PYTHON, "-m", "poppy_tui", "--home", str(home)], expected_for(pending)
    )


def idle_cpu(home: Path, pending: int, settle: float, window: float) -> tuple[float, float]:
    """(percent of one core while idle, first frame ms)."""
    running = _spawn(home, pending)
    try:
        running.drain(settle)
        cpu, wall = running.cpu_seconds(), time.perf_counter()
        running.drain(window)
        used = running.cpu_seconds() - cpu
        return used / (time.perf_counter() - wall) * 100, running.first_frame_ms
    finally:
        running.stop()


def _key_latency(running: pty_harness.Running, key: bytes) -> float | None:
    running.drain(0.0)
    while select.select([running.master], [], [], 0)[
        0
    ]:  # anything still arriving belongs to before
        running.output += os.read(running.master, 65536)
    started = time.perf_counter()
    running.write(key)
    ready, _, _ = select.select([running.master], [], [], 5.0)
    if not ready:
        return None
    took = (time.perf_counter() - started) * 1000
    running.output += os.read(running.master, 65536)
    running.drain(0.03)  # the rest of the redraw
    return took


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def run(
    homes: dict[int, Path], big: int, small: int, presses: int, settle: float, window: float
) -> list[Figure]:
    percent, _ = idle_cpu(homes[big], big, settle, window)
    figures = [
        Figure(
            SECTION,
            f"idle CPU, {big:,} pending",
            percent,
            "%",
            f"one core's share over {window:g} s after {settle:g} s settling; the child's /proc user+system time",
            CPU_TARGET,
            f"< {CPU_TARGET:g}%",
        )
    ]
    anchor_idle = pty_harness.start(
        [PYTHON, str(Path(__file__).with_name("anchor_app.py"))], ["minimal textual app ready"]
    )
    try:
        anchor_idle.drain(settle)
        cpu, wall = anchor_idle.cpu_seconds(), time.perf_counter()
        anchor_idle.drain(window)
        anchor_percent = (anchor_idle.cpu_seconds() - cpu) / (time.perf_counter() - wall) * 100
    finally:
        anchor_idle.stop()
    figures.append(
        Figure(SECTION, "idle CPU, minimal Textual app (for scale)", anchor_percent, "%", "")
    )

    tuis = {size: _spawn(homes[size], size) for size in (big, small)}
    latencies: dict[int, list[float]] = {big: [], small: []}
    lost = {big: 0, small: 0}
    try:
        for running in tuis.values():
            running.drain(settle)
        for n in range(presses):
            for size, running in tuis.items():
                took = _key_latency(running, KEYS[n % 2])
                if took is None:
                    lost[size] += 1
                else:
                    latencies[size].append(took)
    finally:
        for running in tuis.values():
            running.stop()
    slow_big, slow_small = p90(latencies[big]), p90(latencies[small])
    detail = (
        f"90th percentile of {len(latencies[big])} and {len(latencies[small])} Down/Up presses, interleaved: "
        f"{slow_big:.1f} ms at {big:,} pending vs {slow_small:.1f} ms at {small}; medians "
        f"{statistics.median(latencies[big]):.1f} vs {statistics.median(latencies[small]):.1f} ms; "
        f"key to first byte of the redraw in the pty; presses with no redraw in 5 s: {lost[big]} and {lost[small]}"
    )
    figures.append(
        Figure(
            SECTION,
            f"slowest 10% of keys, {big:,} / {small} pending",
            slow_big / slow_small,
            "x",
            detail,
            KEY_TARGET,
            f"<= {KEY_TARGET}x",
        )
    )
    return figures
