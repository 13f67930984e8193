from __future__ import annotations

import time

import pytest

from poppy_tui.agent.store import Store
from tests.ui.ui_sample import StoreAgent, ui_config


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
def agent(store):
    return StoreAgent(store, ui_config())
