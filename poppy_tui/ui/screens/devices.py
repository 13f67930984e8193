"""Devices: pair a phone or another computer with `poppy-tui web`, and end one.

Opened with `p` on the Companies screen. It shows a one-time pairing link and its QR code (valid
a few minutes, for one device) when `poppy-tui web` is running, and the paired devices (name,
paired, last seen); `x` revokes the selected one at once. Device names are the person's own,
shown sanitised like everything else. The page itself is poppy_tui/web (docs/web.md).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import DataTable, Static

from poppy_tui.ui.format import local_time
from poppy_tui.ui.safe import cell, plain_line
from poppy_tui.ui.screens.base import SCREENS_CSS, PoppyScreen
from poppy_tui.ui.widgets.footer import PoppyFooter


class DevicesScreen(PoppyScreen):
    TITLE_TEXT = "Devices"
    CSS_PATH = SCREENS_CSS
    AUTO_FOCUS = "#devices-table"
    BINDINGS = [
        Binding("p", "pair", "New pairing link", id="pair_device"),
        Binding("x", "revoke", "Revoke", id="revoke_device"),
        Binding("escape", "back", "Back", id="back"),
    ]

    def __init__(self) -> None:
        super().__init__(id="devices")
        self.names: list[str] = []

    def compose(self) -> ComposeResult:
        yield from self.title_bar()
        with VerticalScroll(id="devices-body"):
            yield Static(id="devices-pairing")
            yield Static(id="devices-qr")
            yield Static(Content("Paired devices"), classes="section-title")
            yield DataTable(id="devices-table", cursor_type="row", zebra_stripes=True)
            yield Static(
                Content(
                    "p: a new pairing link   x: revoke the selected device (at once)\n"
                    "A paired device can approve: treat it like this terminal."
                ),
                classes="empty",
            )
        yield PoppyFooter()

    def _book(self):
        from poppy_tui.agent.paired_devices import DeviceBook

        return DeviceBook.open(self.agent.paths.ensure().data_dir)

    async def on_mount(self) -> None:
        table = self.query_one("#devices-table", DataTable)
        table.add_columns("Device", "Paired", "Last seen")
        self.action_pair()

    def refresh_data(self) -> None:
        with self._book() as book:
            devices = book.devices()
        table = self.query_one("#devices-table", DataTable)
        table.clear()
        self.names = [device.name for device in devices]
        for device in devices:
            table.add_row(
                cell(device.name, 60),
                cell(local_time(device.paired_at)),
                cell(local_time(device.last_seen) if device.last_seen else "never"),
            )

    def action_pair(self) -> None:
        """A new one-time link (the last one stays good until used or expired)."""
        from poppy_tui.agent.paired_devices import pairing_link, served_page

        pairing_text = self.query_one("#devices-pairing", Static)
        qr = self.query_one("#devices-qr", Static)
        served = served_page(self.agent.paths.ensure().data_dir)
        if served is None:
            pairing_text.update(
                Content(
                    "poppy-tui web is not running, so there is nothing to pair with yet. Start it "
                    "in another terminal ('poppy-tui web', or as a service; docs/web.md), then "
                    "press p here."
                )
            )
            qr.display = False
            self.refresh_data()
            return
        from poppy_tui.agent.signin.qr import qr_text

        with self._book() as book:
            pairing = book.new_pairing()
        link = pairing_link(served.url, pairing.code)
        pairing_text.update(
            Content.assemble(
                ("Pair a device: ", "bold"),
                "open this link on it, or scan the code. It works once, until ",
                local_time(pairing.expires_at),
                ".\n",
                (link, "bold"),
            )
        )
        qr.update(Content(qr_text(link)))
        qr.display = True
        self.refresh_data()

    def action_revoke(self) -> None:
        table = self.query_one("#devices-table", DataTable)
        if not self.names or table.cursor_row is None or table.cursor_row >= len(self.names):
            self.notify("No device is selected.", markup=False)
            return
        name = self.names[table.cursor_row]
        with self._book() as book:
            ended = book.revoke(name)
        if ended is not None:
            self.notify(
                f"Revoked {plain_line(ended.name, 60)}: its next request is refused.",
                markup=False,
            )
        self.refresh_data()

    def action_back(self) -> None:
        self.app.pop_screen()
