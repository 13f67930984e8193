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


@pytest.fixture
def company_added(cli, home):
    """Start a test Company (a class with base_url and stop()), add it to the home, stop it after."""
    started = []

    def add(company_class):
        company = company_class()
        started.append(company)
        run = cli("companies", "add", company.base_url)
        assert run.code == 0, run.err
        return company

    yield add
    for company in started:
        company.stop()
