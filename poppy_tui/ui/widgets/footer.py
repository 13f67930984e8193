"""The footer every poppy screen shows: the screen's own keys first, and at narrow widths
without the command-palette hint, so at 80 columns the keys that decide are never cut off."""

from __future__ import annotations

from textual.widgets import Footer

# Below this many columns ctrl+p stays available but isn't advertised (the help lists it).
PALETTE_HINT_FROM = 100


class PoppyFooter(Footer):
    # Hidden by a class, not by Footer's show_command_palette: that setting is read only when
    # Footer builds its keys (when the screen's bindings change), so after a resize the hint
    # stayed on screen at 80 columns, or stayed away at 160 (walk N34). A class applies at once
    # and to every rebuild, with no second rebuild racing Footer's own.
    DEFAULT_CSS = """
    PoppyFooter.-narrow FooterKey.-command-palette {
        display: none;
    }
    """

    def on_mount(self) -> None:
        self.fit()

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        self.set_class(self.app.size.width < PALETTE_HINT_FROM, "-narrow")
