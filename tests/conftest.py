"""Fixtures any test folder uses: Companies on loopback. The demo Company (poppy_tui/demo, started
fresh for each test; a folder that needs it wrapped or set up otherwise overrides `start` or
`company` by name) and the strict Company (tests/companies/strict_company.py, written from the
operations extension's text alone)."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

import pytest

from poppy_tui.demo.server import RunningCompany
from poppy_tui.demo.testing import company as demo_company
from tests.companies.strict_company import StrictCompany


@pytest.fixture
def start() -> Iterator[Callable[..., RunningCompany]]:
    """start(faults="busy=2", accounts=..., ...) -> a fresh demo Company on loopback (faults a
    Faults or its text; the other options go to poppy_tui.demo.server.start_company); each is
    stopped after the test."""
    with contextlib.ExitStack() as running:
        yield lambda faults=None, **options: running.enter_context(demo_company(faults, **options))


@pytest.fixture
def company(start) -> RunningCompany:
    """The demo Company (Manzanita Outfitters) on loopback, known to no home."""
    return start()


@pytest.fixture
def strict() -> Iterator[StrictCompany]:
    """The strict Company on 127.0.0.1, stopped after the test; tests steer it through strict.state.
    A folder or file that needs it set up otherwise overrides this fixture by its name."""
    company = StrictCompany()
    yield company
    company.stop()
