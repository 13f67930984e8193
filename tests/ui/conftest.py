from __future__ import annotations

import time

import pytest

from poppy_tui.agent.store import Store
from tests.ui.ui_sample import ui_config


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    # Screens show local time; pin it so text and snapshots are the same on every machine.
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "poppy.db") as s:
        yield s


@pytest.fixture
def make_agent(store, tmp_path):
    """make_agent(**config): the real Agent on the store fixture's file (a connection of its own,
    as the TUI has), with ui_config(**config) and a signing key in memory: the tests never touch
    the person's keyring. Its dispatcher runs in the app, as in use."""
    from cryptography.hazmat.primitives.asymmetric import ec

    from poppy_tui.agent.agent import Agent
    from poppy_tui.agent.paths import Paths

    made = []

    def make(**config):
        paths = Paths(config_dir=tmp_path / "config", data_dir=store.path.parent)
        assert paths.database == store.path
        made.append(
            Agent.open(paths, ui_config(**config), key=ec.generate_private_key(ec.SECP256R1()))
        )
        return made[-1]

    yield make
    for real in made:
        real.store.close()


@pytest.fixture
def agent(make_agent):
    """The real Agent with the UI tests' config (ui_config)."""
    return make_agent()
