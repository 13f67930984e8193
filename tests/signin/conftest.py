"""Fixtures for sign-in: a real keyring backend in memory, the spec-written authorization server
on loopback, an Agent whose identity that server knows, and for the command line a private home
whose identity it knows and running main(argv) in this process."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Iterator

import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.config import Config, load_config_file
from poppy_tui.agent.keys import generate_key, load_or_create_key
from poppy_tui.agent.paths import Paths, resolve_paths
from poppy_tui.agent.identity import AgentIdentity
from poppy_tui.agent.identity.settings import load_settings, make_settings
from poppy_tui.agent.signin.service import SignIns
from poppy_tui.agent.store import CompanyRecord

from spec_auth_server import Served, SpecAuthCompany
from tests.cli.cli_support import make_home, run_main
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


@pytest.fixture
def registered_home(tmp_path, monkeypatch, served) -> Callable[[str], Path]:
    """registered_home(config_toml) -> a private home (POPPY_TUI_HOME) with this config.toml whose
    agent identity (its client_id and key) the authorization server has registered."""

    def make(config_toml: str) -> Path:
        root = make_home(tmp_path, monkeypatch, config_toml)
        paths = resolve_paths(root).ensure()
        key = load_or_create_key(paths, load_config_file(paths.config_file))
        served.clients[load_settings(paths, allow_loopback=True).client_id] = key.public_key()
        return root

    return make


@pytest.fixture
def cli(capsys):
    return functools.partial(run_main, capsys)
