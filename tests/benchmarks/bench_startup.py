"""TUI cold start to first paint: a fresh interpreter per run, headless, best and median of N."""

from __future__ import annotations

import json
import select
import subprocess
import time
from pathlib import Path

from common import BENCH_DIR, PYTHON, REPO, Figure, Samples, child_env

TARGET_MS = 500.0


def one_start(home: Path) -> tuple[float, dict]:
    """Wall time from spawning the process to its first-paint line, as the parent sees it."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [PYTHON, str(BENCH_DIR / "startup_child.py"), str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=child_env(),
        cwd=str(REPO),
    )
    assert proc.stdout is not None
    line = b""
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        if not ready:
            proc.kill()
            raise RuntimeError("the TUI never painted")
        chunk = proc.stdout.read1(4096) if hasattr(proc.stdout, "read1") else proc.stdout.read(1)
        if not chunk:
            raise RuntimeError(
                f"startup child exited: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}"
            )
        line += chunk
    wall = (time.perf_counter() - started) * 1000
    proc.wait(60)
    return wall, json.loads(line.decode())


def run(homes: dict[str, Path], repeat: int) -> list[Figure]:
    figures: list[Figure] = []
    for label, home in homes.items():
        one_start(
            home
        )  # warm the OS file cache and .pyc files: "cold" means a new process, not a cold disk
        wall, inner, app_ms = Samples(), Samples(), Samples()
        for _ in range(repeat):
            ms, report = one_start(home)
            wall.values.append(ms)
            inner.values.append(report["ready_ms_since_main"])
            if report.get("app_startup_ms") is not None:
                app_ms.values.append(report["app_startup_ms"])
        detail = (
            f"spawn to first frame; {wall.text()}. In-process (after interpreter start-up): "
            f"{inner.text()}; PoppyApp.startup_ms median {app_ms.median:,.0f} ms"
        )
        target = TARGET_MS if label == "empty store" else None
        figures.append(
            Figure(
                "TUI cold start",
                f"first paint, {label} (median)",
                wall.median,
                "ms",
                detail,
                target,
                "< 500 ms" if target else "",
            )
        )
        figures.append(
            Figure(
                "TUI cold start",
                f"first paint, {label} (best)",
                wall.best,
                "ms",
                "",
                target,
                "< 500 ms" if target else "",
            )
        )
    return figures
