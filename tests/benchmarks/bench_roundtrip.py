"""The approval round trip's client-side cost, as a ratio to bare httpx2 requests doing the same
work on the same loopback server in the same run: like for like, the same HTTP library (the agent
sends through httpx2 too) and the same concurrency (one round at a time, its two requests in turn).

Each round performs one booking change at the demo Company (the only action it lets us repeat):
  agent: call_api (403 + operation, recorded) -> approve the revision it returned (grace 0,
         committed) -> dispatch_once (lease, attempt row, the resend with Poppy-Approval,
         outcome recorded, settled)
  bare:  httpx2 POST (403 + operation, JSON read) -> httpx2 POST with Poppy-Approval (200, JSON
         read), both with a fresh ES256 Session JWT, like the agent; no store, no checks.
  floor: the bare client plus the one thing the agent can't leave out: a write and fsync on the
         store's disk before the approval leaves (the attempt's commit). Not a target; it shows
         how much of agent / bare that fsync (and the pause it makes) accounts for.
Rounds alternate agent/bare/floor so any drift in the server hits all three. The Company runs in a process
of its own (company_process.py says why, and why it keeps the booking's ledger short). The store
is on the normal temp disk: the attempt is fsynced before its request leaves, the other commits
by the store's background flusher, which each round lets finish (untimed) before the bare
client's turn. Another run puts the store on tmpfs to show how much of the difference is fsync.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from common import CompanyProcess, Figure

# The agent's round trip against the like-for-like bare client: it keeps the durable record the
# bare client doesn't (the decision and the attempt fsynced before the approval leaves), which is
# the point of the program (docs/benchmarks.md).
TARGET_RATIO = 1.6
REPEATS = 3
BOOKING = "/api/bookings/bkg_2Fm8/change"


def _slots() -> tuple[str, str, str]:
    from poppy_tui.demo.shop import STORE_TZ
    from poppy_tui.protocol.timestamps import format_rfc3339

    day = (datetime.now(STORE_TZ) + timedelta(days=5)).date()
    a = datetime(day.year, day.month, day.day, 10, 0, tzinfo=STORE_TZ)
    return tuple(format_rfc3339(a + timedelta(minutes=30 * n)) for n in range(3))  # type: ignore[return-value]


async def _bare_round(
    client, session, url: str, target: str, before_approval=None
) -> tuple[float, float]:
    """The two requests as a bare httpx2 client makes them: (first, with approval) in ms.
    `before_approval`, if given, runs between them (the floor client's fsync)."""
    from poppy_tui.protocol.approval import Approval
    from poppy_tui.protocol.conventions import HEADER_IDEMPOTENCY_KEY

    t3 = time.perf_counter()
    first = await client.post(url, json={"starts_at": target}, headers=session.headers())
    t4 = time.perf_counter()
    operation = first.json()["operation"]
    approval = Approval(operation["operation_id"], operation["revision"])
    headers = session.headers(approval=approval)
    headers[HEADER_IDEMPOTENCY_KEY] = os.urandom(16).hex()
    if before_approval is not None:
        before_approval()
    done = await client.post(url, json={"starts_at": target}, headers=headers)
    outcome = done.json()
    t5 = time.perf_counter()
    assert first.status_code == 403 and done.status_code == 200, (
        first.status_code,
        done.status_code,
        done.text,
    )
    assert outcome["starts_at"] == target, outcome
    return (t4 - t3) * 1000, (t5 - t4) * 1000


class _OneFsync:
    """What the agent can't do without before an approval leaves: one write and fsync of a file
    on the store's disk (the attempt row's commit). The floor client does only this more than
    the bare one, so agent / floor is what the agent's own work costs beyond that fsync."""

    def __init__(self, directory: Path) -> None:
        self._fd = os.open(directory / "floor-fsync", os.O_RDWR | os.O_CREAT, 0o600)
        self._page = os.urandom(8192)
        self._writes = 0

    def __call__(self) -> None:
        os.pwrite(
            self._fd, self._page, (self._writes % 64) * len(self._page)
        )  # rewritten, not grown, like the log
        self._writes += 1
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


async def _measure(data_root: Path, rounds: int) -> dict[str, list[float]]:
    import httpx2

    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.config import Config
    from poppy_tui.agent.paths import Paths
    from poppy_tui.agent.store import Status
    from poppy_tui.demo.testing import AgentSession

    company = CompanyProcess(
        Path(__file__).with_name("company_process.py"), "the benchmark Company"
    )
    paths = Paths(config_dir=data_root / "config", data_dir=data_root / "data")
    agent = Agent.open(paths, Config(key_storage="file", grace_seconds=0))
    session = AgentSession(company.base_url)
    url = company.base_url + BOOKING
    names = (
        "agent",
        "agent_first",
        "agent_approval",
        "bare",
        "bare_first",
        "bare_approval",
        "floor",
    )
    times: dict[str, list[float]] = {name: [] for name in names}
    fsync_once = _OneFsync(data_root)
    a, b, c = _slots()
    try:
        record = await agent.add_company(company.base_url)
        async with httpx2.AsyncClient(timeout=30) as client:
            for n in range(rounds + 3):  # the first 3 rounds warm every path up and are not counted
                # Each client moves the fitting to its own slot, so every request changes it.
                t0 = time.perf_counter()
                result = await agent.call_api(record, "POST", BOOKING, {"starts_at": a})
                t1 = time.perf_counter()
                assert result.outcome == "operation", result
                # The revision the answer carried, as a review screen has it in hand when the person approves.
                agent.approve(result.operation_row, result.revision_row)
                await agent.dispatch_once()
                t2 = time.perf_counter()
                assert agent.store.get_operation(result.operation_row).status == Status.PERFORMED
                # The outcome's fsync runs in the background (durability.py); let it finish here,
                # untimed, so it can't slow the bare client's round.
                assert agent.store.flush(10)
                bare_first, bare_approval = await _bare_round(client, session, url, b)
                floor_first, floor_approval = await _bare_round(client, session, url, c, fsync_once)
                if n >= 3:
                    times["agent"].append((t2 - t0) * 1000)
                    times["agent_first"].append((t1 - t0) * 1000)
                    times["agent_approval"].append((t2 - t1) * 1000)
                    times["bare"].append(bare_first + bare_approval)
                    times["bare_first"].append(bare_first)
                    times["bare_approval"].append(bare_approval)
                    times["floor"].append(floor_first + floor_approval)
    finally:
        fsync_once.close()
        await agent.aclose()
        company.stop()
    return times


def run(rounds: int, repeats: int = REPEATS) -> list[Figure]:
    """`repeats` runs of `rounds` rounds each, every run with a fresh Company process and store;
    figures are medians over all rounds pooled, and the detail lists each run's own ratio."""
    figures: list[Figure] = []
    runs: dict[str, list[dict[str, list[float]]]] = {"disk": [], "tmpfs": []}
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="poppy-rt-") as disk:
            runs["disk"].append(asyncio.run(_measure(Path(disk), rounds)))
        if shm:
            with tempfile.TemporaryDirectory(prefix="poppy-rt-", dir=shm) as ram:
                runs["tmpfs"].append(asyncio.run(_measure(Path(ram), rounds)))

    def pooled(name: str) -> dict[str, float]:
        keys = runs[name][0].keys()
        return {k: statistics.median([v for got in runs[name] for v in got[k]]) for k in keys}

    def each(name: str) -> str:
        ratios = [
            statistics.median(got["agent"]) / statistics.median(got["bare"]) for got in runs[name]
        ]
        return ", ".join(f"{r:.2f}x" for r in ratios)

    m = pooled("disk")
    figures.append(
        Figure(
            "Approval round trip",
            "agent: request + approve + deliver (median)",
            m["agent"],
            "ms",
            f"first request {m['agent_first']:.1f} ms, approve + dispatch {m['agent_approval']:.1f} ms; "
            f"{repeats} runs of {rounds} rounds; store on the temp disk (each attempt fsynced before it "
            "leaves, other commits fsynced in the background)",
        )
    )
    figures.append(
        Figure(
            "Approval round trip",
            "bare httpx2, like for like: the same two requests (median)",
            m["bare"],
            "ms",
            f"first {m['bare_first']:.1f} ms, with approval {m['bare_approval']:.1f} ms",
        )
    )
    figures.append(
        Figure(
            "Approval round trip",
            "overhead: agent / bare",
            m["agent"] / m["bare"],
            "x",
            f"the Company in a process of its own, on loopback; each run: {each('disk')}",
            TARGET_RATIO,
            f"<= {TARGET_RATIO}x",
        )
    )
    figures.append(
        Figure(
            "Approval round trip",
            "approval leg only: approve + dispatch / bare POST with approval",
            m["agent_approval"] / m["bare_approval"],
            "x",
            f"{m['agent_approval']:.1f} ms vs {m['bare_approval']:.1f} ms",
        )
    )
    figures.append(
        Figure(
            "Approval round trip",
            "floor: bare httpx2 + one fsync before the approval / bare",
            m["floor"] / m["bare"],
            "x",
            f"{m['floor']:.1f} ms: the bare client plus the one fsync the agent must make before an "
            "approval leaves (8 KiB written and fsynced on the store's disk); agent / floor "
            f"{m['agent'] / m['floor']:.2f}x is the agent's own work beyond it",
        )
    )
    if runs["tmpfs"]:
        t = pooled("tmpfs")
        figures.append(
            Figure(
                "Approval round trip",
                "overhead with the store on tmpfs (fsync ~free)",
                t["agent"] / t["bare"],
                "x",
                f"agent {t['agent']:.1f} ms vs bare {t['bare']:.1f} ms; each run: {each('tmpfs')}",
            )
        )
    return figures
