"""Fixtures: a private home, running main(argv) in this process, and Companies on loopback (the
demo Company, or a test Company written from the spec) added to that home."""

from __future__ import annotations

import contextlib
import functools

import pytest

from cli_support import make_home, run_main
from poppy_tui.cli.exit_codes import Exit
from poppy_tui.demo.testing import company as demo_company


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
def start():
    """start(faults="busy=2", accounts=..., ...) -> a fresh demo Company on loopback, not added to
    any home (the options go to poppy_tui.demo.server.start_company); each is stopped after the test."""
    with contextlib.ExitStack() as running:
        yield lambda faults=None, **options: running.enter_context(demo_company(faults, **options))


@pytest.fixture
def company(start):
    """The demo Company (Manzanita Outfitters) on loopback, not added to any home."""
    return start()


@pytest.fixture
def shop(cli, home, company):
    """The demo Company, added to the test home. Tests name it by its domain."""
    return add_to_home(cli, company)
