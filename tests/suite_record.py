"""What the last whole run of the suite took, kept where the benchmarks read it
(tests/benchmarks/bench_suite.py): tests/conftest.py writes it at the end of a run that selected
the whole suite (no paths, -k or -m), in the machine's cache folder, not in the checkout. Set
POPPY_TUI_SUITE_RECORD to keep it elsewhere."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def record_path() -> Path:
    chosen = os.environ.get("POPPY_TUI_SUITE_RECORD")
    if chosen:
        return Path(chosen)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "poppy-tui" / "last-suite.json"


def write(record: dict[str, Any]) -> None:
    path = record_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(record, indent=1) + "\n")
        temporary.replace(path)
    except OSError:
        pass  # a read-only home: the benchmark then says no run was recorded


def read() -> dict[str, Any] | None:
    try:
        return json.loads(record_path().read_text())
    except (OSError, ValueError):
        return None
