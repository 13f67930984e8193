"""Cost per command: whole processes, from spawn to exit, as ratios to anchors run in the same rounds.

  call     `poppy-tui call COMPANY GET /api/bookings/bkg_2Fm8` (one GET to the demo Company on
           loopback, in a process of its own) against httpie (`http`) doing the same GET with the
           same Poppy headers (a Session JWT signed beforehand, untimed, for each round), and curl
           for information. If httpie isn't installed (`pip install httpie`), curl is the anchor
           and the figure says so.
  pending  `poppy-tui pending --json` with PENDING (10,000) operations pending, against its floor
           (below; the target) and `python -c pass` (the same interpreter; for information).
  pending (none)  the same command with nothing pending: what it costs before any operation.
  floor    a six-line sqlite3 script (_FLOOR_SCRIPT) printing the same fields of the same 10,000
           operations in the same order, tab-separated: no CLI, no JSON, no checks. The least any
           Python program printing them costs, for scale beside the pending figure.
  show     `poppy-tui show N` (one of those 10,000 pending operations) against `python -c pass`.
  --help   `poppy-tui --help` against `python -c pass`, beside its floor: importing argparse and
           printing an empty parser's help.
curl is always reported beside httpie for `call` (the row is skipped when curl isn't installed).

Every round runs each command once, in an order that rotates from round to round, so drift in
the machine's load hits all of them alike. Figures are the ratio of the medians; the detail gives
the spread (quartiles of the per-round ratios). poppy-tui runs as people run it: the `poppy-tui`
script installed beside this interpreter, with this checkout first on PYTHONPATH, its bytecode
compiled first (as an installed package's is; PYTHONDONTWRITEBYTECODE would otherwise make every
run compile every module again).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, Figure, child_env, write_home

PATH = "/api/bookings/bkg_2Fm8"
PENDING = 10_000
# `pending --json` with 10,000 pending against its floor (the bare sqlite3 script printing the
# same fields): what the command adds beyond reading and printing them (docs/benchmarks.md).
PENDING_TARGET = 2.0


# The least any Python program can do to print the pending operations: open the store, read the
# fields `pending --json` prints for each (joined by SQLite itself, in the list's order) and write
# them out. No argument parsing, no JSON, no checks: the floor under the pending --json figure.
_FLOOR_SCRIPT = """
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
db.execute("PRAGMA temp_store=MEMORY")
out = sys.stdout
for (line,) in db.execute("SELECT o.id || char(9) || o.operation_id || char(9) || c.name || char(9) || c.domain || char(9) || o.status || char(9) || r.summary || char(9) || ifnull(r.terms_json, '') || char(9) || r.expires_at || char(9) || r.revision || char(9) || o.created_at || char(9) || o.updated_at FROM operations o JOIN companies c ON c.id = o.company_id JOIN revisions r ON r.id = o.current_revision_id WHERE o.status IN ('pending', 'approved', 'sending', 'outcome_unknown', 'withdrawn') ORDER BY o.updated_at, o.id"):
    out.write(line + "\\n")
