"""Keys land where they were typed (walk C1, C6): a Tab typed right after text in New request's form
moves to the next field even when the keys come in one burst (they went on into the same field:
"ord_7Hk2itm_8Wn"), as does an Enter in the Companies add box and History's search box; and Esc
from a review that New request opened comes back with no field focused, so the next key is a
command, not text typed into the request. Keys are posted all at once, as the terminal driver
posts a burst. Through the real Agent, against the strict Company (written from the spec alone),
at 80x24 and at the smallest size the TUI supports."""

from __future__ import annotations

import contextlib

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from textual import events
from textual.widgets import Input

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.review import ReviewScreen
from poppy_tui.ui.sizes import SMALLEST
from tests.ui.ui_sample import screen_up, ui_config, wait_for

SIZES = [(80, 24), SMALLEST]
CHARACTERS = {"tab": "\t", "enter": "\r"}
REBOOK = {
    "/bookings/{booking_id}/rebook": {
        "post": {
            "operationId": "rebookBooking",
            "summary": "Move a booking to another date",
            "parameters": [
                {"name": "booking_id", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "requestBody": {
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {"date": {"type": "string"}},
                            "required": ["date"],
                        }
                    }
                }
            },
        }
    }
}


def burst(app, *keys: str) -> None:
    for key in keys:
        app.post_message(events.Key(key, CHARACTERS.get(key, key)))


@contextlib.asynccontextmanager
async def app_on(tmp_path, strict, screen: str, size):
    agent = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(request_timeout_seconds=5.0),
        key=ec.generate_private_key(ec.SECP256R1()),
    )
    try:
        company = await agent.add_company(strict.base_url)
        app = PoppyApp(agent, initial_screen=screen)
        async with app.run_test(size=size) as pilot:
            await wait_for(pilot, lambda: app.painted)
            yield app, pilot, company
            # A test may end just after a key opened a screen (Talk, say): the app is closed only
            # once that screen has mounted, or its widgets would be torn down half built.
            await wait_for(pilot, lambda: app.screen.is_mounted)
    finally:
        await agent.aclose()


async def rebook_form(app, pilot, company) -> tuple[Input, Input]:
    app.screen.choose_company(company.id)
    listing = app.screen.query_one("#composer-actions")
    await wait_for(pilot, lambda: listing.option_count >= 1 and listing.highlighted == 0)
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.screen.query("#field-1"))
    first, second = app.screen.query_one("#field-0", Input), app.screen.query_one("#field-1", Input)
    await wait_for(pilot, lambda: app.screen.focused is first)
    return first, second


@pytest.mark.parametrize("size", SIZES)
async def test_a_burst_with_a_tab_fills_new_requests_fields_as_typed(tmp_path, strict, size):
    strict.state.openapi_paths = REBOOK
    async with app_on(tmp_path, strict, "compose", size) as (app, pilot, company):
        first, second = await rebook_form(app, pilot, company)
        burst(app, *"bk_1", "tab", *"2026-12-05")
        await wait_for(
            pilot,
            lambda: second.value == "2026-12-05",
            describe=lambda: f"{first.value!r} / {second.value!r}",
        )
        assert first.value == "bk_1"
        assert app.screen.focused is second


@pytest.mark.parametrize("size", SIZES)
async def test_esc_from_the_review_new_request_opened_leaves_no_field_focused(
    tmp_path, strict, size
):
    strict.state.openapi_paths = REBOOK
    async with app_on(tmp_path, strict, "compose", size) as (app, pilot, company):
        first, second = await rebook_form(app, pilot, company)
        await pilot.press(*"bk_1", "tab", *"2026-12-05", "ctrl+s")
        await screen_up(pilot, ReviewScreen, timeout=20)
        await wait_for(pilot, lambda: app.screen.shown_revision_id is not None)
        composer = app.screen_stack[-2]
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is composer)
        await pilot.pause()
        await pilot.pause()
        assert composer.focused is None
        assert (first.value, second.value) == ("bk_1", "2026-12-05")
        await pilot.press("t")  # a command now: Talk, not a "t" in the request
        await wait_for(pilot, lambda: app.current_mode == "talk")
        assert (first.value, second.value) == ("bk_1", "2026-12-05")


@pytest.mark.parametrize("size", SIZES)
async def test_enter_in_the_add_box_gives_the_next_key_to_the_table(tmp_path, strict, size):
    async with app_on(tmp_path, strict, "companies", size) as (app, pilot, company):
        screen = app.screen
        await pilot.press("plus")
        box = screen.query_one("#add-company", Input)
        await wait_for(pilot, lambda: screen.focused is box)
        # The same Company again (a refresh), then "t": Talk with it, not a "t" in the box.
        burst(app, *strict.base_url, "enter", "t")
        await wait_for(pilot, lambda: app.current_mode == "talk")
        assert "t" not in box.value.removeprefix(strict.base_url)
