"""Fixtures: a private home, running main(argv) in this process, and Companies on loopback (the
demo Company, started by tests/conftest.py's `start`, or a test Company written from the spec)
added to that home."""

from __future__ import annotations

import functools

import pytest

from cli_support import make_home, run_main
from poppy_tui.cli.exit_codes import Exit


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A private home whose signing key is a 0600 file: no keyring daemon runs here."""
    return make_home(tmp_path, monkeypatch)


@pytest.fixture
def cli(capsys):
    return functools.partial(run_main, capsys)


def add_to_home(cli, company):
    """`companies add` the running `company` (anything with a base_url) to the test home."""
    run = cli("companies", "add", company.base_url)
    assert run.code == Exit.OK, run.err
    return company


@pytest.fixture
def company_added(cli, home):
    """Start a test Company (a class with base_url and stop()), add it to the home, stop it after."""
    started = []

    def add(company_class):
        company = company_class()
        started.append(company)
        return add_to_home(cli, company)

    yield add
    for company in started:
        company.stop()


@pytest.fixture
def shop(cli, home, company):
    """The demo Company (tests/conftest.py's `company`), added to the test home. Tests name it by
    its domain."""
    return add_to_home(cli, company)
