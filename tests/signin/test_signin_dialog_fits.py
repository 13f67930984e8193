"""The sign-in dialog at 80x24 and 160x48, against the spec-written authorization server: the
code, the link, the status and the keys are always on screen, the QR code only where it fits,
the dialog no wider than the screen, a refused password leaves the person typing again with the
reason in view, and the footer lists the dialog's own keys only."""

from __future__ import annotations

import pytest
from textual.geometry import Region
from textual.widgets import Input, Static

from poppy_tui.agent.signin import flows
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.signin import SignInScreen, open_sign_in

from spec_auth_server import USER
from tests.ui.ui_sample import wait_for

SIZES = [(80, 24), (160, 48)]


def _text(widget) -> str:
    return str(widget.render())


def _on_screen(dialog, selector: str) -> bool:
    """Wholly drawn: inside the screen, and inside the scrolled step area when it is in it."""
    widget = dialog.query_one(selector)
    region = widget.region
    if region.height == 0 or not widget.display:
        return False
    screen = Region(0, 0, dialog.size.width, dialog.size.height)
    body = dialog.query_one("#sign-in-body")
    inside_body = widget in body.walk_children()
    return screen.contains_region(region) and (
        not inside_body or body.region.contains_region(region)
    )


def _footer_keys(app) -> set[str]:
    return {
        binding.key
        for (_, binding, enabled, _) in app.screen.active_bindings.values()
        if binding.show and enabled
    }


async def _dialog(
    pilot, app, company_id: int, kind: str | None = None, ready: str = "#sign-in-status"
):
    open_sign_in(app, company_id, kind=kind)
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, SignInScreen) and app.screen.query(ready),
        describe=lambda: ready,
    )
    await pilot.pause()
    return app.screen


@pytest.mark.parametrize("size", SIZES)
async def test_device_step_keeps_code_link_status_and_cancel_on_screen(setup, size):
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=size) as pilot:
        dialog = await _dialog(pilot, app, setup.company.id, "device", ready="#sign-in-code")
        await wait_for(
            pilot,
            lambda: "Waiting for you to confirm" in _text(dialog.query_one("#sign-in-status")),
            describe=lambda: "the waiting line",
        )
        await pilot.pause()
        for selector in ("#sign-in-code", "#sign-in-link", "#sign-in-status", "#sign-in-help"):
            assert _on_screen(dialog, selector), (selector, dialog.query_one(selector).region)
        assert dialog.flow.user_code in _text(dialog.query_one("#sign-in-code"))
        assert "Esc: cancel" in _text(dialog.query_one("#sign-in-help"))
        assert dialog.query_one("#sign-in-dialog").region.right <= size[0]
        # The QR code (about 17 lines) only where the screen has room for it beside the rest.
        assert dialog.query_one("#sign-in-qr").display == (size[1] >= 48)
        if size[1] >= 48:
            assert _on_screen(dialog, "#sign-in-qr")
        # While it waits: Esc and copy, not the kinds (the footer lists the dialog's own keys only).
        assert _footer_keys(app) == {"escape", "c"}
        await pilot.press("c")
        assert app.clipboard == dialog.flow.link
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, SignInScreen), describe=lambda: "cancel"
        )


async def test_a_resize_brings_the_qr_code_back_and_takes_it_away(setup):
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=(160, 48)) as pilot:
        dialog = await _dialog(pilot, app, setup.company.id, "device", ready="#sign-in-code")
        await wait_for(
            pilot,
            lambda: dialog.query_one("#sign-in-qr").display,
            describe=lambda: "the QR code at 160x48",
        )
        await pilot.resize_terminal(80, 24)
        await wait_for(
            pilot,
            lambda: not dialog.query_one("#sign-in-qr").display,
            describe=lambda: "no QR code at 80x24",
        )
        await pilot.pause()
        for selector in ("#sign-in-code", "#sign-in-status", "#sign-in-help"):
            assert _on_screen(dialog, selector), selector
        await pilot.press("escape")


