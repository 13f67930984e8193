"""What the TUI's pollers and workers catch goes to the log with its traceback, and the error
toast names the log (agent/logfile.py): a person has something to attach to a bug report."""

from __future__ import annotations

import logging
import sqlite3

import pytest

from poppy_tui.agent import logfile
from poppy_tui.ui.app import PoppyApp
from tests.ui.ui_sample import record_notifications, started, wait_for

SIZE = (100, 30)


@pytest.fixture
def log(tmp_path, monkeypatch):
    monkeypatch.delenv(logfile.LEVEL_ENV, raising=False)
    level = logging.getLogger().level
    path = logfile.open_log(tmp_path / "data" / "poppy-tui.log", "info")
    yield path
    logfile.close_log()
    logging.getLogger().setLevel(level)


def text_of(path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return path.read_text() if path.exists() else ""


async def test_sending_that_stops_is_logged_with_its_traceback_and_the_toast_names_the_log(
    make_agent, log, monkeypatch
):
    import poppy_tui.ui.app as app_module

    monkeypatch.setattr(app_module, "DISPATCHER_RESTART_SECONDS", 30)
    agent = make_agent()
    starts: list[int] = []

    async def failing(stop):
        starts.append(1)
        raise RuntimeError("the network went away")

    agent.run_dispatcher = failing
    app = PoppyApp(agent)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(
            pilot,
            lambda: any("Sending stopped" in m for m in notes),
            describe=lambda: f"no toast said sending stopped: {notes}",
        )
    toast = next(m for m in notes if "Sending stopped" in m)
    assert f"Details in {log}." in toast
    text = text_of(log)
    assert "ERROR poppy_tui.ui [" in text
    assert "sending stopped; the dispatcher starts again in 30 s" in text
    assert (
        "Traceback (most recent call last)" in text
        and "RuntimeError: the network went away" in text
    )


async def test_a_failing_store_poll_is_logged_once_per_outage_and_said_once(
    make_agent, log, monkeypatch
):
    agent = make_agent()
    app = PoppyApp(agent)
    notes = record_notifications(app)
    failures: list[int] = []
    reader = type(agent.reader)
    real = reader.change_token

    def locked(self):
        failures.append(1)
        raise sqlite3.OperationalError("database is locked")

    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await started(pilot)
        monkeypatch.setattr(reader, "change_token", locked)
        await wait_for(pilot, lambda: len(failures) >= 3, describe=lambda: "the poll never ran")
        monkeypatch.setattr(reader, "change_token", real)
        await wait_for(
            pilot,
            lambda: "works again" in text_of(log),
            describe=lambda: "the poll's recovery was not logged",
        )
    said = [m for m in notes if "Can't read the queue" in m]
    assert len(said) == 1 and f"Details in {log}." in said[0] and "database is locked" in said[0]
    text = text_of(log)
    assert text.count("reading the queue for changes failed") == 1  # not twice a second
    assert "sqlite3.OperationalError: database is locked" in text
