"""Fixtures: a test agent's Session with the fresh demo Company of each test (tests/conftest.py's
`start` and `company`), and the demo Company with accounts."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from poppy_tui.demo.server import RunningCompany
from poppy_tui.demo.accounts.service import AccountsOptions
from poppy_tui.demo.testing import AgentSession, TestAgentIdentity


@pytest.fixture
def agent(company: RunningCompany) -> AgentSession:
    return AgentSession.at(company)


@pytest.fixture
def http(company: RunningCompany) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=company.base_url, timeout=10) as client:
        yield client


@pytest.fixture
def agent_identity() -> TestAgentIdentity:
    """The test agent's CIMD identity (client_id, kid'd ES256 key, redirect_uris)."""
    return TestAgentIdentity()


@pytest.fixture
def shop(start) -> RunningCompany:
    """A demo Company with accounts (device polling interval 1 s). It knows agents by
    fetching their CIMD and JWKS, as it does for Session JWTs."""
    return start(accounts=AccountsOptions(device_interval=1))


@pytest.fixture
def browser(shop: RunningCompany) -> Iterator[httpx.Client]:
    """Plain HTTP to the Company with accounts, not following redirects (we read them)."""
    with httpx.Client(base_url=shop.base_url, timeout=10, follow_redirects=False) as client:
        yield client
