"""The TUI's Devices screen (`p` on Companies): a one-time pairing link and its QR code while
`poppy-tui web` runs, what to do when it doesn't, the paired devices, and `x` revoking one."""

from __future__ import annotations

from poppy_tui.agent.paired_devices import DeviceBook, announce_server, forget_server
from poppy_tui.ui.app import PoppyApp
from tests.ui.ui_sample import screen_up, wait_for, workers_done

SIZE = (120, 48)


def shown(app) -> str:
    return "\n".join(str(widget.render()) for widget in app.screen.query("Static"))


async def test_pair_a_phone_from_the_companies_screen_and_revoke_it(agent):
    from poppy_tui.ui.screens.devices import DevicesScreen

    data_dir = agent.paths.ensure().data_dir
    app = PoppyApp(agent, initial_screen="companies")
    async with app.run_test(size=SIZE) as pilot:
        await workers_done(pilot)
        await pilot.press("p")
        await screen_up(pilot, DevicesScreen)
        assert "poppy-tui web is not running" in shown(app)
        announce_server(data_dir, "http://127.0.0.1:9", passkey=False)
        try:
            await pilot.press("p")
            await wait_for(pilot, lambda: "http://127.0.0.1:9/pair/" in shown(app))
            text = shown(app)
            assert "It works once, until" in text and "█" in text  # the QR code
            link = next(w for w in text.split() if w.startswith("http://127.0.0.1:9/pair/"))
            with DeviceBook.open(data_dir) as book:
                book.redeem(link.rsplit("/", 1)[1], "Phone \u202e")
            await pilot.press("p")  # a new link; the list is read again
            screen = app.screen
            await wait_for(pilot, lambda: screen.names == ["Phone \u202e"])
            table = screen.query_one("#devices-table")
            assert "⟨U+202E⟩" in str(table.get_row_at(0)[0])  # the person's name, neutralised
            await pilot.press("x")
            await wait_for(pilot, lambda: screen.names == [])
            with DeviceBook.open(data_dir) as book:
                assert book.devices() == []
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, DevicesScreen))
        finally:
            forget_server(data_dir)
