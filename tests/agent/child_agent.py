"""A Personal Agent process for the crash and concurrency tests (run as a script).

child_agent.py ask-approve-send CONFIG_DIR DATA_DIR BASE_URL
    discover, ask for the exchange, approve it, and send it (the parent kills us mid-send)
child_agent.py dispatch CONFIG_DIR DATA_DIR GO_FILE
    open the store, say so (GO_FILE.ready.PID), wait for GO_FILE, then dispatch until nothing is
    approved or sending
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status
from poppy_tui.protocol.retry import BackoffPolicy
from tests.waiting import wait_until, wait_until_blocking

CONFIG = Config(
    grace_seconds=0.0, request_timeout_seconds=10.0, retry_window_seconds=60.0, key_storage="file"
)
LEASE_SECONDS = 2.0
BACKOFF = BackoffPolicy(base_seconds=0.05, cap_seconds=0.4)


def open_agent(config_dir: str, data_dir: str) -> Agent:
    return Agent.open(
        Paths(Path(config_dir), Path(data_dir)),
        CONFIG,
        lease_seconds=LEASE_SECONDS,
        backoff=BACKOFF,
    )


async def ask_approve_send(config_dir: str, data_dir: str, base_url: str) -> None:
    agent = open_agent(config_dir, data_dir)
    company = await agent.add_company(base_url)
    result = await agent.call_api(
        company,
        "POST",
        "/api/orders/ord_7Hk2/exchanges",
        {"item_id": "itm_4Qa", "replacement_sku": "stormline-insulated-m"},
    )
    op = agent.store.get_operation(result.operation_row)
    agent.approve(op.id, op.current.id)
    print(f"approved {op.id}", flush=True)
    await agent.dispatch_once()
    print("finished (the parent should have killed us)", flush=True)


async def dispatch(config_dir: str, data_dir: str, go_file: str) -> None:
    agent = open_agent(config_dir, data_dir)
    Path(
        f"{go_file}.ready.{os.getpid()}"
    ).touch()  # the parent starts both at once when both are here
    # A short step: both children should start dispatching as nearly together as they can.
    wait_until_blocking(lambda: os.path.exists(go_file), timeout=30, step=0.005, describe=go_file)
    handled = 0

    async def dispatched_all() -> bool:
        nonlocal handled
        handled += await agent.dispatch_once()
        return agent.store.count_operations([Status.APPROVED, Status.SENDING]) == 0

    await wait_until(dispatched_all, timeout=30, step=0.01, describe="approvals left to send")
    print(f"handled {handled} owner {agent.dispatcher.owner}", flush=True)
    await agent.aclose()


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    asyncio.run({"ask-approve-send": ask_approve_send, "dispatch": dispatch}[mode](*args))
