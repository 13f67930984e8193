"""Fixtures: a private home, and running main(argv) in this process."""

from __future__ import annotations

import functools

import pytest

from cli_support import make_home, run_main


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A private home whose signing key is a 0600 file: no keyring daemon runs here."""
    return make_home(tmp_path, monkeypatch)


@pytest.fixture
def cli(capsys):
    return functools.partial(run_main, capsys)
