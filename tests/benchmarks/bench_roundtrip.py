"""The approval round trip's client-side cost, as a ratio to bare httpx requests doing the same
work on the same loopback server in the same run.

Each round performs one booking change at the demo Company (the only action it lets us repeat):
  agent: call_api (403 + operation, recorded) -> approve (grace 0, committed) -> dispatch_once
         (lease, attempt row, the resend with Poppy-Approval, outcome recorded, settled)
  bare:  httpx POST (403 + operation) -> httpx POST with Poppy-Approval (200), both with a fresh
         ES256 Session JWT, like the agent; no store, no checks.
Rounds alternate agent/bare so any drift in the server hits both. The store is on the normal
temp disk (synchronous=FULL: every commit is an fsync); another run puts it on tmpfs to show
how much of the difference is fsync.

The demo server as shipped (start_company) binds a socket made without proto=IPPROTO_TCP, so
asyncio never sets TCP_NODELAY on its connections and every response on a kept-alive
connection stalls ~40 ms on a delayed ACK. That stall is the same for both clients and would
hide the client-side cost, so the headline ratio serves the same demo app over a NODELAY
socket; the shipped figure is reported next to it.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from common import Figure

TARGET_RATIO = 1.5
BOOKING = "/api/bookings/bkg_2Fm8/change"


def _slots() -> tuple[str, str]:
    from poppy_tui.demo.shop import STORE_TZ
    from poppy_tui.protocol.timestamps import format_rfc3339

    day = (datetime.now(STORE_TZ) + timedelta(days=5)).date()
    a = datetime(day.year, day.month, day.day, 10, 0, tzinfo=STORE_TZ)
    return format_rfc3339(a), format_rfc3339(a + timedelta(minutes=30))


def _start(server: str):
    """`shipped`: start_company() as it is. `nodelay`: the same demo app over a socket made with
    proto=IPPROTO_TCP, so asyncio sets TCP_NODELAY (see the module docstring)."""
    if server == "shipped":
        from poppy_tui.demo.server import start_company

        return start_company()
    from tests.reliability.support import RestartableCompany

    return RestartableCompany().start()


async def _measure(data_root: Path, rounds: int, server: str = "nodelay") -> dict[str, list[float]]:
    import httpx

    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.config import Config
    from poppy_tui.agent.paths import Paths
    from poppy_tui.agent.store import Status
    from poppy_tui.demo.testing import AgentSession
    from poppy_tui.protocol.approval import Approval
    from poppy_tui.protocol.conventions import HEADER_IDEMPOTENCY_KEY

    company = _start(server)
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
                t5 = time.perf_counter()
                assert first.status_code == 403 and done.status_code == 200, (first.status_code, done.status_code, done.text)
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


def run(rounds: int) -> list[Figure]:
    figures: list[Figure] = []
    runs: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="poppy-rt-") as disk:
        runs["nodelay"] = asyncio.run(_measure(Path(disk) / "a", rounds, "nodelay"))
        runs["shipped"] = asyncio.run(_measure(Path(disk) / "b", rounds, "shipped"))
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    if shm:
        with tempfile.TemporaryDirectory(prefix="poppy-rt-", dir=shm) as ram:
            runs["tmpfs"] = asyncio.run(_measure(Path(ram), rounds, "nodelay"))
    med = {name: {k: statistics.median(v) for k, v in got.items()} for name, got in runs.items()}
    m = med["nodelay"]
    figures.append(Figure("Approval round trip", "agent: request + approve + deliver (median)", m["agent"], "ms",
                          f"first request {m['agent_first']:.1f} ms, approve + dispatch {m['agent_approval']:.1f} ms; "
                          f"{rounds} rounds; store on the temp disk (synchronous=FULL)"))
    figures.append(Figure("Approval round trip", "bare httpx: the same two requests (median)", m["bare"], "ms",
                          f"first {m['bare_first']:.1f} ms, with approval {m['bare_approval']:.1f} ms"))
    figures.append(Figure("Approval round trip", "overhead: agent / bare", m["agent"] / m["bare"], "x",
                          "demo app over a TCP_NODELAY socket", TARGET_RATIO, "< 1.5x"))
    figures.append(Figure("Approval round trip", "approval leg only: approve + dispatch / bare POST with approval",
                          m["agent_approval"] / m["bare_approval"], "x", ""))
    if "tmpfs" in med:
        t = med["tmpfs"]
        figures.append(Figure("Approval round trip", "overhead with the store on tmpfs (fsync ~free)", t["agent"] / t["bare"], "x",
                              f"agent {t['agent']:.1f} ms vs bare {t['bare']:.1f} ms"))
    sh = med["shipped"]
    figures.append(Figure("Approval round trip", "overhead against start_company() as shipped", sh["agent"] / sh["bare"], "x",
                          f"agent {sh['agent']:.1f} ms vs bare {sh['bare']:.1f} ms: each keep-alive response there waits "
                          "~40 ms for a delayed ACK (no TCP_NODELAY), which hides the client's cost"))
    return figures
