"""Fixtures for sign-in: a real keyring backend in memory, the spec-written authorization server
on loopback, and an Agent whose identity that server knows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.keys import generate_key
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.identity import AgentIdentity
from poppy_tui.agent.identity.settings import make_settings
from poppy_tui.agent.signin.service import SignIns
from poppy_tui.agent.store import CompanyRecord

from spec_auth_server import Served, SpecAuthCompany
from tests.keyring_support import MemoryKeyring, memory_keyring  # noqa: F401 (shared autouse fixture)

TEST_CLIENT_ID = "https://agent.signin-tests.example/agent.json"


@pytest.fixture
def served() -> Iterator[SpecAuthCompany]:
    running = Served(SpecAuthCompany())
    yield running.company
    running.stop()


@dataclass
class Setup:
    agent: Agent
    signins: SignIns
    company: CompanyRecord
    auth: SpecAuthCompany
    identity: AgentIdentity


@pytest.fixture
async def setup(tmp_path, served) -> Iterator[Setup]:
    paths = Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data")
    agent = Agent.open(paths, Config(grace_seconds=0.0, request_timeout_seconds=5.0))
    key = generate_key()
    identity = AgentIdentity(make_settings(TEST_CLIENT_ID), lambda: key)
    served.clients[TEST_CLIENT_ID] = key.public_key()
    # The agent's own SignIns, with an identity this authorization server has registered.
    signins = SignIns(agent.store, agent.config, lambda: identity, agent._http)
    agent.signins = signins
    agent.access_token_source = signins.access_token
    company = await agent.add_company(served.base_url)
    yield Setup(agent, signins, company, served, identity)
    await agent.aclose()
