"""The footer every poppy screen shows: the screen's own keys first, and at narrow widths
without the command-palette hint, so at 80 columns the keys that decide are never cut off."""

from __future__ import annotations

from textual.widgets import Footer

# Below this many columns ctrl+p stays available but isn't advertised (the help lists it).
PALETTE_HINT_FROM = 100


class PoppyFooter(Footer):
    def on_mount(self) -> None:
        self.fit()

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        wanted = self.app.size.width >= PALETTE_HINT_FROM
        if self.show_command_palette != wanted:
            self.show_command_palette = wanted
