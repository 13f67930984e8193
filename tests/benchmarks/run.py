"""poppy-tui benchmarks: prints figures and ratios, writes tests/benchmarks/results.md.

    python tests/benchmarks/run.py [--quick] [--records N] [--only startup,summary,history,memory,roundtrip,...]
                                   [--stores DIR] [--history-scale N]

firstframe, idle and historyscale build stores of 50,000 pending operations and of 100,000 and
1,000,000 records (the last takes minutes and ~2 GB); --stores DIR keeps them for later runs.
commands (cost per command, docs/benchmarks.md) uses httpie's `http` as its anchor when installed
(`pip install httpie`), else curl; sending (target 3) sends 1,000 approvals.
suite reports the whole suite's wall time: the last recorded run's, or timed now with --run-suite.
peers compares the empty store's first frame with Posting's and Harlequin's (bench_peers.py): they
are optional anchors, never poppy-tui dependencies, installed with pip into their own venvs under
--peers-venvs DIR (default STORES/peers) on first use, and skipped with a note when that fails.

Targets are printed next to the figures as PASS/MISS, for information only: a missed target
never fails the run (exit 0). Only a benchmark that crashes makes the exit status 1.
Not collected by pytest (pyproject: norecursedirs).
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import datetime, UTC
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parents[1]))

from common import REPO, Figure, write_home  # noqa: E402

SECTIONS = ("startup", "summary", "history", "memory", "roundtrip")
# The first-frame, idle/keystroke and history-at-scale targets, measured in a real pty (pty_harness.py).
SECTIONS += ("firstframe", "idle", "historyscale")
# The per-command and sending targets (bench_commands.py, bench_sending.py); the round trip is roundtrip.
SECTIONS += ("commands", "sending")
# The first frame against Posting and Harlequin (bench_peers.py), for scale.
SECTIONS += ("peers",)
# The suite's wall time (bench_suite.py): the last whole run's, or timed afresh with --run-suite.
SECTIONS += ("suite",)


def _machine() -> str:
    import textual

    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
        ).stdout.strip()
    except OSError:
        commit = "?"
    return (
        f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs ({cpu or platform.machine()}), "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, Textual {textual.__version__}, "
        f"commit {commit}"
    )


def _table(figures: list[Figure]) -> list[str]:
    rows = [("Section", "Figure", "Value", "Target", "")]
    rows += [(f.section, f.name, f.shown(), f.target_text, f.verdict) for f in figures]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def _markdown(
    figures: list[Figure], errors: list[str], machine: str, args: argparse.Namespace, seconds: float
) -> str:
    out = [
        "# Benchmark results",
        "",
        "Written by `python tests/benchmarks/run.py` on every run; quote from here. Targets are information only.",
        "",
        f"- When: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}, {seconds:.0f} s"
        + (" (--quick)" if args.quick else ""),
        f"- Machine: {machine}",
        f"- Records for history and memory: {args.records:,}",
        "",
        "| Section | Figure | Value | Target | Result |",
        "| --- | --- | ---: | --- | --- |",
    ]
    for f in figures:
        out.append(f"| {f.section} | {f.name} | {f.shown()} | {f.target_text} | {f.verdict} |")
    out += ["", "## Details", ""]
    for f in figures:
        if f.detail:
            out.append(f"- **{f.section}, {f.name}:** {f.detail}")
    if errors:
        out += ["", "## Errors", ""] + [f"- {e}" for e in errors]
    out += [
        "",
        "How each figure is made: see the docstrings of tests/benchmarks/bench_*.py. The 100,000-record store is",
        "seeded through the real Store API and replicated row by row (tests/benchmarks/fill.py).",
        "",
    ]
    return "\n".join(out)


def _pty_section(section: str, args: argparse.Namespace, stores: Path) -> list[Figure]:
    stores.mkdir(parents=True, exist_ok=True)
    if section == "firstframe":
        import bench_firstframe

        homes = bench_firstframe.make_homes(stores, (0, 500, 50_000))
        return bench_firstframe.run(homes, 3 if args.quick else 9)
    if section == "idle":
        import bench_firstframe
        import bench_idle

        homes = bench_firstframe.make_homes(stores, (10, 50_000))
        return bench_idle.run(
            homes,
            50_000,
            10,
            20 if args.quick else 60,
            settle=8.0,
            window=5.0 if args.quick else 15.0,
        )
    import bench_history_scale

    homes = {n: bench_history_scale.make_home(stores, n) for n in (100_000, args.history_scale)}
    return bench_history_scale.run(homes, 3 if args.quick else 7)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    parser.add_argument(
        "--records", type=int, default=100_000, help="history size (default 100,000)"
    )
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument("--output", type=Path, default=HERE / "results.md")
    parser.add_argument(
        "--stores",
        type=Path,
        default=None,
        help="keep the pty sections' stores here and reuse them (default: a temporary directory)",
    )
    parser.add_argument(
        "--history-scale",
        type=int,
        default=1_000_000,
        help="the large history compared with 100,000 records (default 1,000,000)",
    )
    parser.add_argument(
        "--peers-venvs",
        type=Path,
        default=None,
        help="the peers section's venvs of Posting and Harlequin (default: STORES/peers; "
        "without --stores they are installed afresh in every run)",
    )
    parser.add_argument(
        "--run-suite",
        action="store_true",
        help="time `python -m pytest -q` now for the suite section, instead of reading the last "
        "whole run's record (bench_suite.py)",
    )
    args = parser.parse_args(argv)
    wanted = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(wanted) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; known: {', '.join(SECTIONS)}")

    began = time.perf_counter()
    machine = _machine()
    print(f"poppy-tui benchmarks — {machine}\n")
    figures: list[Figure] = []
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="poppy-bench-") as scratch:
        root = Path(scratch)
        empty = write_home(root / "empty")
        big = write_home(root / "big")
        need_big = {"startup", "history", "memory"} & set(wanted)
        if need_big:
            import fill
            from poppy_tui.agent.paths import resolve_paths

            started = time.perf_counter()
            database = fill.build(resolve_paths(big).database, args.records)
            size_mb = database.stat().st_size / 2**20
            print(
                f"filled a store with {args.records:,} operations in {time.perf_counter() - started:.1f} s "
                f"({size_mb:.0f} MB)\n"
            )
        for section in wanted:
            print(f"[{section}] ...", flush=True)
            try:
                if section == "startup":
                    import bench_startup

                    got = bench_startup.run(
                        {"empty store": empty, f"{args.records // 1000}k records": big},
                        3 if args.quick else 9,
                    )
                elif section == "summary":
                    import bench_summary

                    got = bench_summary.run(quick=args.quick)
                elif section == "history":
                    import bench_history
                    from poppy_tui.agent.paths import resolve_paths

                    got = bench_history.store_figures(
                        resolve_paths(big).database, args.records, 3 if args.quick else 7
                    )
                    got += bench_history.tui_figures(big, args.records)
                elif section == "memory":
                    import bench_memory

                    got = bench_memory.run(
                        {f"{args.records // 1000}k records": big, "empty store": empty}
                    )
                elif section in ("firstframe", "idle", "historyscale"):
                    got = _pty_section(section, args, args.stores or root / "stores")
                elif section == "roundtrip":
                    import bench_roundtrip

                    got = bench_roundtrip.run(20 if args.quick else 100)
                elif section == "commands":
                    import bench_commands

                    got = bench_commands.run(5 if args.quick else 15)
                elif section == "sending":
                    import bench_sending

                    got = bench_sending.run(200 if args.quick else 1000, 1 if args.quick else 5)
                elif section == "suite":
                    import bench_suite

                    got = bench_suite.run(fresh=args.run_suite)
                elif section == "peers":
                    import bench_peers

                    stores = args.stores or root / "stores"
                    stores.mkdir(parents=True, exist_ok=True)
                    got = bench_peers.run(stores, 3 if args.quick else 9, args.peers_venvs)
            except Exception as exc:  # noqa: BLE001 - report and go on with the others
                traceback.print_exc()
                errors.append(f"{section}: {type(exc).__name__}: {exc}")
                continue
            figures.extend(got)
            for f in got:
                print(
                    f"  {f.name}: {f.shown()}"
                    + (f"   target {f.target_text}: {f.verdict}" if f.target_text else "")
                )
    seconds = time.perf_counter() - began
    print()
    print("\n".join(_table(figures)))
    if errors:
        print("\nERRORS:\n" + "\n".join(errors))
    args.output.write_text(_markdown(figures, errors, machine, args, seconds))
    print(
        f"\nwritten to {args.output.relative_to(REPO) if args.output.is_relative_to(REPO) else args.output} "
        f"({seconds:.0f} s)"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
