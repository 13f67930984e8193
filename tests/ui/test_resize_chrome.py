"""After a resize the title bar and footer read as a fresh start at the new size does: at 80
columns "n New" and no command-palette hint, also on a screen that was under another while the
terminal was resized (the inbox under a review). What is compared is what the footer shows (the
keys it has mounted), not the setting behind it: walk N34 found `^p palette` still on screen at
80 columns after a resize from 160, with the setting already off. Through the real Agent on
temporary paths."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.inbox import InboxScreen
from poppy_tui.ui.screens.review import ReviewScreen
from tests.ui.ui_sample import build_sample, screen_up, ui_config, wait_for


def footer_keys(app) -> tuple[str, ...]:
    """The keys the screen's footer shows (mounted and displayed), as "key description"."""
    footer = app.screen.query_one("PoppyFooter")
    return tuple(
        f"{key.key_display} {key.description}" for key in footer.query("FooterKey") if key.display
    )


def chrome(app) -> tuple[str, tuple[str, ...]]:
    screen = app.screen
    bars = list(screen.query("#title-bar"))
    title = str(bars[0].render()) if bars else ""  # the review has a header of its own instead
    return title, footer_keys(app)


def shows_palette(app) -> bool:
    return any("palette" in key for key in footer_keys(app))


@pytest.fixture
def sample_agent(tmp_path):
    agent = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(),
        key=ec.generate_private_key(ec.SECP256R1()),
    )
    build_sample(agent.store)
    yield agent
    agent.store.close()


async def fresh_chrome(agent, size: tuple[int, int]) -> tuple[str, tuple[str, ...]]:
    app = PoppyApp(agent)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.painted and footer_keys(app))
        return chrome(app)


async def test_title_and_footer_follow_a_resize_like_a_fresh_start(sample_agent):
    at_80 = await fresh_chrome(sample_agent, (80, 24))
    assert " n New " in at_80[0] and "New request" not in at_80[0]
    assert at_80[1] and not any("palette" in key for key in at_80[1])

    app = PoppyApp(sample_agent)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.painted and shows_palette(app))
        assert "New request" in chrome(app)[0]
        await pilot.press("enter")
        await screen_up(pilot, ReviewScreen)
        await wait_for(pilot, lambda: shows_palette(app), describe=lambda: repr(chrome(app)))
        await pilot.resize_terminal(80, 24)
        await wait_for(
            pilot,
            lambda: footer_keys(app) and not shows_palette(app),
            describe=lambda: repr(chrome(app)),
        )
        await pilot.press("escape")
        await screen_up(pilot, InboxScreen)
        await wait_for(pilot, lambda: chrome(app) == at_80, describe=lambda: repr(chrome(app)))


@pytest.mark.parametrize(("start", "end"), [((160, 48), (80, 24)), ((80, 24), (160, 48))])
async def test_the_inbox_footer_after_a_resize_is_a_fresh_starts(sample_agent, start, end):
    """Walk N34: on the inbox, 160 columns to 80 (and back), the footer shows what a fresh
    start at the new size shows: no `^p palette` at 80 columns, and the hint again at 160."""
    fresh = await fresh_chrome(sample_agent, end)
    app = PoppyApp(sample_agent)
    async with app.run_test(size=start) as pilot:
        await wait_for(pilot, lambda: app.painted and footer_keys(app))
        before = footer_keys(app)
        assert shows_palette(app) is (start[0] >= 100)
        await pilot.resize_terminal(*end)
        await wait_for(
            pilot, lambda: footer_keys(app) == fresh[1], describe=lambda: repr(footer_keys(app))
        )
        assert footer_keys(app) != before
