"""The Companies screen keeps whether you are signed in on screen at every size (it decides
whether a request works): yes/no below 160 columns (whole names and "conversation" from 100), the kind and every scope from 160, and from 200
also when it was discovered and the whole base URL. Through the real Agent on temporary paths."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from textual.geometry import Region

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.agent.store.sign_ins import save_sign_in
from poppy_tui.ui.app import PoppyApp
from tests.ui.ui_sample import add_company, ui_config, wait_for

SCOPES = ("poppy:read", "poppy:write", "bookings")


@pytest.fixture
def agent(tmp_path):
    opened = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(),
        key=ec.generate_private_key(ec.SECP256R1()),
    )
    shop = add_company(opened.store, "Manzanita Outfitters", 46059, mcp=True, talk=True)
    add_company(opened.store, "Strict Travel", 8402)
    save_sign_in(
        opened.store, shop.id, "http://127.0.0.1:46059", "mediated", SCOPES, "demo@example.com"
    )
    yield opened
    opened.store.close()


async def table_lines(agent, size) -> list[str]:
    app = PoppyApp(agent, initial_screen="companies")
    async with app.run_test(size=size) as pilot:
        await wait_for(
            pilot, lambda: app.painted and app.screen.query_one("#companies-table").row_count == 2
        )
        table = app.screen.query_one("#companies-table")
        assert table.size.width <= size[0]
        assert table.virtual_size.width <= table.size.width, "the table scrolls sideways"
        return [strip.text for strip in table.render_lines(Region(0, 0, table.size.width, 3))]


async def test_at_80_columns_each_row_says_whether_you_are_signed_in(agent):
    header, shop, travel = await table_lines(agent, (80, 24))
    assert "Signed in" in header
    assert shop.rstrip().endswith("yes") and travel.rstrip().endswith("no")
    assert "API, MCP, Talk" in shop  # "conversation" is Talk here, so the row fits


@pytest.mark.parametrize("width", [160, 190])
async def test_from_160_columns_the_scopes_are_readable_in_full(agent, width):
    header, shop, travel = await table_lines(agent, (width, 40))
    assert "mediated: poppy:read poppy:write bookings" in shop
    assert "…" not in shop
    assert "Base URL" not in header  # it would be cut to a stub here ("http://12")


async def test_from_200_columns_the_base_url_shows_whole(agent):
    header, shop, travel = await table_lines(agent, (220, 48))
    assert "Base URL" in header and "Discovered" in header
    assert "http://127.0.0.1:46059" in shop and "http://127.0.0.1:8402" in travel
    assert "mediated: poppy:read poppy:write bookings" in shop


async def test_between_80_and_160_columns_it_is_yes_or_no_without_scrolling(agent):
    header, shop, travel = await table_lines(agent, (120, 30))
    assert shop.rstrip().endswith("yes") and travel.rstrip().endswith("no")
