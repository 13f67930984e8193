"""The suite's wall time: how long the README's test command, `python -m pytest`, takes for the
whole suite (in parallel, as pyproject's addopts run it), against the project's limit of 20
minutes.

By default the figure is the last whole run's, as tests/conftest.py recorded it when it ended
(tests/suite_record.py: when, which commit and checkout, how many workers, how many tests, its
exit status): a benchmark run doesn't run the suite again, which on the 2-core machine would
double its length and load the machine under the other sections' figures. `--run-suite` times
`python -m pytest -q` afresh, in this checkout, instead (its record is then the one reported).
"""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime, UTC

from common import REPO, Figure

LIMIT_SECONDS = 20 * 60


def run(fresh: bool = False) -> list[Figure]:
    sys.path.insert(0, str(REPO))
    from tests import suite_record

    if fresh:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q"], cwd=REPO, capture_output=True, text=True
        )
        took = time.perf_counter() - started
        if done.returncode not in (0, 1):
            raise RuntimeError(
                f"python -m pytest -q exited {done.returncode}: {done.stdout[-2000:]}"
            )
    record = suite_record.read()
    if record is None:
        return [
            Figure(
                "Suite",
                "whole suite, wall time",
                float("nan"),
                "s",
                f"no whole run recorded at {suite_record.record_path()}: run `python -m pytest` "
                "(or this section with --run-suite)",
            )
        ]
    when = datetime.fromtimestamp(record["finished"], UTC).strftime("%Y-%m-%d %H:%M UTC")
    detail = (
        f"{'timed now' if fresh else 'the last whole run'}: {when}, commit {record['commit']} in "
        f"{record['root']}, Python {record['python']}, {record['workers']} workers, "
        f"{record['collected']} tests, {record['failed']} failed, exit {record['exit']}"
    )
    if fresh:
        detail += f"; the process took {took:.0f} s"
    return [
        Figure(
            "Suite",
            "whole suite, wall time (python -m pytest)",
            float(record["seconds"]),
            "s",
            detail,
            LIMIT_SECONDS,
            f"<= {LIMIT_SECONDS} s (20 min)",
        )
    ]
