"""Keys land where the person typed them, however fast they come.

Textual hands a key to the widget focused when it takes the key from the app's queue, and a
widget handles its keys later, from its own queue. A Tab (or an Enter that moves on to the next
field) is answered by a binding only once the field it was typed into handles it; the keys typed
after it were handed out before that, so they went to the same field. A password manager's
auto-type, or any burst that arrives in one read ("river@manzanita.example<Tab>nope<Enter>"), put
the password in the Email field, in clear text.

A priority binding runs when the app takes the key, before the next key is handed out. So here
Tab and Shift+Tab, and Enter where it moves focus, are priority bindings that move focus at once
(Screen.set_focus, not Widget.focus, which waits for the app's queue). An Enter that also submits
the field's value has the field submit it once it has handled the keys typed before the Enter
(a callback in the field's own queue, behind them). Public Textual API only.
"""

from __future__ import annotations


from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input

TYPED_FOCUS_BINDINGS: list[BindingType] = [
    Binding("tab", "focus_as_typed('next')", "Next field", show=False, priority=True),
    Binding("shift+tab", "focus_as_typed('previous')", "Previous field", show=False, priority=True),
    Binding("enter", "enter_as_typed", "Enter", show=False, priority=True),
]


class TypedFocus:
    """A Screen mixin: focus moves with the keys as typed. Screens say where Enter in a field
    moves focus with `enter_moves_focus_to`."""

    def _screen(self) -> Screen:
        assert isinstance(self, Screen)
        return self

    def enter_moves_focus_to(self, field: Input) -> tuple[Widget | None, bool] | None:
        """Where Enter in `field` moves focus, and whether it also submits the field's value;
        None: Enter does what the field does with it (the keys after it stay there)."""
        return None

    def action_focus_as_typed(self, direction: str) -> None:
        if direction == "previous":
            self._screen().focus_previous()
        else:
            self._screen().focus_next()

    def action_enter_as_typed(self) -> None:
        field = self._screen().focused
        if not isinstance(field, Input):
            raise SkipAction()  # a table's row, a button, a card: theirs
        moves = self.enter_moves_focus_to(field)
        if moves is None:
            raise SkipAction()
        target, submits = moves
        self._screen().set_focus(target)  # now: the next key typed goes there
        if submits:
            # After the keys typed before this Enter, which wait in the field's queue.
            field.call_later(field.action_submit)
