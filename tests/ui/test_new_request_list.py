"""New request: a long operation summary from the Company's OpenAPI reads whole in the list
(it was cut at 60 characters behind a marker longer than what it hid, "appli…(+3 chars)"), and
once the list is shown with an item highlighted the hint says to press Enter on one. Through the
real Agent, against a Company written from the spec alone."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.composer import PICK_ACTION
from tests.companies.strict_company import StrictCompany
from tests.ui.ui_sample import ui_config, wait_for

LONG = "Cancel a booking; the fare rules decide the fee (none if refundable)"


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_long_summaries_read_whole_and_the_hint_says_press_enter(tmp_path, size):
    strict = StrictCompany()
    agent = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(),
        key=ec.generate_private_key(ec.SECP256R1()),
    )
    try:
        company = await agent.add_company(strict.base_url)
        app = PoppyApp(agent, initial_screen="compose")
        async with app.run_test(size=size) as pilot:
            await wait_for(pilot, lambda: app.painted)
            app.screen.choose_company(company.id)
            listing = app.screen.query_one("#composer-actions")
            await wait_for(pilot, lambda: listing.option_count > 1 and listing.highlighted == 0)
            prompts = [
                str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)
            ]
            assert any(LONG in prompt for prompt in prompts), prompts
            assert not any("chars)" in prompt for prompt in prompts), prompts
            await wait_for(
                pilot, lambda: PICK_ACTION in str(app.screen.query_one("#composer-title").render())
            )
    finally:
        agent.store.close()
        strict.stop()