@pytest.mark.parametrize("size", SIZES)
async def test_a_refused_password_shows_why_with_the_keys_and_typing_works_again(setup, size):
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=size) as pilot:
        dialog = await _dialog(pilot, app, setup.company.id, ready="#sign-in-help")
        await wait_for(pilot, lambda: dialog.offered, describe=lambda: "the kinds offered")
        assert _footer_keys(app) == {"escape", "d", "b", "m"}  # not Companies' t + s o q
        await pilot.press("m")
        await wait_for(
            pilot,
            lambda: dialog.query("#sign-in-field-1") and dialog.focused is not None,
            describe=lambda: "the form",
        )
        assert dialog.query_one("#sign-in-dialog").region.right <= size[0]
        await pilot.press(*USER["email"], "enter", *"wrong-password", "enter")
        status = dialog.query_one("#sign-in-status", Static)
        await wait_for(
            pilot,
            lambda: "wrong email or password" in _text(status),
            describe=lambda: "the refusal",
        )
        await wait_for(
            pilot,
            lambda: isinstance(dialog.focused, Input) and dialog.focused.id == "sign-in-field-0",
            describe=lambda: "the first field focused again",
        )
        await pilot.pause()
        assert status.has_class("-error")
        assert "wrong email or password; try again" in _text(status)
        assert _on_screen(dialog, "#sign-in-status") and _on_screen(dialog, "#sign-in-help")
        assert _on_screen(dialog, "#sign-in-field-0")
        # The letters are text in the fresh form: the keys line and the footer offer what works.
        assert _text(dialog.query_one("#sign-in-help")) == "Esc: cancel"
        assert _footer_keys(app) == {"escape"}
        # Typing reaches the fresh form: a second try signs in.
        await pilot.press(*USER["email"], "enter", *USER["password"], "enter")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, SignInScreen), describe=lambda: "signed in"
        )
    assert setup.signins.status(setup.company).kind == "mediated"


async def test_a_wrong_code_keeps_the_code_step_and_its_input(setup):
    """A Company that keeps the code step open gets the code again; this one (the spec server)
    ends it at the first wrong code, so the retry says so with the keys to start again."""
    setup.auth.mediated_needs_code = True
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await _dialog(pilot, app, setup.company.id, "mediated", ready="#sign-in-field-1")
        await wait_for(
            pilot, lambda: dialog.focused is not None, describe=lambda: "the form focused"
        )
        await pilot.press(*USER["email"], "enter", *USER["password"], "enter")
        await wait_for(
            pilot,
            lambda: dialog.query("#sign-in-code-input") and dialog.focused is not None,
            describe=lambda: "the code step",
        )
        await pilot.press(*"000000", "enter")
        status = dialog.query_one("#sign-in-status", Static)
        await wait_for(
            pilot,
            lambda: "did not take that code" in _text(status),
            describe=lambda: "the wrong code",
        )
        assert "wrong code; type the code again" in _text(status)
        assert dialog.focused is dialog.query_one("#sign-in-code-input", Input)
        assert _on_screen(dialog, "#sign-in-status") and _on_screen(dialog, "#sign-in-code-input")
        await pilot.press(*USER["code"], "enter")
        await wait_for(
            pilot, lambda: "expired" in _text(status), describe=lambda: "the ended sign-in"
        )
        await pilot.pause()
        # Ended: the field takes no more typing, and the letters are the keys the line names.
        assert "m: try mediated" in _text(dialog.query_one("#sign-in-help"))
        assert {"d", "b", "m", "escape"} <= _footer_keys(app)
        await pilot.press("m")
        await wait_for(
            pilot,
            lambda: (
                dialog.query("#sign-in-field-0")
                and not dialog.query_one("#sign-in-field-0", Input).disabled
            ),
            describe=lambda: "a fresh form",
        )
        await pilot.press("escape")


@pytest.mark.parametrize("size", SIZES)
async def test_direct_step_names_the_page_once_and_copies_the_whole_link(setup, size, monkeypatch):
    monkeypatch.setattr(flows, "_open_in_browser", lambda url: False)
    setup.auth.name = "Juniper Outfitters"
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=size) as pilot:
        dialog = await _dialog(pilot, app, setup.company.id, "direct", ready="#sign-in-paste")
        await pilot.pause()
        text = "\n".join(_text(w) for w in dialog.query(Static))
        assert "Juniper Outfitters' sign-in page" in text and "Outfitters's" not in text
        assert dialog.query_one("#sign-in-dialog").region.right <= size[0]
        for selector in ("#sign-in-status", "#sign-in-help"):
            assert _on_screen(dialog, selector), selector
        assert "c: copy the link" in _text(dialog.query_one("#sign-in-help"))
        await pilot.press("c")
        assert app.clipboard == dialog.link and dialog.link.startswith(setup.auth.base_url)
        await pilot.press("escape")
