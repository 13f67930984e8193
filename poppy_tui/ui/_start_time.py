"""Imported before Textual, so 'started in N ms' counts Textual's own import too (Posting's idea)."""

from __future__ import annotations

import os
import time

START_NS = time.perf_counter_ns()


def process_age_ms() -> float | None:
    """Milliseconds since the process started (Linux), which also covers interpreter start-up."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start_ticks = int(fields[19])
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        return (uptime - start_ticks / os.sysconf("SC_CLK_TCK")) * 1000.0
    except (OSError, ValueError, IndexError):
        return None


def elapsed_ms() -> float:
    return (time.perf_counter_ns() - START_NS) / 1e6
