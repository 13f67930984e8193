"""Fixtures for the web page's tests: one home, the strict Company registered in it, and one
`poppy-tui web` per module (starting a server is the slow part; the tests share it and each
makes the operations it looks at)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.companies.strict_company import StrictCompany
from tests.web.web_support import WebServer, make_home, register, running_web


@pytest.fixture(scope="module")
def travel() -> Iterator[StrictCompany]:
    company = StrictCompany()
    yield company
    company.stop()


@pytest.fixture(scope="module")
def web_home(tmp_path_factory, travel):
    home = make_home(tmp_path_factory.mktemp("web") / "home")
    register(home, travel.base_url)
    return home


@pytest.fixture(scope="module")
def web(web_home, tmp_path_factory) -> Iterator[WebServer]:
    with running_web(web_home, tmp_path_factory.mktemp("web-logs")) as server:
        yield server
