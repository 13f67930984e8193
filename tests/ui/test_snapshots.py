"""SVG snapshots of the main screens: fixed size, a frozen clock, frozen stored times, no blinking.

Update after an intended change: pytest tests/ui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

import pytest
from poppy_tui.agent.store import Store
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen, ConfirmDeclineScreen
from tests.ui.ui_sample import (
    FIXED_NOW,
    build_sample,
    freeze_times,
    open_agent,
    without_reads,
    steady,
    wait_for,
)

# Every main screen at 80x24, the size the screens are laid out for (docs/tui.md, "Narrow
# terminals"), and at a large one.
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 48), id="160x48")]


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "poppy.db"
    with Store.open(path) as store:
        rows = build_sample(store)
    freeze_times(path)
    store = Store.open(path)
    yield store, rows
    store.close()


_opened: list = []  # the Agents make_app opened, closed after each test


@pytest.fixture(autouse=True)
def _close_agents():
    yield
    while _opened:
        _opened.pop().store.close()


def make_app(store: Store, initial_screen: str = "inbox") -> PoppyApp:
    """The app on the real Agent over the sample's file. No arming delay: the footer then shows
    Approve as it looks once armed."""
    _opened.append(open_agent(store.path, arm_delay_seconds=0))
    return PoppyApp(
        without_reads(_opened[-1]), initial_screen=initial_screen, clock=lambda: FIXED_NOW
    )


@pytest.mark.parametrize("size", SIZES)
def test_inbox(snap_compare, sample, size):
    store, _ = sample
    assert snap_compare(make_app(store), terminal_size=size, run_before=steady)


@pytest.mark.parametrize("size", SIZES)
def test_review_with_discrepancies(snap_compare, sample, size):
    store, rows = sample
    assert snap_compare(
        make_app(store, f"review:{rows['flight']}"), terminal_size=size, run_before=steady
    )


@pytest.mark.parametrize("size", SIZES)
def test_review_of_a_hostile_summary(snap_compare, sample, size):
    store, rows = sample
    assert snap_compare(
        make_app(store, f"review:{rows['hostile']}"), terminal_size=size, run_before=steady
    )


def pressing(key: str, screen_class):
    """A run_before: once the screen is steady, press `key`, wait for the `screen_class` it opens,
    and let that settle too."""

    async def run_before(pilot) -> None:
        await steady(pilot)
        await pilot.press(key)
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, screen_class))
        await steady(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_confirm_approve(snap_compare, sample, size):
    store, rows = sample
    confirm = pressing("a", ConfirmApproveScreen)
    assert snap_compare(
        make_app(store, f"review:{rows['jacket']}"), terminal_size=size, run_before=confirm
    )


@pytest.mark.parametrize("size", SIZES)
def test_history(snap_compare, sample, size):
    store, _ = sample
    assert snap_compare(make_app(store, "history"), terminal_size=size, run_before=steady)


@pytest.mark.parametrize("size", SIZES)
def test_companies(snap_compare, sample, size):
    store, _ = sample
    assert snap_compare(make_app(store, "companies"), terminal_size=size, run_before=steady)


@pytest.mark.parametrize("size", SIZES)
def test_help(snap_compare, sample, size):
    store, _ = sample
    assert snap_compare(make_app(store, "help"), terminal_size=size, run_before=steady)


@pytest.mark.parametrize("size", SIZES)
def test_confirm_decline(snap_compare, sample, size):
    store, rows = sample
    decline = pressing("d", ConfirmDeclineScreen)
    assert snap_compare(
        make_app(store, f"review:{rows['jacket']}"), terminal_size=size, run_before=decline
    )
