"""The TUI on a machine where approvals can't be signed (keyring's fail backend, a real
KeyringBackend): a warning at start-up, and `a` refused with the fix (docs/reliability.md, "The
signing key"; conformance row A40)."""

from __future__ import annotations

import keyring
import keyring.backends.fail
import pytest

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.keys import KEY_STORAGE_ENV
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store import Status
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.confirm_approve import ConfirmApproveScreen
from poppy_tui.ui.screens.review import ReviewScreen
from tests.ui.ui_sample import (
    JACKET_SUMMARY,
    add_company,
    add_operation,
    jacket_terms,
    screen_up,
    ui_config,
    wait_for,
)


@pytest.fixture
def unusable_keyring(monkeypatch):
    monkeypatch.delenv(KEY_STORAGE_ENV, raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    yield
    keyring.set_keyring(previous)


def toasts(app) -> list[str]:
    """The toasts on screen, as a person reads them."""
    return [str(toast.render()) for toast in app.screen.query("Toast")]


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_start_up_warns_briefly_and_the_review_says_why_and_the_fix(
    tmp_path, unusable_keyring, size
):
    """The start-up warning and the refusal of `a` are short toasts (two 15-line ones covered the
    review at 80x24); the review's banner says approving is unavailable here, why, and the fix."""
    agent = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(arm_delay_seconds=0.1),
    )
    company = add_company(agent.store, "Manzanita Outfitters", 8401)
    row = add_operation(agent.store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
    app = PoppyApp(agent)
    try:
        async with app.run_test(size=size, notifications=True) as pilot:
            # Said after the first frame, once the keyring was judged in a thread.
            await wait_for(
                pilot,
                lambda: any("can't be signed" in t for t in toasts(app)),
                describe=lambda: repr(toasts(app)),
            )
            warning = next(t for t in toasts(app) if "can't be signed" in t)
            assert (
                KEY_STORAGE_ENV not in warning and len(warning) < 200
            )  # short: the review has the rest
            app.open_review(row)
            screen = await screen_up(pilot, ReviewScreen)
            await wait_for(pilot, lambda: bool(screen.query("#outcome")))
            banner = screen.query_one("#outcome")
            await wait_for(
                pilot,
                lambda: "approving is unavailable on this machine" in str(banner.render()),
                describe=lambda: str(banner.render()),
            )
            assert f"{KEY_STORAGE_ENV}=file" in str(
                banner.render()
            )  # the fix, where the person looks
            assert "a: approve" not in str(banner.render())
            await wait_for(pilot, screen.can_approve)
            await pilot.press("a")
            await wait_for(
                pilot,
                lambda: any(t.startswith("Can't approve") for t in toasts(app)),
                describe=lambda: repr(toasts(app)),
            )
            assert not isinstance(app.screen, ConfirmApproveScreen)
            refused = next(t for t in toasts(app) if t.startswith("Can't approve"))
            assert len(refused) < 200 and "banner above" in refused
            assert agent.store.get_operation(row).status == Status.PENDING
            assert agent.store.decisions(row) == []
    finally:
        agent.store.close()
