"""The sign-in dialog driven with Pilot against the spec-written authorization server: each kind,
the Companies screen's keys and column, and the function other screens push it with."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
from textual.widgets import DataTable, Input, Static

from poppy_tui.agent.signin import flows
from poppy_tui.ui.app import PoppyApp
from poppy_tui.ui.screens.signin import SignInScreen, open_sign_in, sign_in

from spec_auth_server import USER
from tests.ui.ui_sample import screen_up, wait_for

SIZE = (120, 50)


def _text(screen) -> str:
    return "\n".join(str(w.render()) for w in screen.query(Static))


def _companies_row(app) -> list[str]:
    table = app.screen.query_one("#companies-table", DataTable)
    return [str(c) for c in table.get_row_at(0)]


async def test_mediated_sign_in_from_the_companies_screen_masks_the_secret(setup):
    setup.auth.mediated_needs_code = True
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: app.screen.query("#companies-table") and app.screen.companies,
            describe=lambda: "companies",
        )
        assert "no" in _companies_row(app)
        await pilot.press("s")
        dialog = await screen_up(pilot, SignInScreen, describe=lambda: "the dialog")
        assert "Juniper Outfitters" in _text(dialog) and setup.auth.domain in _text(dialog)
        await pilot.press("m")
        await wait_for(
            pilot, lambda: dialog.query("#sign-in-field-1"), describe=lambda: "the fields"
        )
        assert f"Sent once to Juniper Outfitters at {setup.auth.domain}" in _text(dialog)
        email, password = (
            dialog.query_one("#sign-in-field-0", Input),
            dialog.query_one("#sign-in-field-1", Input),
        )
        assert not email.password and password.password  # the secret field is masked
        await pilot.press(*USER["email"])
        await pilot.press("enter")
        await pilot.press(*USER["password"])
        assert USER["password"] not in _text(dialog)
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: dialog.query("#sign-in-code-input"), describe=lambda: "the code step"
        )
        assert "Enter the code we sent" in _text(dialog)
        assert all(
            not w.value for w in dialog.query(".sign-in-field").results(Input)
        )  # nothing kept
        await pilot.press(*USER["code"], "enter")
        await wait_for(
            pilot,
            lambda: not isinstance(app.screen, SignInScreen),
            describe=lambda: "the dialog closing",
        )
        await wait_for(
            pilot,
            lambda: "yes" in _companies_row(app),
            describe=lambda: "the Signed in column (yes below 160 columns)",
        )


async def test_device_sign_in_shows_name_domain_link_code_and_qr(setup):
    app = PoppyApp(setup.agent, initial_screen="companies")
    results: list[bool] = []
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: app.screen.query("#companies-table") and app.screen.companies,
            describe=lambda: "companies",
        )
        open_sign_in(app, setup.company.id, ["poppy:read"], results.append, kind="device")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SignInScreen) and app.screen.query("#sign-in-code"),
            describe=lambda: "code",
        )
        dialog = app.screen
        text = _text(dialog)
        link = str(dialog.query_one("#sign-in-link", Static).render())
        assert link.startswith(f"{setup.auth.base_url}/device?user_code=")
        assert "Juniper Outfitters" in text and setup.auth.domain in text
        assert dialog.flow.user_code in str(dialog.query_one("#sign-in-code", Static).render())
        assert "█" in str(dialog.query_one("#sign-in-qr", Static).render())
        user_code = parse_qs(urlsplit(link).query)["user_code"][0]
        async with httpx.AsyncClient(trust_env=False) as browser:
            await browser.post(link.split("?")[0], data=setup.auth.approve_device_form(user_code))
        await wait_for(pilot, lambda: results, timeout=20, describe=lambda: "the sign-in to finish")
    assert results == [True]
    assert setup.signins.covers(setup.company, ["poppy:read"])


async def test_device_link_outside_the_company_is_not_shown(setup):
    setup.auth.verification_host = "https://evil.example"
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=SIZE) as pilot:
        open_sign_in(app, setup.company.id, kind="device")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SignInScreen) and app.screen.query("#sign-in-code"),
            describe=lambda: "code",
        )
        assert not app.screen.query("#sign-in-link") and not app.screen.query("#sign-in-qr")
        assert "evil.example" not in _text(app.screen)
        assert "outside its own domain" in _text(app.screen)
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, SignInScreen), describe=lambda: "cancel"
        )


async def test_direct_sign_in_by_pasting_the_redirect_and_the_push_function(setup, monkeypatch):
    opened: list[str] = []
    monkeypatch.setattr(flows, "_open_in_browser", lambda url: opened.append(url) or True)
    app = PoppyApp(setup.agent, initial_screen="companies")
    outcome: list[bool] = []
    async with app.run_test(size=SIZE) as pilot:

        async def caller() -> None:
            outcome.append(await sign_in(app, setup.company.id, ["orders"]))

        app.run_worker(caller())
        await screen_up(pilot, SignInScreen, describe=lambda: "the dialog")
        await pilot.press("b")
        await wait_for(
            pilot,
            lambda: opened and app.screen.query("#sign-in-paste"),
            describe=lambda: "the browser",
        )
        url = opened[0]
        async with httpx.AsyncClient(trust_env=False) as browser:
            query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
            answer = await browser.post(
                url.split("?")[0],
                data=query
                | {"email": USER["email"], "password": USER["password"], "decision": "allow"},
            )
        paste = app.screen.query_one("#sign-in-paste", Input)
        paste.focus()
        paste.value = answer.headers["location"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: outcome, describe=lambda: "the sign-in to finish")
    assert outcome == [True]
    assert setup.signins.status(setup.company).scopes == ("orders",)


async def test_issuer_binding_failure_is_shown_and_cancel_returns_false(setup):
    setup.auth.metadata_issuer = setup.auth.issuer + "/"
    app = PoppyApp(setup.agent, initial_screen="companies")
    results: list[bool] = []
    async with app.run_test(size=SIZE) as pilot:
        open_sign_in(app, setup.company.id, on_done=results.append)
        await screen_up(pilot, SignInScreen, describe=lambda: "the dialog")
        await pilot.press("d")
        await wait_for(
            pilot, lambda: "issuer binding" in _text(app.screen), describe=lambda: "the error"
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: results, describe=lambda: "cancel")
    assert results == [False]
    assert not any(s.path == "/oauth/device" for s in setup.auth.received)


async def test_sign_out_key_revokes(setup):
    flow = await setup.signins.begin(setup.company, "mediated")
    await flow.submit({"email": USER["email"], "password": USER["password"]})
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: app.screen.query("#companies-table") and app.screen.companies,
            describe=lambda: "companies",
        )
        await pilot.press("o")
        await wait_for(pilot, lambda: setup.auth.revoked_tokens, describe=lambda: "revocation")
        await wait_for(pilot, lambda: "no" in _companies_row(app), describe=lambda: "the column")
    assert setup.signins.status(setup.company) is None


async def test_hostile_company_text_in_the_dialog_stays_text(setup):
    setup.auth.name = "Juniper [@click=app.quit]\x1b[2J"
    setup.auth.user_code = "12\x1b]52;c;aGk=\x07[b]34"
    await setup.agent.add_company(setup.auth.base_url)  # the new name
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=SIZE) as pilot:
        open_sign_in(app, setup.company.id, kind="device")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SignInScreen) and app.screen.query("#sign-in-code"),
            describe=lambda: "code",
        )
        text = _text(app.screen)
        assert "[@click=app.quit]" in text and "\\x1b" in text and "\x1b" not in text
        assert "\\x1b]52" in str(app.screen.query_one("#sign-in-code", Static).render())
        await pilot.click("#sign-in-title")  # returns once the screen has handled the click
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, SignInScreen)
        await pilot.press("escape")


async def test_a_refused_mediated_sign_in_says_why_and_can_be_tried_again(setup):
    app = PoppyApp(setup.agent, initial_screen="companies")
    async with app.run_test(size=SIZE) as pilot:
        open_sign_in(app, setup.company.id, kind="mediated")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SignInScreen) and app.screen.query("#sign-in-field-1"),
            describe=lambda: "form",
        )
        dialog = app.screen
        await pilot.press(*USER["email"], "enter", *"wrong-password", "enter")
        await wait_for(
            pilot,
            lambda: "wrong email or password" in _text(dialog),
            describe=lambda: "the refusal",
        )
        assert dialog.query_one("#sign-in-status", Static).has_class("-error")
        # A fresh form comes with the reason, its first field focused: no key to press first.
        await wait_for(
            pilot,
            lambda: (
                dialog.query("#sign-in-field-0")
                and dialog.focused is dialog.query_one("#sign-in-field-0", Input)
            ),
            describe=lambda: "a fresh form",
        )
        await pilot.press(*USER["email"], "enter", *USER["password"], "enter")
        await wait_for(
            pilot, lambda: not isinstance(app.screen, SignInScreen), describe=lambda: "signed in"
        )
    assert setup.signins.status(setup.company).kind == "mediated"
