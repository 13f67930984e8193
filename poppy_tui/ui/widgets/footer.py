"""The footer every poppy screen shows: the screen's own keys first, and at narrow widths
without the command-palette hint, so at 80 columns the keys that decide are never cut off."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._keys_built: tuple[Any, ...] | None = None  # what the keys were last built from

    def on_mount(self) -> None:
        self.fit()

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """Rebuild the keys only when what they show has changed. Footer rebuilds them on every
        change of focus, removing each key and mounting a new one: the inbox's cursor moving
        between its parts did it, for the same keys, and a rebuild landing while a test waits for
        every widget to handle its messages left that wait on keys that no longer exist."""
        keys = self._keys_from(screen)
        if keys == self._keys_built:
            return
        shown = screen.app.app_focus and self.is_attached and screen is self.screen
        self._keys_built = keys if shown else None  # Footer builds nothing unless shown
        super().bindings_changed(screen)

    def _keys_from(self, screen: Screen[Any]) -> tuple[Any, ...]:
        """What Footer builds its keys from (Footer.compose reads the same)."""
        return (
            self.show_command_palette,
            self.compact,
            tuple(
                (
                    key,
                    binding.action,
                    binding.description,
                    binding.show,
                    binding.group,
                    self.app.get_key_display(binding),
                    enabled,
                    tooltip,
                )
                for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
            ),
        )

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        self.set_class(self.app.size.width < PALETTE_HINT_FROM, "-narrow")
