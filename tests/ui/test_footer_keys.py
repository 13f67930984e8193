"""The footer rebuilds its keys only when what they show changes (ui/widgets/footer.py): moving
focus between parts with the same keys keeps the very same key widgets; a key that becomes
unavailable, a screen with other keys, and a remapped key are shown at once."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Button

from poppy_tui.ui.widgets.footer import PoppyFooter
from tests.ui.ui_sample import wait_for


class Keys(Screen[None]):
    BINDINGS = [
        Binding("a", "approve", "Approve", id="approve"),
        Binding("d", "decline", "Decline", id="decline"),
    ]
    can_approve = True

    def compose(self) -> ComposeResult:
        yield Button("one", id="one")
        yield Button("two", id="two")
        yield PoppyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "approve":
            return True if self.can_approve else None
        return True


class Other(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        yield Button("x")
        yield PoppyFooter()


class KeysApp(App[None]):
    def on_mount(self) -> None:
        self.push_screen(Keys())


def shown(screen) -> list[tuple[str, bool]]:
    """(description, shown as unavailable) of each key in the footer."""
    return [(key.description, key.has_class("-disabled")) for key in screen.query("FooterKey")]


async def test_the_same_keys_are_not_rebuilt_and_changed_keys_are_shown():
    app = KeysApp()
    async with app.run_test(size=(100, 10)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: ("Approve", False) in shown(app.screen))
        built = list(screen.query("FooterKey"))
        screen.query_one("#two", Button).focus()
        await wait_for(pilot, lambda: screen.focused is screen.query_one("#two"))
        screen.query_one("#one", Button).focus()
        await wait_for(pilot, lambda: screen.focused is screen.query_one("#one"))
        await pilot.pause()
        assert list(screen.query("FooterKey")) == built  # the same widgets: nothing rebuilt

        screen.can_approve = False
        screen.refresh_bindings()
        await wait_for(pilot, lambda: ("Approve", True) in shown(screen))

        app.push_screen(Other())
        await wait_for(pilot, lambda: ("Close", False) in shown(app.screen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)

        app.update_keymap({"decline": "x"})
        await wait_for(
            pilot, lambda: any(key.key_display == "x" for key in screen.query("FooterKey"))
        )
