"""Fixtures for the agent engine: a real keyring backend in memory, private paths per test,
Agents on a shared store, and the demo Company served on loopback behind a recorder."""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.paths import Paths
from poppy_tui.protocol.retry import BackoffPolicy

from tests.keyring_support import MemoryKeyring, memory_keyring  # noqa: F401 (shared autouse fixture)

from .company_app import LiveCompany, start_live_company


@pytest.fixture
def paths(tmp_path) -> Paths:
    return Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")


# Quick retries so tests don't sleep for real backoffs; a Company's Retry-After still counts.
FAST_BACKOFF = BackoffPolicy(
    base_seconds=0.05, factor=2.0, cap_seconds=0.4, max_retry_after_seconds=5.0
)
TEST_CONFIG = Config(grace_seconds=0.0, request_timeout_seconds=5.0, retry_window_seconds=30.0)


@pytest.fixture
async def make_agent(paths: Paths) -> AsyncIterator[Callable[..., Agent]]:
    """make_agent(**config overrides, lease_seconds=..., paths=...) -> Agent, closed after the test
    (aclose: the reads it started on arrival end before the test's loop does; a read left to the
    loop's closing cancellation held each such test for the MCP SDK's 10 s shutdown)."""
    made: list[Agent] = []

    def _make(
        *,
        lease_seconds: float = 5.0,
        agent_paths: Paths | None = None,
        backoff: BackoffPolicy = FAST_BACKOFF,
        **overrides: Any,
    ) -> Agent:
        agent = Agent.open(
            agent_paths or paths,
            replace(TEST_CONFIG, **overrides),
            lease_seconds=lease_seconds,
            backoff=backoff,
            reply_wait_seconds=3.0,
        )
        made.append(agent)
        return agent

    yield _make
    for agent in made:
        await agent.aclose()


@pytest.fixture
def start() -> Iterator[Callable[..., LiveCompany]]:
    """start(faults="busy=2", expiry_seconds=..., extension_version=...) -> LiveCompany, stopped after."""
    running: list[LiveCompany] = []

    def _start(faults: str | None = None, **kwargs: Any) -> LiveCompany:
        company = start_live_company(faults, **kwargs)
        running.append(company)
        return company

    yield _start
    for company in running:
        company.stop()


@pytest.fixture
def shop(start) -> LiveCompany:
    return start()
