"""Keys land where they were typed, however fast (walk C1): a password manager's auto-type, or any
burst that arrives in one read, "email<Tab>password<Enter>", put the password in the Email field,
in clear text, because Textual hands each key to the widget focused when the app takes it, and the
Tab moved focus only once the Email field had handled it. The keys here are posted to the app all
at once, as the terminal driver posts a burst, with nothing run between them. Against the
spec-written authorization server, at 80x24 and at the smallest size the TUI supports."""

from __future__ import annotations

import json

import pytest
from textual import events
from textual.widgets import Input, Static

from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.signin import SignInScreen, open_sign_in
from poppy_tui.ui.sizes import SMALLEST

from spec_auth_server import USER
from tests.ui.ui_sample import wait_for

CHARACTERS = {"tab": "\t", "enter": "\r"}


def burst(app, *keys: str) -> None:
    """Each key (a character, or "tab"/"enter"), posted at once: none is handled before the last
    is in the app's queue."""
    for key in keys:
        app.post_message(events.Key(key, CHARACTERS.get(key, key)))


def _text(screen) -> str:
    return "\n".join(str(w.render()) for w in screen.query(Static))


@pytest.mark.parametrize("size", [(80, 24), SMALLEST])
@pytest.mark.parametrize("between", ["tab", "enter"])
async def test_a_burst_of_email_tab_password_enter_signs_in_and_shows_no_secret(
    setup, size, between
):
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=size) as pilot:
        open_sign_in(app, setup.company.id, kind="mediated")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SignInScreen) and app.screen.query("#sign-in-field-1"),
            describe=lambda: "the form",
        )
        dialog = app.screen
        email = dialog.query_one("#sign-in-field-0", Input)
        seen_in_email: list[str] = []
        email.watch(email, "value", lambda value: seen_in_email.append(value), init=False)
        burst(app, *USER["email"], between, *USER["password"], "enter")
        await wait_for(
            pilot,
            lambda: not isinstance(app.screen, SignInScreen),
            describe=lambda: _text(dialog),
        )
        # The password never was in the visible field, not even for a moment.
        assert all(USER["password"] not in value for value in seen_in_email), seen_in_email
        assert "Fill in every field" not in _text(dialog)
    assert setup.signins.status(setup.company).kind == "mediated"
    sent = [s for s in setup.auth.received if s.path == "/poppy/sign-in"]
    assert json.loads(sent[-1].body)["fields"] == {
        "email": USER["email"],
        "password": USER["password"],
    }


async def test_letters_typed_as_the_form_appears_are_text_not_the_dialogs_keys(setup):
    """d, b and m choose a kind of sign-in; once a form takes letters they are only text (an
    email such as "dmb@…" must not start another sign-in)."""
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=(80, 24)) as pilot:
        open_sign_in(app, setup.company.id, kind="mediated")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SignInScreen) and app.screen.query("#sign-in-field-1"),
        )
        dialog = app.screen
        assert dialog.focused is dialog.query_one("#sign-in-field-0", Input)
        assert not dialog.check_action("start", ("device",))
        burst(app, *"dmb")
        await wait_for(pilot, lambda: dialog.query_one("#sign-in-field-0", Input).value == "dmb")
        assert dialog.kind == "mediated" and not dialog.busy
