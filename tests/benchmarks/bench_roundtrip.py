"""The approval round trip's client-side cost, as a ratio to bare httpx requests doing the same
work on the same loopback server in the same run.

Each round performs one booking change at the demo Company (the only action it lets us repeat):
  agent: call_api (403 + operation, recorded) -> approve (grace 0, committed) -> dispatch_once
         (lease, attempt row, the resend with Poppy-Approval, outcome recorded, settled)
  bare:  httpx POST (403 + operation, JSON read) -> httpx POST with Poppy-Approval (200, JSON
         read), both with a fresh ES256 Session JWT, like the agent; no store, no checks.
Rounds alternate agent/bare so any drift in the server hits both. The Company runs in a process
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

TARGET_RATIO = 1.25
REPEATS = 3
BOOKING = "/api/bookings/bkg_2Fm8/change"


def _slots() -> tuple[str, str]:
    from poppy_tui.demo.shop import STORE_TZ
    from poppy_tui.protocol.timestamps import format_rfc3339

    day = (datetime.now(STORE_TZ) + timedelta(days=5)).date()
    a = datetime(day.year, day.month, day.day, 10, 0, tzinfo=STORE_TZ)
    return format_rfc3339(a), format_rfc3339(a + timedelta(minutes=30))


async def _measure(data_root: Path, rounds: int) -> dict[str, list[float]]:
    import httpx

    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.config import Config
    from poppy_tui.agent.paths import Paths
    from poppy_tui.agent.store import Status
    from poppy_tui.demo.testing import AgentSession
    from poppy_tui.protocol.approval import Approval
    from poppy_tui.protocol.conventions import HEADER_IDEMPOTENCY_KEY

    company = CompanyProcess(Path(__file__).with_name("company_process.py"), "the benchmark Company")
    paths = Paths(config_dir=data_root / "config", data_dir=data_root / "data")
    agent = Agent.open(paths, Config(key_storage="file", grace_seconds=0))
    session = AgentSession(company.base_url)
    url = company.base_url + BOOKING
    times: dict[str, list[float]] = {"agent": [], "agent_first": [], "agent_approval": [], "bare": [], "bare_first": [], "bare_approval": []}
    a, b = _slots()
    try:
        record = await agent.add_company(company.base_url)
        async with httpx.AsyncClient(timeout=30) as client:
            for n in range(rounds + 3):  # the first 3 rounds warm both paths up and are not counted
                target = a  # the agent moves the fitting to a, the bare client back to b, every round
                # agent
                t0 = time.perf_counter()
                result = await agent.call_api(record, "POST", BOOKING, {"starts_at": target})
                t1 = time.perf_counter()
                assert result.outcome == "operation", result
                op = agent.store.get_operation(result.operation_row)
                agent.approve(op.id, op.current.id)
                await agent.dispatch_once()
                t2 = time.perf_counter()
                assert agent.store.get_operation(op.id).status == Status.PERFORMED
                # The outcome's fsync runs in the background (durability.py); let it finish here,
                # untimed, so it can't slow the bare client's round.
                assert agent.store.flush(10)
                # bare
                target = b
                t3 = time.perf_counter()
                first = await client.post(url, json={"starts_at": target}, headers=session.headers())
                t4 = time.perf_counter()
                operation = first.json()["operation"]
                approval = Approval(operation["operation_id"], operation["revision"])
                headers = session.headers(approval=approval)
                headers[HEADER_IDEMPOTENCY_KEY] = os.urandom(16).hex()
                done = await client.post(url, json={"starts_at": target}, headers=headers)
                outcome = done.json()
                t5 = time.perf_counter()
                assert first.status_code == 403 and done.status_code == 200, (first.status_code, done.status_code, done.text)
                assert outcome["starts_at"] == target, outcome
                if n >= 3:
                    times["agent"].append((t2 - t0) * 1000)
                    times["agent_first"].append((t1 - t0) * 1000)
                    times["agent_approval"].append((t2 - t1) * 1000)
                    times["bare"].append((t5 - t3) * 1000)
                    times["bare_first"].append((t4 - t3) * 1000)
                    times["bare_approval"].append((t5 - t4) * 1000)
    finally:
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
        ratios = [statistics.median(got["agent"]) / statistics.median(got["bare"]) for got in runs[name]]
        return ", ".join(f"{r:.2f}x" for r in ratios)

    m = pooled("disk")
    figures.append(Figure("Approval round trip", "agent: request + approve + deliver (median)", m["agent"], "ms",
                          f"first request {m['agent_first']:.1f} ms, approve + dispatch {m['agent_approval']:.1f} ms; "
                          f"{repeats} runs of {rounds} rounds; store on the temp disk (each attempt fsynced before it "
                          "leaves, other commits fsynced in the background)"))
    figures.append(Figure("Approval round trip", "bare httpx: the same two requests (median)", m["bare"], "ms",
                          f"first {m['bare_first']:.1f} ms, with approval {m['bare_approval']:.1f} ms"))
    figures.append(Figure("Approval round trip", "overhead: agent / bare", m["agent"] / m["bare"], "x",
                          f"the Company in a process of its own, on loopback; each run: {each('disk')}",
                          TARGET_RATIO, "<= 1.25x"))
    figures.append(Figure("Approval round trip", "approval leg only: approve + dispatch / bare POST with approval",
                          m["agent_approval"] / m["bare_approval"], "x",
                          f"{m['agent_approval']:.1f} ms vs {m['bare_approval']:.1f} ms"))
    if runs["tmpfs"]:
        t = pooled("tmpfs")
        figures.append(Figure("Approval round trip", "overhead with the store on tmpfs (fsync ~free)", t["agent"] / t["bare"], "x",
                              f"agent {t['agent']:.1f} ms vs bare {t['bare']:.1f} ms; each run: {each('tmpfs')}"))
    return figures
