"""The store's SQL needs SQLite 3.35 (UPDATE ... RETURNING): an older library is refused in one
line before any file is created, and the library this Python links is new enough."""

from __future__ import annotations

import sqlite3

import pytest

from poppy_tui.agent.store import Store
from poppy_tui.agent.store import connection


def test_an_older_sqlite_is_refused_before_any_file_is_made(tmp_path, monkeypatch):
    monkeypatch.setattr(connection.sqlite3, "sqlite_version_info", (3, 34, 1))
    path = tmp_path / "data" / "poppy.db"
    with pytest.raises(connection.StoreError) as caught:
        Store.open(path)
    message = str(caught.value)
    assert "3.34.1" in message and "3.35.0" in message and "\n" not in message
    assert not path.exists()


def test_the_minimum_itself_opens(tmp_path, monkeypatch):
    monkeypatch.setattr(connection.sqlite3, "sqlite_version_info", (3, 35, 0))
    Store.open(tmp_path / "poppy.db").close()


def test_this_python_links_a_new_enough_sqlite():
    assert sqlite3.sqlite_version_info >= connection.MINIMUM_SQLITE
