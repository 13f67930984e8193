"""SVG snapshots of the main screens: fixed size, a frozen clock, frozen stored times, no blinking.

Update after an intended change: pytest tests/ui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

import pytest
from poppy_tui.agent.store import Store
from poppy_tui.ui.app import PoppyApp
from tests.ui.ui_sample import FIXED_NOW, StoreAgent, build_sample, freeze_times, steady, ui_config

SIZE = (120, 36)


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "poppy.db"
    with Store.open(path) as store:
        rows = build_sample(store)
    freeze_times(path)
    store = Store.open(path)
    yield store, rows
    store.close()


def make_app(store: Store, initial_screen: str = "inbox") -> PoppyApp:
    # No arming delay: the footer then shows Approve as it looks once armed.
    return PoppyApp(StoreAgent(store, ui_config(arm_delay_seconds=0)), initial_screen=initial_screen,
                    clock=lambda: FIXED_NOW)


def test_inbox(snap_compare, sample):
    store, _ = sample
    assert snap_compare(make_app(store), terminal_size=SIZE, run_before=steady)


def test_review_with_discrepancies(snap_compare, sample):
    store, rows = sample
    assert snap_compare(make_app(store, f"review:{rows['flight']}"), terminal_size=SIZE, run_before=steady)


def test_review_of_a_hostile_summary(snap_compare, sample):
    store, rows = sample
    assert snap_compare(make_app(store, f"review:{rows['hostile']}"), terminal_size=SIZE, run_before=steady)


def test_confirm_approve(snap_compare, sample):
    store, rows = sample

    async def confirm(pilot) -> None:
        await steady(pilot)
        await pilot.press("a")
        await pilot.pause(0.3)

    assert snap_compare(make_app(store, f"review:{rows['jacket']}"), terminal_size=SIZE, run_before=confirm)


def test_history(snap_compare, sample):
    store, _ = sample
    assert snap_compare(make_app(store, "history"), terminal_size=SIZE, run_before=steady)


def test_companies(snap_compare, sample):
    store, _ = sample
    assert snap_compare(make_app(store, "companies"), terminal_size=SIZE, run_before=steady)


def test_help(snap_compare, sample):
    store, _ = sample
    assert snap_compare(make_app(store, "help"), terminal_size=SIZE, run_before=steady)
