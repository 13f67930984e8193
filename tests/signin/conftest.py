"""Fixtures for sign-in: a real keyring backend in memory, the spec-written authorization server
on loopback, and an Agent whose identity that server knows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import keyring
import keyring.backend
import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config
from poppy_tui.agent.keys import KEY_STORAGE_ENV, generate_key
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.identity import AgentIdentity
from poppy_tui.agent.identity.settings import make_settings
from poppy_tui.agent.signin.service import SignIns
from poppy_tui.agent.store import CompanyRecord

from spec_auth_server import Served, SpecAuthCompany

TEST_CLIENT_ID = "https://agent.signin-tests.example/agent.json"


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring backend that keeps secrets in this process: the real KeyringBackend API
    (the same as tests/agent/conftest.py's)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.secrets: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.secrets.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.secrets[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.secrets.pop((service, username), None)


@pytest.fixture(autouse=True)
def memory_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryKeyring]:
    monkeypatch.delenv(KEY_STORAGE_ENV, raising=False)
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


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
