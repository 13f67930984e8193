"""After a resize the title bar and footer read as a fresh start at the new size does: at 80
columns "n New" and no command-palette hint, also on a screen that was under another while the
terminal was resized (the inbox under a review). Through the real Agent on temporary paths."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric import ec

from poppy_tui.agent.agent import Agent
from poppy_tui.agent.paths import Paths
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.inbox import InboxScreen
from poppy_tui.ui.screens.review import ReviewScreen
from tests.ui.ui_sample import build_sample, ui_config, wait_for


def chrome(app) -> tuple[str, bool]:
    screen = app.screen
    bars = list(screen.query("#title-bar"))
    title = str(bars[0].render()) if bars else ""  # the review has a header of its own instead
    footer = screen.query_one("PoppyFooter")
    return title, footer.show_command_palette


async def test_title_and_footer_follow_a_resize_like_a_fresh_start(tmp_path):
    agent = Agent.open(
        Paths(config_dir=tmp_path / "config", data_dir=tmp_path / "data"),
        ui_config(),
        key=ec.generate_private_key(ec.SECP256R1()),
    )
    try:
        build_sample(agent.store)
        fresh = PoppyApp(agent)
        async with fresh.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: fresh.painted)
            at_80 = chrome(fresh)
        assert " n New " in at_80[0] and "New request" not in at_80[0] and at_80[1] is False

        app = PoppyApp(agent)
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_for(pilot, lambda: app.painted)
            assert "New request" in chrome(app)[0] and chrome(app)[1] is True
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
            await pilot.resize_terminal(80, 24)
            await wait_for(
                pilot, lambda: chrome(app)[1] is False, describe=lambda: repr(chrome(app))
            )
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, InboxScreen))
            await wait_for(pilot, lambda: chrome(app) == at_80, describe=lambda: repr(chrome(app)))
    finally:
        agent.store.close()
