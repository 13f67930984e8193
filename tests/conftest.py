"""Fixtures any test folder uses: Companies on loopback. The demo Company (poppy_tui/demo, started
fresh for each test; a folder that needs it wrapped or set up otherwise overrides `start` or
`company` by name), the strict Company (tests/companies/strict_company.py, written from the
operations extension's text alone) and Birch Market (`birch`, tests/companies/account_company.py:
accounts, sign-in and account-owned operations). The sign-in stand-ins are in tests/signed_in.py.

And for every test module: what it left open is closed when it ends, and a module that leaves
many descriptors open fails.

Each test home gets a development identity served on a loopback port of its own
(agent/identity/publisher.py), by a server kept for the life of the process, as poppy-tui keeps
its one: an event loop, its thread and a listener (four descriptors) per home, which a long run
piled up past 1024 descriptors (select.select refuses those, and ulimit -n is 1024 on many
machines). The servers a module started are stopped when it ends."""

from __future__ import annotations

import collections
import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from poppy_tui.demo.server import RunningCompany
from poppy_tui.demo.testing import company as demo_company
from tests.companies.account_company import AccountCompany
from tests.companies.strict_company import StrictCompany

# Birch Market's accounts and the scopes of the tokens it knows (tests/companies/account_company.py):
# the orders scope is what its orders need; tok_alice_read is signed in without it.
BIRCH_TOKENS = {
    "tok_alice": ("alice", ("poppy:read", "orders")),
    "tok_bob": ("bob", ("poppy:read", "orders")),
    "tok_alice_read": ("alice", ("poppy:read",)),
}


# How many processes `python -m pytest` runs the suite in (pyproject's addopts: `-n auto`, which
# asks pytest_xdist_auto_num_workers below). The suite mostly waits (servers, child processes,
# timers): on 2 cores a whole run spends about a third of its wall time on the CPU, so more workers
# than cores pay off (docs/development.md, "Parallel tests", has the measurements).
WORKERS = 4
# Runs of this many test files or fewer stay in one process (no workers to start): the usual
# `python -m pytest -q tests/x/test_y.py` while working. `-n 0` always means one process, `-n N`
# exactly N workers; PYTEST_XDIST_AUTO_NUM_WORKERS sets what `auto` means.
IN_PROCESS_UP_TO_FILES = 2


def _named_files(config: pytest.Config) -> int | None:
    """How many test files the command line names, or None when it names a folder (or nothing)."""
    files = 0
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0])
        if not path.is_file():
            return None
        files += 1
    return files


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if chosen:
        return int(chosen)
    named = _named_files(config)
    if named is not None and named <= IN_PROCESS_UP_TO_FILES:
        return 0
    return WORKERS


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


@pytest.fixture
def birch() -> Iterator[AccountCompany]:
    """Birch Market (tests/companies/account_company.py, written from the spec alone) on
    127.0.0.1, knowing BIRCH_TOKENS; stopped after the test."""
    company = AccountCompany()
    company.state.tokens.update(BIRCH_TOKENS)
    yield company
    company.stop()


# Descriptors a module may leave open: a few sockets still waiting for the garbage collector
# come and go; a leak per test (the identity servers left 12 to 119 per module) does not.
MAX_LEFT_OPEN_PER_MODULE = 16
_DESCRIPTORS = "/proc/self/fd"  # Linux; elsewhere the count is not checked


def _publisher():
    # Only if some test imported it: a module that never serves an identity doesn't pay for it.
    return sys.modules.get("poppy_tui.agent.identity.publisher")


def _open_descriptors() -> dict[int, str]:
    found = {}
    for name in os.listdir(_DESCRIPTORS):
        try:
            found[int(name)] = os.readlink(f"{_DESCRIPTORS}/{name}")
        except OSError:
            pass  # the listing's own descriptor, closed by now
    return found


def _kinds(targets: list[str]) -> dict[str, int]:
    return dict(collections.Counter(t.split(":")[0] if ":" in t else "file " + t for t in targets))


@pytest.fixture(scope="module", autouse=True)
def _module_closes_what_it_opened() -> Iterator[None]:
    publisher = _publisher()
    before_ports = publisher.serving() if publisher is not None else frozenset()
    counting = os.path.isdir(_DESCRIPTORS)
    before = _open_descriptors() if counting else {}
    yield
    publisher = _publisher()
    if publisher is not None:
        for port in publisher.serving() - before_ports:
            publisher.stop(port)
    if not counting or len(_open_descriptors()) - len(before) <= MAX_LEFT_OPEN_PER_MODULE:
        return
    gc.collect()  # sockets and files nothing refers to any more close now
    after = _open_descriptors()
    if len(after) - len(before) > MAX_LEFT_OPEN_PER_MODULE:
        left = [target for fd, target in after.items() if before.get(fd) != target]
        pytest.fail(
            f"this module left {len(after) - len(before)} more descriptors open than it found "
            f"(at most {MAX_LEFT_OPEN_PER_MODULE}): {_kinds(left)}",
            pytrace=False,
        )