"""


# Under `--help`: importing argparse (with re, gettext and locale) and printing a parser's help,
# which is what any argparse command-line program pays to print its help.
_HELP_FLOOR = "import argparse; argparse.ArgumentParser(prog='x').print_help()"


def _pending_home(root: Path) -> tuple[Path, int]:
    """A home with PENDING operations waiting (fill.py), and the row of one in the middle."""
    import sqlite3

    import fill

    from poppy_tui.agent.paths import resolve_paths

    home = write_home(root / f"pending-{PENDING}")
    database = resolve_paths(home).database
    fill.build(database, PENDING, pending=True)
    with sqlite3.connect(database) as db:
        (row,) = db.execute(
            "SELECT id FROM operations ORDER BY id LIMIT 1 OFFSET ?", (PENDING // 2,)
        ).fetchone()
    return home, int(row)


def _quartiles(values: list[float]) -> str:
    if len(values) < 4:
        return ", ".join(f"{v:.2f}x" for v in sorted(values))
    q = statistics.quantiles(values, n=4)
    return f"quartiles {q[0]:.2f}x / {q[1]:.2f}x / {q[2]:.2f}x"


def _time(argv: list[str], env: dict[str, str], expect_ok: bool = True) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    elapsed = (time.perf_counter() - started) * 1000
    if expect_ok and done.returncode != 0:
        raise RuntimeError(
            f"{argv[0]} {' '.join(argv[1:3])} failed ({done.returncode}): {done.stderr[-2000:]!r}"
        )
    return elapsed


def run(rounds: int) -> list[Figure]:
    from common import CompanyProcess

    from poppy_tui.agent.paths import resolve_paths
    from poppy_tui.demo.testing import AgentSession

    here = Path(sys.executable).parent
    poppy = str(here / "poppy-tui")
    httpie = shutil.which("http", path=str(here)) or shutil.which("http")
    curl = shutil.which("curl")
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "poppy_tui")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    company = CompanyProcess(
        Path(__file__).with_name("company_process.py"), "the benchmark Company"
    )
    try:
        with tempfile.TemporaryDirectory(prefix="poppy-cmd-") as scratch:
            home = write_home(Path(scratch) / "home")
            env = child_env(POPPY_TUI_HOME=str(home))
            done = subprocess.run(
                [poppy, "companies", "add", company.base_url],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            if done.returncode != 0:
                raise RuntimeError(f"companies add failed: {done.stderr[-2000:]}")
            session = AgentSession(company.base_url)
            url = company.base_url + PATH
            pending_home, middle_row = _pending_home(Path(scratch))
            pending_env = child_env(POPPY_TUI_HOME=str(pending_home))

            def anchor_http() -> list[str]:
                headers = [f"{k}:{v}" for k, v in session.headers().items()]
                return [httpie, "--ignore-stdin", "GET", url, *headers]

            def anchor_curl() -> list[str]:
                headers = [arg for k, v in session.headers().items() for arg in ("-H", f"{k}: {v}")]
                return [curl, "-sf", url, *headers]

            floor = [sys.executable, "-c", _FLOOR_SCRIPT, str(resolve_paths(pending_home).database)]
            commands: dict[str, object] = {
                "python -c pass": lambda: [sys.executable, "-c", "pass"],
                "poppy-tui --help": lambda: [poppy, "--help"],
                "floor: argparse printing an empty parser's help": lambda: [
                    sys.executable,
                    "-c",
                    _HELP_FLOOR,
                ],
                f"poppy-tui pending --json ({PENDING:,} pending)": lambda: [
                    poppy,
                    "pending",
                    "--json",
                ],
                "poppy-tui pending --json (none pending)": lambda: [poppy, "pending", "--json"],
                f"floor: sqlite3 script printing the same fields ({PENDING:,} pending)": lambda: (
                    floor
                ),
                f"poppy-tui show ({PENDING:,} pending)": lambda: [poppy, "show", str(middle_row)],
                "poppy-tui call": lambda: [poppy, "call", company.base_url, "GET", PATH],
            }
            if httpie:
                commands["http (httpie)"] = anchor_http
            if curl:
                commands["curl"] = anchor_curl
            # The commands that read the 10,000 pending operations run in their home.
            envs = {
                name: pending_env if f"({PENDING:,} pending)" in name else env for name in commands
            }
            names = list(commands)
            times: dict[str, list[float]] = {n: [] for n in names}
            for n in range(rounds + 1):  # round 0 warms the page cache and is not counted
                order = names[n % len(names) :] + names[: n % len(names)]
                for name in order:
                    elapsed = _time(commands[name](), envs.get(name, env))  # type: ignore[operator]
                    if n:
                        times[name].append(elapsed)
    finally:
        company.stop()

    med = {n: statistics.median(v) for n, v in times.items()}

    def ratio(a: str, b: str) -> tuple[float, str]:
        per_round = [x / y for x, y in zip(times[a], times[b], strict=True)]
        return (
            med[a] / med[b],
            f"{med[a]:.0f} ms vs {med[b]:.0f} ms (medians); per-round {_quartiles(per_round)}; n={len(per_round)}",
        )

    figures: list[Figure] = []
    section = "Cost per command"
    for name in names:
        figures.append(
            Figure(
                section,
                f"{name} (median)",
                med[name],
                "ms",
                f"best {min(times[name]):.0f} ms, worst {max(times[name]):.0f} ms, n={len(times[name])}",
            )
        )
    anchor = "http (httpie)" if httpie else "curl"
    value, detail = ratio("poppy-tui call", anchor)
    note = (
        "" if httpie else " (httpie is not installed here: curl is the anchor, a far stricter one)"
    )
    if not curl:
        note += "; curl is not installed here: no curl row"
    elif httpie:
        note += (
            f"; curl {med['curl']:.0f} ms ({med['poppy-tui call'] / med['curl']:.2f}x, next row)"
        )
    figures.append(
        Figure(
            section,
            f"call (one GET) / {anchor.split()[0]}",
            value,
            "x",
            detail + note,
            1.0,
            "<= 1.0x",
        )
    )
    if curl and httpie:
        value, detail = ratio("poppy-tui call", "curl")
        figures.append(
            Figure(section, "call (one GET) / curl", value, "x", detail + "; for information")
        )
    floor_name = f"floor: sqlite3 script printing the same fields ({PENDING:,} pending)"
    value, detail = ratio(f"poppy-tui pending --json ({PENDING:,} pending)", floor_name)
    figures.append(
        Figure(
            section,
            f"pending --json, {PENDING:,} pending / its floor (the bare sqlite3 script)",
            value,
            "x",
            detail + "; the same interpreter, the same store, the same rounds",
            PENDING_TARGET,
            f"<= {PENDING_TARGET:g}x",
        )
    )
    value, detail = ratio(f"poppy-tui pending --json ({PENDING:,} pending)", "python -c pass")
    figures.append(
        Figure(
            section,
            f"pending --json, {PENDING:,} pending / python -c pass",
            value,
            "x",
            detail + "; for information (the target is against the floor, the row above)",
        )
    )
    value, detail = ratio("poppy-tui pending --json (none pending)", "python -c pass")
    figures.append(
        Figure(
            section,
            "pending --json, none pending / python -c pass",
            value,
            "x",
            detail + "; what the command costs before any operation is printed",
        )
    )
    value, detail = ratio(
        f"floor: sqlite3 script printing the same fields ({PENDING:,} pending)", "python -c pass"
    )
    figures.append(
        Figure(
            section,
            f"floor: a bare sqlite3 script, {PENDING:,} pending / python -c pass",
            value,
            "x",
            detail
            + "; no CLI, no JSON: the same fields of the same 10,000 operations, read in the same "
            "order and printed tab-separated by a six-line script (_FLOOR_SCRIPT). Below this no "
            "Python program that prints them can go",
        )
    )
    value, detail = ratio(f"poppy-tui show ({PENDING:,} pending)", "python -c pass")
    figures.append(
        Figure(
            section,
            f"show one operation, {PENDING:,} pending / python -c pass",
            value,
            "x",
            detail + "; for information",
        )
    )
    value, detail = ratio("poppy-tui --help", "python -c pass")
    figures.append(Figure(section, "--help / python -c pass", value, "x", detail, 1.5, "<= 1.5x"))
    value, detail = ratio("floor: argparse printing an empty parser's help", "python -c pass")
    figures.append(
        Figure(
            section,
            "floor: argparse printing an empty parser's help / python -c pass",
            value,
            "x",
            detail + "; what any argparse program pays to print its help (_HELP_FLOOR)",
        )
    )
    return figures
