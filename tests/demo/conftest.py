"""Fixtures: a fresh demo Company on loopback per test, and a test agent's Session."""

from __future__ import annotations

from typing import Callable, Iterator

import httpx
import pytest

from poppy_tui.demo.faults import Faults
from poppy_tui.demo.server import RunningCompany, start_company
from poppy_tui.demo.testing import AgentSession


@pytest.fixture
def start() -> Iterator[Callable[..., RunningCompany]]:
    """start(faults="busy=2", expiry_seconds=..., extension_version=...) -> RunningCompany, stopped after the test."""
    running: list[RunningCompany] = []

    def _start(faults: Faults | str | None = None, **kwargs) -> RunningCompany:
        company = start_company(Faults.parse(faults) if isinstance(faults, str) else faults, **kwargs)
        running.append(company)
        return company

    yield _start
    for company in running:
        company.stop()


@pytest.fixture
def company(start) -> RunningCompany:
    return start()


@pytest.fixture
def agent(company: RunningCompany) -> AgentSession:
    return AgentSession.at(company)


@pytest.fixture
def http(company: RunningCompany) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=company.base_url, timeout=10) as client:
        yield client
