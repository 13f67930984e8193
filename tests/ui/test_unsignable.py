"""The TUI on a machine where approvals can't be signed (keyring's fail backend, a real
KeyringBackend): a warning at start-up, and `a` refused with the fix (issue #11 item 7)."""

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
from tests.ui.ui_sample import JACKET_SUMMARY, add_company, add_operation, jacket_terms, review_shown, ui_config, wait_for, record_notifications


@pytest.fixture
def unusable_keyring(monkeypatch):
    monkeypatch.delenv(KEY_STORAGE_ENV, raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    yield
    keyring.set_keyring(previous)


async def test_start_up_warns_and_a_is_refused_with_the_fix(tmp_path, unusable_keyring):
    agent = Agent.open(Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"), ui_config(arm_delay_seconds=0.1))
    company = add_company(agent.store, "Manzanita Outfitters", 8401)
    row = add_operation(agent.store, company, "exc_5Rt2", JACKET_SUMMARY, terms=jacket_terms())
    app = PoppyApp(agent)
    notes = record_notifications(app)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            # Said after the first frame; a loaded CI machine took longer than a fixed 0.3 s pause.
            await wait_for(pilot, lambda: any("can't be signed" in m for m in notes))
            app.open_review(row)
            screen = await review_shown(pilot)
            assert isinstance(screen, ReviewScreen)
            await wait_for(pilot, screen.can_approve)
            await pilot.press("a")
            await wait_for(pilot, lambda: any(m.startswith("Can't approve") for m in notes))
            await pilot.pause()
            assert not isinstance(app.screen, ConfirmApproveScreen)
            refused = [m for m in notes if m.startswith("Can't approve")]
            assert refused and f"{KEY_STORAGE_ENV}=file" in refused[0]
            assert agent.store.get_operation(row).status == Status.PENDING
            assert agent.store.decisions(row) == []
    finally:
        agent.store.close()
