"""The simulation's fixtures: the in-memory keyring (every home's signing key lives there) and
one simulated Company served for the whole run, given a fresh world by each test or example."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.keyring_support import MemoryKeyring, memory_keyring  # noqa: F401 (shared autouse fixture)

from .company import SimCompany
from .sim_clock import SimClock
from .world import World


@pytest.fixture(scope="module")
def sim_company() -> Iterator[SimCompany]:
    company = SimCompany(World(SimClock()))
    yield company
    company.stop()
