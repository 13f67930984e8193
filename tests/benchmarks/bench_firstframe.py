"""The first-frame target (docs/benchmarks.md): the TUI's first frame in a real pty, as a ratio to a minimal Textual app.

Each round spawns, in turn, the anchor (tests/benchmarks/anchor_app.py: one Static) and
`python -m poppy_tui --home HOME` for each home (0, 500 and 50,000 pending operations), each on
a fresh 120x36 pty, and stops the clock when the terminal has received the screen's expected
text (pty_harness.py): for poppy, the inbox with its rows, not merely its frame. Rounds are
interleaved so drift on the shared machine hits every figure alike; the figure is the median
of the per-round ratios, with their spread.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pty_harness
from common import BENCH_DIR, PYTHON, Figure, Samples

TARGET = 1.3
SECTION = "First frame (pty)"


def expected_for(pending: int) -> list[str]:
    if pending == 0:
        return ["Nothing is waiting for you"]
    return ["Waiting for your decision (", "Manzanita"]


def poppy_frame(home: Path, pending: int) -> float:
    running = pty_harness.start(
        [PYTHON, "-m", "poppy_tui", "--home", str(home)], expected_for(pending)
    )
    running.stop()
    return running.first_frame_ms


def anchor_frame() -> float:
    running = pty_harness.start(
        [PYTHON, str(BENCH_DIR / "anchor_app.py")], ["minimal textual app ready"]
    )
    running.stop()
    return running.first_frame_ms


def run(homes: dict[int, Path], rounds: int) -> list[Figure]:
    anchor = Samples()
    times = {pending: Samples() for pending in homes}
    ratios: dict[int, list[float]] = {pending: [] for pending in homes}
    anchor_frame()  # warm .pyc files and the OS cache: "cold" means a new process, not a cold disk
    for pending, home in homes.items():
        poppy_frame(home, pending)
    for _ in range(rounds):
        a = anchor_frame()
        anchor.values.append(a)
        for pending, home in homes.items():
            ms = poppy_frame(home, pending)
            times[pending].values.append(ms)
            ratios[pending].append(ms / a)
    figures = [
        Figure(
            SECTION, "anchor: minimal Textual app (one Static)", anchor.median, "ms", anchor.text()
        )
    ]
    for pending in homes:
        r = ratios[pending]
        figures.append(
            Figure(
                SECTION,
                f"first frame, {pending:,} pending / anchor",
                statistics.median(r),
                "x",
                f"poppy {times[pending].text()}; anchor {anchor.text()}; per-round ratios {min(r):.2f}x–{max(r):.2f}x "
                f"over {len(r)} interleaved rounds; clock stops when the inbox's text reaches the pty",
                TARGET,
                f"<= {TARGET}x",
            )
        )
    return figures


def make_home(root: Path, pending: int) -> Path:
    """A home whose inbox holds `pending` operations; kept under `root` once complete."""
    import fill
    from common import write_home
    from poppy_tui.agent.paths import resolve_paths

    home = root / f"pending-{pending}"
    if (home / "complete").exists():
        return home
    import shutil

    shutil.rmtree(home, ignore_errors=True)
    write_home(home)
    if pending:
        fill.build(resolve_paths(home).database, pending, pending=True)
    (home / "complete").touch()
    return home


def make_homes(root: Path, sizes: tuple[int, ...] = (0, 500, 50_000)) -> dict[int, Path]:
    return {pending: make_home(root, pending) for pending in sizes}
