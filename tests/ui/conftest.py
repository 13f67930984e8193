from __future__ import annotations

import time

import pytest

from poppy_tui.agent.store import Store
from tests.ui.ui_sample import agents_on


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
def make_agent(store):
    """make_agent(config=None, **overrides): the real Agent on the store fixture's file (a
    connection of its own, as the TUI has), with ui_config(**overrides) or config with them, and
    a signing key in memory (tests/ui/ui_sample.py open_agent). Its dispatcher runs in the app,
    as in use. Each one's store is closed after the test."""
    with agents_on(store.path) as make:
        yield make


@pytest.fixture
def agent(make_agent):
    """The real Agent with the UI tests' config (ui_config)."""
    return make_agent()
