"""Fixtures any test folder uses: the strict Company (tests/companies/strict_company.py, written
from the operations extension's text alone) on loopback."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.companies.strict_company import StrictCompany


@pytest.fixture
def strict() -> Iterator[StrictCompany]:
    """The strict Company on 127.0.0.1, stopped after the test; tests steer it through strict.state.
    A folder or file that needs it set up otherwise overrides this fixture by its name."""
    company = StrictCompany()
    yield company
    company.stop()
