"""Fixtures: a private home (signing key in a 0600 file: no keyring daemon here), Companies on
loopback registered in it, poppy-tui's MCP server as a real subprocess driven by the MCP SDK's
client over stdio, and the person: the TUI (Pilot) on the same store."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any
from collections.abc import AsyncIterator

import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import load_config_file
from poppy_tui.agent.paths import Paths, resolve_paths
from poppy_tui.agent.store import Status
from poppy_tui.cli.main import main
from tests.cli.cli_support import make_home, subprocess_env
from tests.mcp_server.spec_company import start_spec_company
from tests.waiting import wait_until

CONFIG = (
    'key_storage = "file"\ngrace_seconds = 0\narm_delay_seconds = 0\nrequest_timeout_seconds = 10\n'
)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A private home (the CLI tests' make_home) with no grace period and no arming delay."""
    return make_home(tmp_path, monkeypatch, CONFIG)


def register(home: Path, base_url: str) -> None:
    assert main(["--home", str(home), "companies", "add", base_url]) == 0


@pytest.fixture
def shop(home, company):
    """The demo Company (Manzanita Outfitters; tests/conftest.py's `company`), registered in the
    test home."""
    register(home, company.base_url)
    return company


@pytest.fixture
def registered(home):
    """registered(start) -> the Company start() returns (anything with base_url and stop()),
    registered in the test home and stopped after the test."""
    started = []

    def start_and_register(start):
        company = start()
        started.append(company)
        register(home, company.base_url)
        return company

    yield start_and_register
    for company in started:
        company.stop()


@pytest.fixture
def birchwood(registered):
    """A Company written from the spec alone, registered in the test home."""
    return registered(start_spec_company)


@pytest.fixture
def bench(registered):
    """The bulk Company (tests/companies/bulk_company.py: any number of operations, each performed
    once on approval), registered in the test home."""
    from tests.companies.bulk_company import BulkCompany

    return registered(BulkCompany)


@contextlib.asynccontextmanager
async def mcp_client(home: Path, tmp_path: Path) -> AsyncIterator[Any]:
    """`poppy-tui mcp` as a subprocess, through the MCP SDK's stdio client."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "poppy_tui", "mcp"],
        env=subprocess_env(home),
        cwd=str(tmp_path),
    )
    with open(tmp_path / "mcp-server.stderr", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def person_agent(home: Path, **config: Any) -> Agent:
    from dataclasses import replace

    paths: Paths = resolve_paths(home)
    return Agent.open(paths, replace(load_config_file(paths.config_file), **config))


async def wait_for_status(agent: Agent, statuses: set[Status], timeout: float = 30.0) -> int:
    """The first operation in one of `statuses`, once there is one."""
    rows = await wait_until(
        lambda: agent.store.list_operations(list(statuses), newest_first=False),
        timeout=timeout,
        describe=f"an operation in {sorted(statuses)}",
    )
    return rows[0].id


async def open_review(app, pilot, row: int):
    from poppy_tui.ui.screens.review import ReviewScreen

    app.open_review(row)
    await wait_until(
        lambda: isinstance(app.screen, ReviewScreen) and app.screen.can_approve(),
        pause=pilot.pause,
        describe=lambda: f"the review approvable (the screen is {type(app.screen).__name__})",
    )
    return app.screen


async def approve_in_tui(app, pilot, row: int) -> None:
    """The person: open the review, `a`, then `y` in the confirmation."""
    from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen

    await open_review(app, pilot, row)
    await pilot.press("a")
    await wait_until(
        lambda: isinstance(app.screen, ConfirmApproveScreen),
        pause=pilot.pause,
        describe="the confirmation shown",
    )
    await pilot.press("y")
    # The approval is recorded (the confirmation's callback ran).
    await wait_until(
        lambda: app.agent.store.decisions(row),
        pause=pilot.pause,
        describe="the approval recorded",
    )


__all__ = [
    "mcp_client",
    "person_agent",
    "wait_for_status",
    "open_review",
    "approve_in_tui",
    "register",
]
os.environ.setdefault("TZ", "UTC")
